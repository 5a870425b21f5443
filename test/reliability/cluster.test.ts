/**
 * Redis Cluster: three masters with a replica each, on loopback ports made for this test.
 * Queues named with a hash tag ({emails}) keep all four of their keys in one slot, so every
 * atomic step works through ioredis Cluster, from the library and from `lqb`; Laravel
 * (phpredis's RedisCluster) shares such a queue with Node; and a master killed mid-run, its
 * replica promoted, loses no job.
 */
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue, connectRedis, type RedisClient } from '../../src/redis/index.js';
import { Worker } from '../../src/worker/index.js';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { HANDLERS, UNSHAPED_ONLY, lqb, php, scratch, type Scratch } from '../helpers/processes.js';

const QUEUE = '{emails}';
let cluster: TestCluster;
let s: Scratch;
let client: RedisClient;
let queue: RedisQueue;

const job = (n: number) =>
  buildPayload(buildJob({ className: 'App\\Jobs\\Bridge\\RecordJob', properties: { n, label: 'cluster', ratio: 0.5, items: [] } })).raw;

beforeAll(async () => {
  cluster = await startCluster();
  s = scratch('lqbc:', QUEUE);
  s.env.REDIS_CLUSTER = cluster.nodes.join(',');
  client = connectRedis({ cluster: cluster.nodes, prefix: 'lqbc:', log: () => undefined });
  queue = new RedisQueue(client, { defaultQueue: QUEUE, retryAfter: 2 });
}, 60_000);

afterAll(async () => {
  await queue?.close();
  client?.disconnect();
  await cluster?.stop();
  s?.remove();
});

describe('a queue with a hash tag on Redis Cluster', () => {
  it('push, later, reserve, release, delete, migrate, size and clear all work', async () => {
    await queue.pushRaw(job(1));
    await queue.bulkRaw([job(2), job(3)]);
    await queue.laterRaw(new Date(Date.now() - 2000), job(4));
    expect(await queue.size()).toBe(4);
    const jobs = await queue.popMany(undefined, 10);
    expect(jobs.map((j) => j.attempts())).toEqual([1, 1, 1, 1]);
    expect(await queue.reservedSize()).toBe(4);
    await jobs[0]!.release(0);
    await jobs[1]!.delete();
    await jobs[2]!.giveBack(0);
    await queue.migrate();
    expect(await queue.readySize()).toBe(2);
    const single = await queue.pop();
    expect(single).not.toBeNull();
    expect(await queue.clear()).toBe(3);
    expect(await queue.size()).toBe(0);
  });

  it('a queue without a hash tag lives under queues:{NAME}, as Laravel 13.5+ keys it, and every step works', async () => {
    const plain = new RedisQueue(client, { defaultQueue: 'plain', retryAfter: 2 });
    expect(plain.key()).toBe('queues:{plain}');
    await plain.pushRaw(job(1));
    await plain.laterRaw(new Date(Date.now() - 2000), job(2));
    const jobs = await plain.popMany(undefined, 10);
    expect(jobs).toHaveLength(2);
    expect(await (client as Cluster).exists('queues:{plain}:reserved')).toBe(1);
    await jobs[0]!.release(0);
    await jobs[1]!.delete();
    await plain.migrate();
    expect(await plain.readySize()).toBe(1);
    expect(await plain.clear()).toBe(1);
  });

  it('lqb dispatch and lqb work run through the cluster', async () => {
    const dispatched = await lqb(
      ['dispatch', 'App\\Jobs\\Bridge\\RecordJob', `--queue=${QUEUE}`, '--props={"n":9,"label":"via lqb","ratio":1.5,"items":[]}'],
      s.env,
    );
    expect(dispatched.stderr, 'what lqb dispatch RecordJob said on standard error').toBe(UNSHAPED_ONLY('App\\Jobs\\Bridge\\RecordJob'));
    const worked = await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env);
    expect(worked.status).toBe(0);
    expect(s.nodeRuns().map((r) => r.props.label)).toContain('via lqb');
  });

  it('Laravel (phpredis RedisCluster) and Node share the queue: every job runs once', async () => {
    const before = s.nodeRuns().length;
    const pushed = await php(
      'laravel-dispatch.php',
      ['record', JSON.stringify({ n: 1000, count: 300, label: 'shared', ratio: 0.5, items: [], queue: QUEUE })],
      s.env,
    );
    expect(pushed.stderr).toBe('');
    const flags = ['--stop-when-empty', '--sleep=0', `--queue=${QUEUE}`];
    const [node, laravel] = await Promise.all([
      lqb(['work', `--handlers=${HANDLERS}`, ...flags], s.env),
      php('laravel-worker.php', flags, s.env),
    ]);
    expect(node.status).toBe(0);
    expect(laravel.status).toBe(0);
    const runs = [...s.nodeRuns().slice(before), ...s.phpRuns()].filter((r) => r.props.label === 'shared');
    expect(runs).toHaveLength(300);
    expect(new Set(runs.map((r) => r.uuid)).size).toBe(300);
    expect(s.phpRuns().length).toBeGreaterThan(0);
  });

  it('a master killed mid-run, its replica promoted: no acknowledged job is lost', async () => {
    const JOBS = 400;
    await queue.bulkRaw(Array.from({ length: JOBS }, (_, n) => job(5000 + n)));
    // Redis replicates asynchronously: an acknowledged write is safe from a failover once a
    // replica has it. WAIT on each master's connection (the one the pushes went through)
    // returns when that is so.
    for (const node of (client as Cluster).nodes('master')) expect(Number(await node.call('WAIT', '1', '10000'))).toBeGreaterThanOrEqual(1);
    const seen = new Set<number>();
    const worker = new Worker(
      queue,
      {
        'App\\Jobs\\Bridge\\RecordJob': async (j) => {
          seen.add(Number(j.command.n));
          await new Promise((r) => setTimeout(r, 5));
        },
      },
      { queues: [QUEUE], sleep: 0.1, concurrency: 4 },
      { failer: false },
    );
    const running = worker.run();
    while (seen.size < 100) await new Promise((r) => setTimeout(r, 20));
    await cluster.killMasterOf(`lqbc:queues:${QUEUE}`);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && [...Array(JOBS).keys()].some((n) => !seen.has(5000 + n))) await new Promise((r) => setTimeout(r, 100));
    void worker.stop();
    await running;
    expect([...Array(JOBS).keys()].filter((n) => !seen.has(5000 + n))).toEqual([]);
  }, 120_000);
});
