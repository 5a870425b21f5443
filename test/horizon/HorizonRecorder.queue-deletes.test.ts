/**
 * A queue's deletes carrying Horizon's completions, when Redis may refuse the records: the jobs
 * that ran must still leave `:reserved` (never to run again for their records), and records not
 * written must be told.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { HorizonRecorder } from '../../src/horizon/index.js';
import { RedisQueue, connectRedis } from '../../src/redis/index.js';
import { startOwnRedis } from '../helpers/redis.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const payload = (id: string) => JSON.stringify({ uuid: id, id, displayName: 'App\\Jobs\\X', attempts: 0, tags: [] });

/** A Redis of the test's own, a queue on it with Horizon's records, and two jobs reserved. */
async function twoReserved(args: string[] = []) {
  const server = await startOwnRedis(args);
  const admin = new Redis(server.port, '127.0.0.1');
  const queueClient = connectRedis({ url: `redis://127.0.0.1:${server.port}`, prefix: 'app_database_', log: () => undefined });
  const horizonClient = connectRedis({ url: `redis://127.0.0.1:${server.port}`, log: () => undefined });
  cleanups.push(() => {
    admin.disconnect();
    queueClient.disconnect();
    horizonClient.disconnect();
    server.stop();
  });
  const recorder = new HorizonRecorder(horizonClient, { prefix: 'app_horizon:' });
  const told: string[] = [];
  recorder.onRecordError((error) => told.push((error as Error).message));
  const queue = new RedisQueue(queueClient, { retryAfter: 90, horizon: recorder.queueRecords() });
  for (const id of ['j-1', 'j-2']) {
    await queue.pushRaw(payload(id));
    await recorder.pushed('default', payload(id));
  }
  const taken = await queue.popMany('default', 2);
  expect(taken.length, 'jobs reserved').toBe(2);
  return { admin, queue, taken, told };
}

describe("a queue's deletes with Horizon's records", () => {
  it('go through on a full Redis (noeviction), the records written or their failure told', async () => {
    const { admin, queue, taken, told } = await twoReserved(['--maxmemory-policy', 'noeviction']);
    // Redis full: maxmemory set a MB below what it uses.
    for (let i = 0; i < 40; i++) await admin.set(`filler:${i}`, 'x'.repeat(64 * 1024));
    const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
    await admin.config('SET', 'maxmemory', String(used - 1024 * 1024));
    expect(await admin.set('one-more', 'x').catch((error: Error) => error.message), 'Redis did not refuse a write').toMatch(/^OOM/);
    await Promise.all([queue.deleteReserved(taken[0]!, { runtimeMs: 1 }), queue.deleteReserved(taken[1]!, { failing: true })]);
    await admin.config('SET', 'maxmemory', '0');
    expect(await admin.zcard('app_database_queues:default:reserved'), 'jobs left reserved').toBe(0);
    const status = await admin.hget('app_horizon:j-1', 'status');
    expect({ status, told }, 'j-1: its completion written, or its failure told').toSatisfy(
      ({ status, told }: { status: string | null; told: string[] }) => status === 'completed' || told.length === 1,
    );
  }, 30_000);

  it('late (the reservations ran out and were moved back): take the copies off the list, and complete only those', async () => {
    const { admin, queue, taken, told } = await twoReserved();
    // As a stall does: both reservations run out and a reserve moves them back to the list; then
    // another worker takes j-2's copy before the deletes arrive.
    for (const job of taken) await admin.zadd('app_database_queues:default:reserved', 'XX', 1, job.reservedBytes);
    await queue.migrate('default');
    const key = 'app_database_queues:default';
    expect(await admin.lrange(key, 0, -1), 'the list after the migration').toEqual(taken.map((job) => job.reserved));
    await admin.lrem(key, 1, taken[1]!.reserved);
    await admin.lpop(`${key}:notify`);
    await Promise.all(taken.map((job) => queue.deleteReserved(job, { runtimeMs: 1 })));
    expect(await admin.llen(key), 'copies left on the list').toBe(0);
    expect(await admin.llen(`${key}:notify`), 'notify entries left').toBe(0);
    expect(await admin.hget('app_horizon:j-1', 'status'), 'j-1 (its copy taken off the list by the late delete)').toBe('completed');
    expect(await admin.hget('app_horizon:j-2', 'status'), 'j-2 (its copy taken by another worker: that run completes it)').toBe('pending');
    expect(told, 'records’ failures told').toEqual([]);
  }, 30_000);

  it('still delete every job when the records fail partway, and tell it once', async () => {
    const { admin, queue, taken, told } = await twoReserved();
    // j-1's record is not a hash: the step stops at its completion, before j-2's delete.
    await admin.del('app_horizon:j-1');
    await admin.set('app_horizon:j-1', 'not a hash');
    await Promise.all([queue.deleteReserved(taken[0]!, { runtimeMs: 1 }), queue.deleteReserved(taken[1]!, { failing: true })]);
    expect(await admin.zcard('app_database_queues:default:reserved'), 'jobs left reserved').toBe(0);
    expect(told, 'the records’ failures told').toHaveLength(1);
    expect(told[0], 'the records’ failure').toMatch(/WRONGTYPE/);
  }, 30_000);
});
