/**
 * The driver's effect on Redis against Laravel 8.83's own RedisQueue: each step is run by
 * Node under one prefix and by Laravel (php-fixture-gen/laravel-redis-op.php) under another,
 * from the same starting state, and everything under the two prefixes must be the same
 * (zset scores, which are clock readings, within a second).
 */
import { execFileSync } from 'node:child_process';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RedisQueue, type RedisClient } from '../../src/redis/index.js';
import { debianPayloads } from '../helpers/laravel.js';
import { root } from '../helpers/php.js';
import { dump, prefixedClient, rawClient, removePrefix, uniquePrefix, type Dump } from '../helpers/redis.js';

const raw = rawClient();
const QUEUE = 'mail{x}';
const payloads = debianPayloads()
  .filter((r) => ['job/unicode', 'job/models', 'listener/model', 'encrypted/cbc', 'job/cjson-numbers'].includes(r.name!))
  .map((r) => r.payload);

function laravel(prefix: string, op: string, args: string[] = [], input = '', env: Record<string, string> = {}): string {
  return execFileSync('php', [`${root}php-fixture-gen/laravel-redis-op.php`, op, ...args], {
    input,
    encoding: 'utf8',
    env: { ...process.env, REDIS_PREFIX: prefix, QUEUE_NAME: QUEUE, ...env },
  });
}

let nodePrefix: string;
let phpPrefix: string;
let client: RedisClient;
let queue: RedisQueue;

beforeEach(() => {
  nodePrefix = uniquePrefix('node');
  phpPrefix = uniquePrefix('php');
  client = prefixedClient(nodePrefix);
  queue = new RedisQueue(client, { defaultQueue: QUEUE });
});

afterEach(async () => {
  await queue.close();
  client.disconnect();
  await removePrefix(raw, nodePrefix);
  await removePrefix(raw, phpPrefix);
});

afterAll(() => raw.disconnect());

