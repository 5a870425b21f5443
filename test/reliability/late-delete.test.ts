/**
 * A finished job's delete that reaches Redis late (issue 42): Redis pauses (CLIENT PAUSE) with a
 * reserve of the worker's already sent, the jobs in hand finish during the pause, and their
 * deletes queue up behind that reserve. When Redis wakes, the reserve runs first, finds those
 * reservations run out (retry_after 4, pause 6 s) and moves the jobs back to the list. Each on a
 * redis-server of the test's own, the stall placed exactly there (not left to a lucky race): the
 * test's queue pauses Redis just before its worker sends that reserve, and only then lets the
 * jobs in hand finish.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue, connectRedis } from '../../src/redis/index.js';
import type { RedisJob } from '../../src/redis/RedisJob.js';
import { Worker, type WorkerEvent } from '../../src/worker/index.js';
import { ownRedisWithAdmin } from '../helpers/redis.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The queue, as the worker uses it, with one reserve held back: the `stallAt`-th reserve is sent
 * only once Redis is paused for `ms`, and `sent` is called once it is on its way (the jobs in
 * hand are let finish then, so their deletes queue up behind it).
 */
class StalledReserve extends RedisQueue {
  reserves = 0;
  stall: { at: number; admin: Redis; ms: number; sent: () => void } | undefined;

  override async popMany(queue: string | undefined, count: number): Promise<RedisJob[]> {
    const stall = this.stall;
    if (!stall || ++this.reserves !== stall.at) return super.popMany(queue, count);
    await stall.admin.call('CLIENT', 'PAUSE', String(stall.ms));
    const reply = super.popMany(queue, count);
    // On its way before any delete of the jobs in hand: those are sent from now on.
    setTimeout(stall.sent, 200);
    return reply;
  }
}

function job(n: number): string {
  return buildPayload(buildJob({ className: 'App\\Jobs\\Work', properties: { n } }), { maxTries: 0 }).raw;
}

interface StalledRun {
  runs: Map<number, number>;
  lines: WorkerEvent[];
  queue: StalledReserve;
  admin: Redis;
}

/**
 * A worker (concurrency 4: it reserves two jobs, then sends a reserve for two more at once) on
 * `jobs` jobs, retry_after 4. Jobs 0 and 1, the first two, wait until the second reserve is sent
 * into a 6 s CLIENT PAUSE; then they finish, their deletes behind it. Runs until every job has
 * run and the queue is empty, and a retry_after longer, by which a copy put back would have run.
 */
async function stalledRun(jobs: number): Promise<StalledRun> {
  const { url, admin } = await ownRedisWithAdmin(cleanups);
  const client = connectRedis({ url, log: () => undefined });
  cleanups.push(() => client.disconnect());
  const queue = new StalledReserve(client, { defaultQueue: 'late', retryAfter: 4 });
  await queue.bulkRaw(Array.from({ length: jobs }, (_, n) => job(n)));
  let letFinish!: () => void;
  const finishing = new Promise<void>((resolve) => (letFinish = resolve));
  queue.stall = { at: 2, admin, ms: 6000, sent: letFinish };
  const runs = new Map<number, number>();
  const lines: WorkerEvent[] = [];
  const worker = new Worker(
    queue,
    {
      'App\\Jobs\\Work': async (j) => {
        const n = Number(j.command.n);
        runs.set(n, (runs.get(n) ?? 0) + 1);
        if (n < 2) await finishing;
      },
    },
    // No watchdog thread: its connection of its own could renew the reservations in hand
    // before the held-back reserve runs, and the stall would prove nothing.
    { queues: ['late'], sleep: 0.05, concurrency: 4, tries: 0, timeout: 3, memory: 0, watchdog: false },
    { failer: false, log: (event) => void lines.push(event) },
  );
  const running = worker.run();
  cleanups.push(async () => {
    void worker.stop();
    await running;
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && ((await queue.size()) > 0 || runs.size < jobs)) await pause(100);
  // A copy put back on the list comes round at once; one in the delayed zset within retry_after.
  await pause(4500);
  while (Date.now() < deadline && (await queue.size()) > 0) await pause(100);
  return { runs, lines, queue, admin };
}

const ranTwice = (runs: Map<number, number>) => [...runs].filter(([, times]) => times !== 1);

describe('CLIENT PAUSE 6000 with a reserve sent and jobs finishing behind it (retry_after 4)', () => {
  it('a long queue: the late deletes take the copies expiry put back off the list; no job runs twice', async () => {
    const JOBS = 40;
    const { runs, queue, admin } = await stalledRun(JOBS);
    expect(ranTwice(runs), 'jobs run other than once ([n, runs])').toEqual([]);
    expect(runs.size, 'jobs that ran').toBe(JOBS);
    expect(queue.lateDeletes, 'late deletes (jobs 0 and 1, found back on the list)').toEqual({ late: 2, gone: 0 });
    expect(await admin.llen('queues:late:notify'), 'notify entries left with the list empty').toBe(0);
  }, 90_000);

  it('a short queue: the reserve takes the copies itself, and the worker deletes them instead of running them', async () => {
    const { runs, lines, queue } = await stalledRun(2);
    expect(ranTwice(runs), 'jobs run other than once ([n, runs])').toEqual([]);
    const copies = lines.filter(
      (line) => line.event === 'warning' && /a copy of a job this worker has run came back/.test(line.reason ?? ''),
    );
    expect(
      copies.map((line) => line.attempts),
      'the lines saying a copy was deleted, not run (by its attempt)',
    ).toEqual([2, 2]);
    expect(queue.lateDeletes, 'late deletes (the copies were taken by the reserve: found nowhere)').toEqual({ late: 0, gone: 2 });
    expect(await queue.size(), 'jobs left in the queue').toBe(0);
  }, 90_000);
});

describe('a release after the reservation ran out and expiry put the job back', () => {
  it('adds no second copy, and the worker says so in one line', async () => {
    const { url, admin } = await ownRedisWithAdmin(cleanups);
    const client = connectRedis({ url, log: () => undefined });
    cleanups.push(() => client.disconnect());
    const queue = new RedisQueue(client, { defaultQueue: 'late', retryAfter: 90 });
    await queue.pushRaw(job(1));
    const lines: WorkerEvent[] = [];
    const worker = new Worker(
      queue,
      {
        'App\\Jobs\\Work': async (j) => {
          // As a stall does: the reservation runs out, and a migration puts the job back.
          const [member] = await admin.zrange('queues:late:reserved', 0, -1);
          await admin.zadd('queues:late:reserved', 'XX', 1, member!);
          await queue.migrate();
          await j.release(30);
        },
      },
      { queues: ['late'], once: true, tries: 0, memory: 0 },
      { failer: false, log: (event) => void lines.push(event) },
    );
    await worker.run();
    const said = lines.filter((line) => line.event === 'warning' && /not released/.test(line.reason ?? ''));
    expect(
      said.map((line) => line.reason),
      'the lines saying the job was not put back a second time',
    ).toHaveLength(1);
    expect(await admin.zcard('queues:late:delayed'), 'copies the release put in the delayed zset').toBe(0);
    expect(await admin.llen('queues:late'), 'copies on the list (the one expiry put back)').toBe(1);
  }, 30_000);
});
