/**
 * LaravelQueue.dispatch on real Redis: the envelope's tries, backoff and timeout, a delay in
 * seconds scored in the delayed set, a built command; with the class shapes `lqb shapes` reads
 * from php-fixture-gen/shapes-app, a ShouldBeUnique job's lock taken as PendingDispatch takes it.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type LaravelQueue } from '../../src/connect/index.js';
import { buildJob, decodePayload } from '../../src/laravel/index.js';
import { root } from '../helpers/php.js';
import { lqb, scratch, type Scratch } from '../helpers/processes.js';
import { REDIS_URL, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const prefix = uniquePrefix('connect-dispatch');
const s: Scratch = scratch(prefix, 'q');
let queue: LaravelQueue;
let shapesFile: string;

beforeAll(async () => {
  shapesFile = join(s.dir, 'lqb-shapes.json');
  const made = await lqb(['shapes', `--app=${join(root, 'php-fixture-gen/shapes-app')}`, `--out=${shapesFile}`], s.env);
  expect(made.status, made.stderr).toBe(0);
  queue = await connect({ redis: REDIS_URL, prefix, failedDb: join(s.dir, 'failed.sqlite') });
});

afterAll(async () => {
  await queue?.close();
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  s.remove();
});

describe('dispatch', () => {
  it('writes tries, backoff and timeout into the envelope; a delay in seconds is scored in the delayed set', async () => {
    const before = Math.floor(Date.now() / 1000);
    const pushed = await queue.dispatch('App\\Jobs\\Later', { n: 1 }, { queue: 'q', delay: 30, tries: 3, backoff: [1, 5], timeout: 20 });
    const raw = rawClient();
    const [member, score] = await raw.zrange(`${prefix}queues:q:delayed`, 0, -1, 'WITHSCORES');
    raw.disconnect();
    expect(score !== undefined && Number(score) - before, 'the job is not scored 30 s from now').toBeGreaterThanOrEqual(30);
    const decoded = decodePayload(member!);
    expect(decoded.envelope, 'the envelope does not carry what dispatch was given').toMatchObject({ uuid: pushed.uuid, id: pushed.id, maxTries: 3, backoff: '1,5', timeout: 20 });
    expect(await queue.size('q'), 'size() does not count the delayed job').toBe(1);
  });

  it('takes a command built with buildJob, onto the connection’s default queue', async () => {
    const command = buildJob({ className: 'App\\Jobs\\Built', properties: { id: 7 } });
    const pushed = await queue.dispatch(command);
    expect(pushed.queue, 'a built command went elsewhere than the default queue').toBe('default');
    expect(await queue.size(), 'the built command is not in the default queue').toBe(1);
    await expect(queue.dispatch(command, { id: 8 }), 'props beside a built command were taken').rejects.toThrow(/built command/);
  });

  it('with shapes, a ShouldBeUnique job takes its lock: a duplicate is not pushed and says which lock is held', async () => {
    const first = await queue.dispatch('App\\Jobs\\ImportFeed', { feed: 'news' }, { queue: 'unique', shapes: shapesFile });
    expect(first.uuid, 'the first dispatch was not pushed').toEqual(expect.any(String));
    const second = await queue.dispatch('App\\Jobs\\ImportFeed', { feed: 'news' }, { queue: 'unique', shapes: shapesFile });
    expect(second, 'the duplicate was not refused').toEqual({ uuid: null, id: null, queue: 'unique', duplicate: true, lockKey: 'laravel_unique_job:App\\Jobs\\ImportFeed' });
    expect(await queue.size('unique'), 'the duplicate was pushed').toBe(1);
  });
});
