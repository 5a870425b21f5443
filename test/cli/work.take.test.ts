/**
 * `lqb work --take 'CLASS=P%'`: the canary share as a user gives it. The start line says it; a
 * share not written CLASS=P%, one beside --no-share, or one of a class with no handler stops the
 * worker before it starts, with the reason (exit 2).
 */
import { describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { takeBucket } from '../../src/queue/take.js';
import { HANDLERS, lqb, scratchPerTest } from '../helpers/processes.js';
import { prefixedClient, rawClient } from '../helpers/redis.js';

const current = scratchPerTest('take', 'canary');
const RECORD = 'App\\Jobs\\Bridge\\RecordJob';

describe('lqb work --take', () => {
  it('runs the share of the class whose buckets are below it, says so at start, and leaves the rest', async () => {
    const client = prefixedClient(current.prefix);
    const pushed = Array.from(
      { length: 200 },
      (_, n) => buildPayload(buildJob({ className: RECORD, properties: { n, label: 'take', ratio: 0.5, items: [] } })).raw,
    );
    await new RedisQueue(client, { retryAfter: 90 }).bulkRaw(pushed, 'canary');
    client.disconnect();
    const worker = await lqb(
      ['work', `--handlers=${HANDLERS}`, '--queue=canary', '--stop-when-empty', '--sleep=0', `--take=${RECORD}=25%`],
      current.s.env,
    );
    expect(worker.status, worker.stderr).toBe(0);
    expect(worker.stderr, 'the start line').toContain(`; of ${RECORD} 25% taken, the rest left for PHP (--take)`);
    const ran = new Set(current.s.nodeRuns().map((r) => r.props.n as number));
    const below = pushed.filter((p) => takeBucket(JSON.parse(p).uuid, undefined)! < 25);
    expect(
      [...ran].sort((a, b) => a - b),
      'the jobs lqb work ran: those whose bucket is below 25',
    ).toEqual(below.map((p) => Number(/"n";i:(\d+);/.exec(JSON.parse(p).data.command)![1])).sort((a, b) => a - b));
    const raw = rawClient();
    expect(await raw.llen(`${current.prefix}queues:canary`), 'jobs left on the queue').toBe(200 - below.length);
    raw.disconnect();
  });

  it.each([
    [[`--take=${RECORD}`], `--take: "${RECORD.replaceAll('\\', '\\\\')}" is not CLASS=PERCENT%`],
    [[`--take=${RECORD}=10%`, '--no-share'], '--take shares a class with PHP, and --no-share takes every job: give one'],
    [[`--take=${RECORD}=10%`, `--take=${RECORD}=20%`], `--take: ${RECORD} is given twice`],
    [['--take=App\\Jobs\\Elsewhere=10%'], '--take: App\\Jobs\\Elsewhere has no handler in'],
  ])('%j is refused before the worker starts', async (flags, reason) => {
    const result = await lqb(['work', `--handlers=${HANDLERS}`, '--queue=canary', '--once', ...flags], current.s.env);
    expect([result.status, result.stderr], 'exit status and reason').toEqual([2, expect.stringContaining(reason)]);
  });
});
