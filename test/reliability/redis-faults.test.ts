/**
 * Redis misbehaving under a worker and a producer (issue 22), each on a redis-server of the
 * test's own: busy with a long script, its connections killed, stalled (DEBUG SLEEP, CLIENT
 * PAUSE), its memory full. Jobs that ran are never failed for it, a push lands once or is
 * reported, and a reservation is never cut short by a stall.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue, connectRedis } from '../../src/redis/index.js';
import { Worker } from '../../src/worker/index.js';
import { startOwnRedis } from '../helpers/redis.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A redis-server of this test's own, an admin client on it, and its URL; all gone after the test. */
async function ownServer(args: string[] = []): Promise<{ url: string; admin: Redis; port: number }> {
  const server = await startOwnRedis(args);
  const admin = new Redis(server.port, '127.0.0.1');
  admin.on('error', () => undefined);
  cleanups.push(() => {
    admin.disconnect();
    server.stop();
  });
  return { url: `redis://127.0.0.1:${server.port}`, admin, port: server.port };
}

function client(url: string) {
  const made = connectRedis({ url, log: () => undefined });
  cleanups.push(() => made.disconnect());
  return made;
}

function job(className: string, n: number, extra: Record<string, unknown> = {}): string {
  return buildPayload(buildJob({ className, properties: { n, ...extra } }), { maxTries: 0 }).raw;
}

/** Holds Redis in one script for `seconds` (a read-only loop), as a long `find` used to. */
const BUSY_SCRIPT = `local t = redis.call('TIME') local start = t[1] + t[2] / 1e6
  while true do local now = redis.call('TIME') if now[1] + now[2] / 1e6 - start > tonumber(ARGV[1]) then return 1 end end`;

describe('Redis busy with a long script (BUSY replies) while a worker on another queue finishes jobs', () => {
  it('no job that ran is failed; each runs once; the queue ends empty', async () => {
    const { url, admin } = await ownServer(['--busy-reply-threshold', '100']);
    const queue = new RedisQueue(client(url), { defaultQueue: 'other' });
    const JOBS = 40;
    await queue.bulkRaw(Array.from({ length: JOBS }, (_, n) => job('App\\Jobs\\Work', n)));
    const runs = new Map<number, number>();
    const failed: string[] = [];
    const worker = new Worker(
      queue,
      {
        'App\\Jobs\\Work': async (j) => {
          runs.set(Number(j.command.n), (runs.get(Number(j.command.n)) ?? 0) + 1);
          await pause(100);
        },
      },
      { queues: ['other'], sleep: 0.05, concurrency: 8, tries: 1, memory: 0 },
      { failer: false, onFailed: (info, error) => void failed.push(`${info.uuid}: ${(error as Error)?.message}`), log: () => undefined },
    );
    const running = worker.run();
    await pause(150);
    // Another client holds Redis for 1.5 s: past the threshold every command is answered BUSY.
    const busy = admin.eval(BUSY_SCRIPT, 0, 1.5);
    await busy;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && ((await queue.size()) > 0 || runs.size < JOBS)) await pause(100);
    worker.stop();
    await running;
    expect(failed, 'jobs that ran, failed for a BUSY reply').toEqual([]);
    expect([...runs].filter(([, times]) => times !== 1), 'jobs run other than once ([n, runs])').toEqual([]);
    expect(runs.size, 'jobs that ran').toBe(JOBS);
    expect(await queue.size(), 'jobs left in the queue').toBe(0);
  }, 60_000);
});
