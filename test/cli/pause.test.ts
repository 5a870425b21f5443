/**
 * lqb pause / resume and lqb work beside the pause switches Laravel 12.40+ keeps in its cache
 * (`illuminate:queue:paused:{connection}:{queue}`, 13.25+'s `illuminate:queues:paused`), written
 * and read here by PHP through Laravel's own RedisStore (8.83's, whose format 12.x keeps).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { PauseWatch, QueueCache, phpTruthy } from '../../src/worker/index.js';
import { parseQueueArgument } from '../../src/cli/pause.js';
import { HANDLERS, lqb, php, scratchPerTest } from '../helpers/processes.js';
import { prefixedClient, rawClient } from '../helpers/redis.js';

const current = scratchPerTest('pause', 'bridge');
const job = (n: number) =>
  buildPayload(buildJob({ className: 'App\\Jobs\\Bridge\\RecordJob', properties: { n, label: 'pause', ratio: 0.5, items: [] } })).raw;

async function push(queue: string, ...ns: number[]): Promise<void> {
  const client = prefixedClient(current.prefix);
  for (const n of ns) await new RedisQueue(client).pushRaw(job(n), queue);
  client.disconnect();
}
const laravel = async (kind: string, options: object = {}) => {
  const result = await php('laravel-dispatch.php', [kind, JSON.stringify(options)], current.s.env);
  expect(result.stderr).toBe('');
  return result.stdout.trim();
};
const work = () => lqb(['work', `--handlers=${HANDLERS}`, '--queue=bridge,other', '--stop-when-empty', '--sleep=0'], current.s.env);
const ran = () => current.s.nodeRuns().map((r) => `${r.queue}:${r.props.n}`);

describe('lqb work and queue:pause', () => {
  it('skips a queue Laravel paused, runs the others, and runs it once lqb resume lifts the switch', async () => {
    await push('bridge', 1, 2);
    await push('other', 3);
    await laravel('pause', { connection: 'redis', queue: 'bridge' });
    expect(await laravel('paused', { connection: 'redis', queue: 'bridge' })).toBe('{"paused":true}');

    const first = await work();
    expect(first.status).toBe(0);
    expect(ran()).toEqual(['other:3']);

    const resumed = await lqb(['resume', 'redis:bridge'], current.s.env);
    expect(resumed.stdout.trim()).toBe('Job processing on queue [redis:bridge] has been resumed.');
    expect(await laravel('paused', { connection: 'redis', queue: 'bridge' })).toBe('{"paused":false}');
    await work();
    expect(ran()).toEqual(['other:3', 'bridge:1', 'bridge:2']);
  });

  it('lqb pause writes what Laravel reads as paused; another connection’s switch is not ours; --all pauses every queue', async () => {
    const paused = await lqb(['pause', 'bridge'], current.s.env);
    expect(paused.status).toBe(0);
    expect(paused.stdout.trim()).toBe('Job processing on queue [redis:bridge] has been paused.');
    expect(await laravel('paused', { connection: 'redis', queue: 'bridge' })).toBe('{"paused":true}');
    expect(await laravel('paused', { connection: 'redis', queue: 'other' })).toBe('{"paused":false}');
    await lqb(['resume', 'bridge'], current.s.env);

    // A switch for the database connection's queue of the same name leaves lqb work's (redis) alone.
    await laravel('pause', { connection: 'database', queue: 'bridge' });
    await push('bridge', 1);
    await work();
    expect(ran()).toEqual(['bridge:1']);

    const all = await lqb(['pause', '--all'], current.s.env);
    expect(all.stdout.trim()).toBe('Job processing on all queues across all connections has been paused.');
    expect(await laravel('paused', { connection: 'redis', queue: 'anything' })).toBe('{"paused":true}');
    await push('bridge', 2);
    await push('other', 3);
    await work();
    expect(ran()).toEqual(['bridge:1']);
    await lqb(['resume', '--all'], current.s.env);
    await work();
    expect(ran()).toEqual(['bridge:1', 'bridge:2', 'other:3']);
  });

  it('--all on an app below 13.25 (as vendor/composer/installed.json beside its .env says) is refused, naming why, and writes no switch', async () => {
    const app = join(current.s.dir, 'app12');
    mkdirSync(join(app, 'vendor/composer'), { recursive: true });
    // What Composer 2 writes of the framework's version, the one field read.
    writeFileSync(
      join(app, 'vendor/composer/installed.json'),
      JSON.stringify({ packages: [{ name: 'laravel/framework', version: 'v12.67.0' }] }),
    );
    writeFileSync(join(app, '.env'), 'APP_NAME=Bridge\n');
    const refused = await lqb(['pause', '--all', `--env=${join(app, '.env')}`], current.s.env);
    expect([refused.status, refused.stdout], 'lqb pause --all on a 12.67 app: status and standard output').toEqual([1, '']);
    expect(refused.stderr.trim().split('\n'), 'its one line').toEqual([
      expect.stringMatching(
        /^lqb pause: --all was not paused: Laravel v12\.67\.0's workers read no --all switch \(Queue::pauseAll came in 13\.25\).*lqb pause QUEUE/,
      ),
    ]);
    expect(await laravel('paused', { connection: 'redis', queue: 'anything' }), 'the --all switch after the refusal').toBe(
      '{"paused":false}',
    );
    // What the app runs (its installed.json) is the answer: a --laravel beside it does not outdate it.
    const flagged = await lqb(['pause', '--all', '--laravel=13.26.1', `--env=${join(app, '.env')}`], current.s.env);
    expect(
      [flagged.status, flagged.stderr.trim()],
      'lqb pause --all --laravel=13.26.1 beside a 12.67 installed.json: status and standard error',
    ).toEqual([1, expect.stringMatching(/^lqb pause: --all was not paused: Laravel v12\.67\.0's workers read no --all switch/)]);
    expect(await laravel('paused', { connection: 'redis', queue: 'anything' }), 'the --all switch after --laravel beside the app').toBe(
      '{"paused":false}',
    );

    const resumed = await lqb(['resume', '--all', '--laravel=12.67.0'], current.s.env);
    expect(resumed.status, 'lqb resume --all --laravel=12.67.0').toBe(1);
    const on13 = await lqb(['pause', '--all', '--laravel=13.26.1'], current.s.env);
    expect([on13.status, on13.stderr], 'lqb pause --all --laravel=13.26.1: status and standard error').toEqual([0, '']);
    await lqb(['resume', '--all', '--laravel=13.26.1'], current.s.env);
  });

  it('a queue paused on an app below 12.40 is paused for lqb work, and the line says PHP’s workers read no switch', async () => {
    const paused = await lqb(['pause', 'bridge', '--laravel=11.45.0'], current.s.env);
    expect(paused.status, paused.stderr).toBe(0);
    expect(paused.stdout.trim()).toBe('Job processing on queue [redis:bridge] has been paused.');
    expect(paused.stderr.trim(), 'what lqb pause says of an 11.45 app').toMatch(
      /^lqb pause: Laravel 11\.45\.0's workers read no pause switch \(queue:pause came in 12\.40\): PHP's workers go on taking this queue's jobs; only lqb work stops$/,
    );
    const on12 = await lqb(['resume', 'bridge', '--laravel=12.40.0'], current.s.env);
    expect([on12.status, on12.stderr], 'lqb resume bridge --laravel=12.40.0: status and standard error').toEqual([0, '']);
  });

  it('a usage error without a queue or with too much, as artisan says it', async () => {
    const none = await lqb(['pause'], current.s.env);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/A queue name is required unless the --all option is used/);
    expect((await lqb(['resume', 'a', 'b'], current.s.env)).status).toBe(2);
    expect((await lqb(['pause', 'a', '--all'], current.s.env)).status).toBe(2);
  });
});

describe('the pause switch, read', () => {
  it('[CONNECTION:]QUEUE splits at the first colon; the queue defaults to default', () => {
    expect(parseQueueArgument('redis:emails')).toEqual(['redis', 'emails']);
    expect(parseQueueArgument('emails')).toEqual(['redis', 'emails']);
    expect(parseQueueArgument('redis:')).toEqual(['redis', 'default']);
    expect(parseQueueArgument('sqs:a:b')).toEqual(['sqs', 'a:b']);
  });

  it('as PHP’s (bool) of the cached value', () => {
    for (const stored of ['b:1;', '1', 's:3:"yes";', 'a:1:{i:0;i:1;}', 'O:8:"stdClass":0:{}', 'd:0.5;'])
      expect(phpTruthy(stored), stored).toBe(true);
    for (const stored of [null, 'b:0;', '0', 'i:0;', 's:0:"";', 's:1:"0";', 'N;', 'a:0:{}', 'd:0;'])
      expect(phpTruthy(stored), String(stored)).toBe(false);
  });

  it('at most once a second by the worker', async () => {
    const client = rawClient();
    const cache = new QueueCache(client, `${current.prefix}laravel_cache`);
    let now = 10_000;
    const watch = new PauseWatch(cache, 'redis', ['bridge'], () => now);
    expect(watch.fresh(), 'the pauses before any read').toBeUndefined();
    expect([...(await watch.paused())]).toEqual([]);
    expect(watch.fresh() && [...watch.fresh()!], 'the pauses just read, answered without a round trip').toEqual([]);
    await cache.pause('redis', 'bridge');
    now += 999;
    expect([...(await watch.paused())]).toEqual([]);
    now += 1;
    expect(watch.fresh(), 'the pauses read a second ago').toBeUndefined();
    expect([...(await watch.paused())]).toEqual(['bridge']);
    await cache.pause('redis', 'bridge', 1);
    expect(await client.ttl(`${current.prefix}laravel_cache:illuminate:queue:paused:redis:bridge`)).toBe(1);
    client.disconnect();
  });
});
