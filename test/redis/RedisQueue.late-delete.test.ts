/**
 * A delete or a release that reaches Redis after the job's reservation ran out (issue 42): the
 * reservation is moved back to the list by Laravel 8.83's own migrate (php-fixture-gen/
 * laravel-redis-op.php), which appends the reserved string as it is, with a notify entry. Our
 * delete then takes that copy off the list with one notify entry, and our release adds no second
 * copy; Laravel's own worker (pop) then finds only the other jobs.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RedisQueue, type RedisClient } from '../../src/redis/index.js';
import type { RedisJob } from '../../src/redis/RedisJob.js';
import { debianPayloads } from '../helpers/laravel.js';
import { root } from '../helpers/php.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const raw = rawClient();
const QUEUE = 'late';
const payloads = debianPayloads()
  .filter((r) => ['job/unicode', 'job/models', 'listener/model', 'job/cjson-numbers'].includes(r.name!))
  .map((r) => r.payload);

function laravel(op: string, args: string[] = [], input = ''): string {
  return execFileSync('php', [`${root}php-fixture-gen/laravel-redis-op.php`, op, ...args], {
    input,
    encoding: 'utf8',
    env: { ...process.env, REDIS_PREFIX: prefix, QUEUE_NAME: QUEUE },
  });
}

let prefix: string;
let client: RedisClient;
let queue: RedisQueue;

beforeEach(() => {
  prefix = uniquePrefix('late');
  client = prefixedClient(prefix);
  queue = new RedisQueue(client, { defaultQueue: QUEUE, retryAfter: 90 });
});

afterEach(async () => {
  await queue.close();
  client.disconnect();
  await removePrefix(raw, prefix);
});

afterAll(() => raw.disconnect());

const key = (suffix = '') => `${prefix}queues:${QUEUE}${suffix}`;

/**
 * Pushes the payloads with Laravel, reserves the first with our queue, lets its reservation run
 * out and has Laravel's migrate move it back (then pushes `after` more with Laravel).
 */
async function reservedThenExpired(after: string[] = []): Promise<RedisJob> {
  for (const payload of payloads.slice(0, 2)) laravel('push', [], payload);
  const job = (await queue.pop())!;
  expect(job, 'the job our queue reserved').not.toBeNull();
  // As a stall does: the reservation's time passes before the delete comes.
  await raw.zadd(key(':reserved'), 'XX', 1, job.reservedBytes);
  laravel('migrate');
  for (const payload of after) laravel('push', [], payload);
  return job;
}

describe('a delete that comes after the reservation ran out', () => {
  it('finds on the list, byte for byte, the reserved string Laravel’s migrate moved back', async () => {
    const job = await reservedThenExpired();
    expect(await raw.lrange(key(), 0, -1), 'the list after Laravel’s migrate').toEqual([payloads[1], job.reserved]);
    expect(await raw.llen(key(':notify')), 'notify entries after Laravel’s migrate').toBe(2);
  });

  it('takes that copy off the list with one notify entry, so Laravel’s pop never finds it', async () => {
    const job = await reservedThenExpired(payloads.slice(2, 3));
    await job.delete();
    expect(await raw.lrange(key(), 0, -1), 'the list after the late delete').toEqual([payloads[1], payloads[2]]);
    expect(await raw.llen(key(':notify')), 'notify entries after the late delete (one per job on the list)').toBe(2);
    expect(await raw.zcard(key(':reserved')), 'reservations left').toBe(0);
    expect(queue.lateDeletes, 'the late deletes counted').toEqual({ late: 1, gone: 0 });
    const popped = [1, 2, 3].map(() => (JSON.parse(laravel('pop')) as [string | null, string | null])[0]);
    expect(popped, 'what Laravel’s worker pops after the late delete').toEqual([payloads[1], payloads[2], null]);
  });

  it('takes one copy only, from the tail, when the same string is on the list twice', async () => {
    const job = await reservedThenExpired();
    await raw.rpush(key(), job.reserved);
    await raw.rpush(key(':notify'), 1);
    await job.delete();
    expect(await raw.lrange(key(), 0, -1), 'the list after the late delete').toEqual([payloads[1], job.reserved]);
    expect(await raw.llen(key(':notify')), 'notify entries after the late delete').toBe(2);
  });

  it('removes nothing else when a worker took the copy already, and counts it as gone', async () => {
    const job = await reservedThenExpired();
    // Laravel's worker takes the next two: the other job, then the copy (attempt 2).
    laravel('pop');
    const [copy, copyReserved] = JSON.parse(laravel('pop')) as [string, string];
    expect(copy, 'the copy Laravel’s worker took').toBe(job.reserved);
    await job.delete();
    expect(await raw.zrange(key(':reserved'), 0, -1), 'reservations after the late delete').toContain(copyReserved);
    expect(await raw.llen(key()), 'jobs on the list').toBe(0);
    expect(queue.lateDeletes, 'the late deletes counted').toEqual({ late: 0, gone: 1 });
  });

  it('a delete in time removes the reservation and leaves the list and notify alone', async () => {
    for (const payload of payloads.slice(0, 3)) laravel('push', [], payload);
    const job = (await queue.pop())!;
    await job.delete();
    expect(await raw.zcard(key(':reserved')), 'reservations left').toBe(0);
    expect(await raw.lrange(key(), 0, -1), 'the list').toEqual(payloads.slice(1, 3));
    expect(await raw.llen(key(':notify')), 'notify entries').toBe(2);
    expect(queue.lateDeletes, 'the late deletes counted').toEqual({ late: 0, gone: 0 });
  });
});

describe('a release or give-back that comes after the reservation ran out', () => {
  it('release puts no second copy back (resolves false): the one on the list is the job', async () => {
    const job = await reservedThenExpired();
    expect(await queue.release(job, 30), 'what release resolved to').toBe(false);
    expect(await raw.zcard(key(':delayed')), 'delayed copies added by the release').toBe(0);
    expect(await raw.lrange(key(), 0, -1), 'the list').toEqual([payloads[1], job.reserved]);
  });

  it('give-back puts no second copy back (resolves false)', async () => {
    const job = await reservedThenExpired();
    expect(await queue.giveBack(job, 30), 'what giveBack resolved to').toBe(false);
    expect(await raw.zcard(key(':delayed')), 'delayed copies added by the give-back').toBe(0);
    expect(await raw.llen(key()), 'jobs on the list').toBe(2);
  });

  it('a release in time still moves the job to the delayed zset (resolves true)', async () => {
    laravel('push', [], payloads[0]);
    const job = (await queue.pop())!;
    expect(await queue.release(job, 30), 'what release resolved to').toBe(true);
    expect(await raw.zrange(key(':delayed'), 0, -1), 'the delayed zset').toEqual([job.reserved]);
    expect(await raw.zcard(key(':reserved')), 'reservations left').toBe(0);
  });
});
