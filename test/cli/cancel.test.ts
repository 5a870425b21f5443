/**
 * lqb cancel UUID [--queue=Q]: a job real Laravel 8.83 delayed (RedisQueue::later, into
 * `:delayed`) is removed before it is due; a ready one, or one not there, is refused (exit 1),
 * and the queue is left as it was.
 */
import { describe, expect, it } from 'vitest';
import { lqb, php, scratchPerTest } from '../helpers/processes.js';
import { rawClient } from '../helpers/redis.js';

const current = scratchPerTest('cancel', 'bridge');

async function laravel(options: object): Promise<{ uuid: string }> {
  const result = await php(
    'laravel-dispatch.php',
    ['record', JSON.stringify({ label: 'cancel', ratio: 0.5, items: [], flag: true, ...options })],
    current.s.env,
  );
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout.trim().split('\n')[0]!);
}

describe('lqb cancel', () => {
  it('removes a delayed job Laravel pushed, and only that one', async () => {
    const doomed = await laravel({ n: 1, delay: 600, queue: 'mail' });
    const kept = await laravel({ n: 2, delay: 600, queue: 'mail' });
    const result = await lqb(['cancel', doomed.uuid, '--queue=mail'], current.s.env);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(`The delayed job [${doomed.uuid}] on queue [mail] has been cancelled.`);
    const raw = rawClient();
    const left = (await raw.zrange(`${current.prefix}queues:mail:delayed`, 0, -1)).map((payload) => JSON.parse(payload).uuid);
    raw.disconnect();
    expect(left, 'queues:mail:delayed after the cancel').toEqual([kept.uuid]);
  });

  it('refuses a job that is ready already, and one that is not there (exit 1), changing nothing', async () => {
    const ready = await laravel({ n: 3 });
    const refused = await lqb(['cancel', ready.uuid, '--queue=bridge'], current.s.env);
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim()).toBe(`lqb cancel: no delayed job [${ready.uuid}] on queue [bridge]: the job is ready already`);
    const raw = rawClient();
    expect(await raw.llen(`${current.prefix}queues:bridge`), 'queues:bridge keeps the ready job').toBe(1);
    raw.disconnect();
    const missing = await lqb(['cancel', '00000000-0000-0000-0000-000000000000'], current.s.env);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/no job of that uuid is on it/);
    expect((await lqb(['cancel'], current.s.env)).status, 'no UUID: a usage error').toBe(2);
  });
});