/** Both prefixes hold the same keys and values; zset scores may differ by the clock's tick. */
/** `seconds`: how far apart the two sides' scores may be (the time between their steps, on a loaded machine). */
async function expectSameState(seconds = 1): Promise<Dump> {
  const ours = await dump(raw, nodePrefix);
  const theirs = await dump(raw, phpPrefix);
  expect(Object.keys(ours)).toEqual(Object.keys(theirs));
  for (const [key, value] of Object.entries(ours)) {
    const other = theirs[key]!;
    if (Array.isArray(value) && Array.isArray(value[0])) {
      // Members of equal score sort by bytes, so a clock tick between two steps can reorder
      // them: compare the zsets as sets of members, each score within `seconds`.
      const byMember = (pairs: [string, number][]) => [...pairs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const ours = byMember(value as [string, number][]);
      const theirs = byMember(other as [string, number][]);
      expect(
        ours.map(([m]) => m),
        key,
      ).toEqual(theirs.map(([m]) => m));
      ours.forEach(([, score], i) => expect(Math.abs(score - theirs[i]![1]), key).toBeLessThanOrEqual(seconds));
    } else expect(value, key).toEqual(other);
  }
  return ours;
}

/** The same setup under both prefixes, written directly. */
async function seed(setup: (prefix: string) => Promise<unknown>): Promise<void> {
  await setup(nodePrefix);
  await setup(phpPrefix);
}

describe('each step has the effect Laravel’s has', () => {
  it('push', async () => {
    for (const payload of payloads) {
      await queue.pushRaw(payload);
      laravel(phpPrefix, 'push', [], payload);
    }
    const state = await expectSameState();
    expect(state[`queues:${QUEUE}`]).toEqual(payloads);
    expect(state[`queues:${QUEUE}:notify`]).toHaveLength(payloads.length);
  });

  it('later', async () => {
    await queue.laterRaw(120, payloads[0]!);
    laravel(phpPrefix, 'later', ['120'], payloads[0]);
    await expectSameState();
  });

  it('pop returns the payload and the very reserved string Laravel’s pop writes', async () => {
    for (const payload of payloads) {
      await queue.pushRaw(payload);
      laravel(phpPrefix, 'push', [], payload);
    }
    for (const payload of payloads) {
      const job = await queue.pop();
      const [phpRaw, phpReserved] = JSON.parse(laravel(phpPrefix, 'pop')) as [string, string];
      expect(job!.raw).toBe(payload);
      expect(phpRaw).toBe(payload);
      expect(job!.reserved).toBe(phpReserved);
      expect(job!.attempts()).toBe(1);
    }
    const state = await expectSameState();
    expect(state[`queues:${QUEUE}:reserved`]).toHaveLength(payloads.length);
    expect(await queue.pop()).toBeNull();
    expect(JSON.parse(laravel(phpPrefix, 'pop'))).toEqual([null, null]);
  });

  it('release and delete name the reserved string', async () => {
    for (const payload of payloads.slice(0, 2)) {
      await queue.pushRaw(payload);
      laravel(phpPrefix, 'push', [], payload);
    }
    const first = (await queue.pop())!;
    const second = (await queue.pop())!;
    const [, phpFirst] = JSON.parse(laravel(phpPrefix, 'pop')) as [string, string];
    const [, phpSecond] = JSON.parse(laravel(phpPrefix, 'pop')) as [string, string];
    await queue.release(first, 30);
    laravel(phpPrefix, 'release', ['30'], phpFirst);
    await second.delete();
    laravel(phpPrefix, 'delete', [], phpSecond);
    const state = await expectSameState();
    expect(state[`queues:${QUEUE}:delayed`]).toHaveLength(1);
    expect(state[`queues:${QUEUE}:reserved`]).toBeUndefined();
  });

  it('delete and release send back the reserved bytes exactly, non-ASCII payloads included', async () => {
    expect(payloads.some((payload) => /[^\x00-\x7f]/.test(payload))).toBe(true);
    for (const payload of payloads) {
      await queue.pushRaw(payload);
      laravel(phpPrefix, 'push', [], payload);
    }
    for (const [i, payload] of payloads.entries()) {
      const job = (await queue.pop())!;
      const [, phpReserved] = JSON.parse(laravel(phpPrefix, 'pop')) as [string, string];
      expect(job.raw).toBe(payload);
      if (i % 2 === 0) {
        await job.delete();
        laravel(phpPrefix, 'delete', [], phpReserved);
      } else {
        await queue.release(job, 30);
        laravel(phpPrefix, 'release', ['30'], phpReserved);
      }
    }
    const state = await expectSameState();
    expect(state[`queues:${QUEUE}:reserved`]).toBeUndefined();
    expect(state[`queues:${QUEUE}:delayed`]).toHaveLength(Math.floor(payloads.length / 2));
  });

  it('migrate moves due delayed jobs and expired reservations, in score order, with notify tokens', async () => {
    const now = Math.floor(Date.now() / 1000);
    await seed(async (prefix) => {
      const key = `${prefix}queues:${QUEUE}`;
      await raw.rpush(key, 'already-ready');
      await raw.zadd(`${key}:delayed`, now - 5, payloads[1]!, now - 50, payloads[0]!, now + 500, payloads[2]!);
      await raw.zadd(`${key}:reserved`, now - 1, payloads[3]!, now + 90, payloads[4]!);
    });
    await queue.migrate();
    laravel(phpPrefix, 'migrate');
    const state = await expectSameState();
    expect(state[`queues:${QUEUE}`]).toEqual(['already-ready', payloads[0], payloads[1], payloads[3]]);
    expect(state[`queues:${QUEUE}:notify`]).toHaveLength(3);
  });

  it('with retry_after null, reservations are never given back', async () => {
    const now = Math.floor(Date.now() / 1000);
    await seed((prefix) => raw.zadd(`${prefix}queues:${QUEUE}:reserved`, now - 1000, payloads[0]!));
    const never = new RedisQueue(client, { defaultQueue: QUEUE, retryAfter: null });
    await never.migrate();
    laravel(phpPrefix, 'migrate', [], '', { RETRY_AFTER: 'null' });
    expect((await expectSameState())[`queues:${QUEUE}:reserved`]).toHaveLength(1);
  });

  it('size and clear count ready, delayed and reserved alike', async () => {
    await seed(async (prefix) => {
      const key = `${prefix}queues:${QUEUE}`;
      await raw.rpush(key, 'a', 'b');
      await raw.rpush(`${key}:notify`, 1, 1);
      await raw.zadd(`${key}:delayed`, 1, 'c');
      await raw.zadd(`${key}:reserved`, 1, 'd');
    });
    expect(await queue.size()).toBe(Number(laravel(phpPrefix, 'size')));
    expect(await queue.clear()).toBe(Number(laravel(phpPrefix, 'clear')));
    expect(await expectSameState()).toEqual({});
  });

  it('popMany (migrations and several pops in one step) has the effect of that many of Laravel’s pops', async () => {
    const now = Math.floor(Date.now() / 1000);
    await seed(async (prefix) => {
      const key = `${prefix}queues:${QUEUE}`;
      await raw.rpush(key, payloads[0]!);
      await raw.rpush(`${key}:notify`, 1);
      await raw.zadd(`${key}:delayed`, now - 5, payloads[1]!, now + 500, payloads[2]!);
      await raw.zadd(`${key}:reserved`, now - 1, payloads[3]!);
    });
    const started = Date.now();
    const jobs = await queue.popMany(undefined, 5);
    const theirs = [0, 1, 2, 3, 4]
      .map(() => JSON.parse(laravel(phpPrefix, 'pop')) as [string | null, string | null])
      .filter(([p]) => p !== null);
    expect(jobs.map((j) => [j.raw, j.reserved])).toEqual(theirs);
    expect(jobs).toHaveLength(3);
    // Five PHP processes, one pop each, reserve until their own now + 90: as far after ours as they took.
    await expectSameState(Math.ceil((Date.now() - started) / 1000) + 1);
  });

  it('bulk pushes like that many pushes', async () => {
    await queue.bulkRaw(payloads);
    for (const payload of payloads) laravel(phpPrefix, 'push', [], payload);
    await expectSameState();
  });
});
