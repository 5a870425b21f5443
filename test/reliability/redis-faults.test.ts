/**
 * Redis misbehaving under a worker and a producer (issue 22), each on a redis-server of the
 * test's own: busy with a long script, its connections killed, stalled (DEBUG SLEEP, CLIENT
 * PAUSE), its memory full. Jobs that ran are never failed for it, a push lands once or is
 * reported, and a reservation is never cut short by a stall.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { connect } from '../../src/connect/index.js';
import { openBoundedClient } from '../../src/connect/clients.js';
import { resolveFromEnv } from '../../src/connect/settings.js';
import { RedisQueue, UnconfirmedCommandError, connectRedis } from '../../src/redis/index.js';
import { bySize } from '../helpers/tier.js';
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
    void worker.stop();
    await running;
    expect(failed, 'jobs that ran, failed for a BUSY reply').toEqual([]);
    expect(
      [...runs].filter(([, times]) => times !== 1),
      'jobs run other than once ([n, runs])',
    ).toEqual([]);
    expect(runs.size, 'jobs that ran').toBe(JOBS);
    expect(await queue.size(), 'jobs left in the queue').toBe(0);
  }, 60_000);
});

/** Redis's own clock, in UNIX seconds. */
async function redisNow(admin: Redis): Promise<number> {
  const [seconds, micros] = await admin.time();
  return Number(seconds) + Number(micros) / 1e6;
}

describe('a reserve sent just before Redis stalls', () => {
  for (const [stall, command] of [
    ['DEBUG SLEEP 3', (admin: Redis) => admin.call('DEBUG', 'SLEEP', '3')],
    ['CLIENT PAUSE 3000', (admin: Redis) => admin.call('CLIENT', 'PAUSE', '3000')],
  ] as const) {
    it(`${stall}: the reservation runs retry_after from when Redis ran the reserve, by its clock`, async () => {
      const { url, admin } = await ownServer(['--enable-debug-command', 'yes']);
      const queue = new RedisQueue(client(url), { defaultQueue: 'stall', retryAfter: 4 });
      await queue.pushRaw(job('App\\Jobs\\Work', 1));
      const stalling = command(admin);
      // The stall reaches Redis first (on a loaded machine a pop sent at once could overtake it on its own connection).
      await pause(300);
      // Sent while Redis sleeps: it runs once the stall is over, about 3 s after it was asked for.
      const popping = queue.pop();
      await stalling;
      const popped = await popping;
      const ranAt = await redisNow(admin);
      expect(popped, 'the reserve sent into the stall took no job').not.toBeNull();
      const until = Number(await admin.zscore('queues:stall:reserved', popped!.reservedBytes));
      // Whole seconds, as Laravel scores a reservation: at least retry_after - 1 from when it ran.
      expect(
        until - ranAt,
        `the reservation ends ${(until - ranAt).toFixed(2)} s after the reserve ran, not retry_after (4 s)`,
      ).toBeGreaterThan(2.9);
    }, 30_000);
  }

  it('DEBUG SLEEP 6 with retry_after 4 under a worker at work: every job runs once', async () => {
    const { url, admin } = await ownServer(['--enable-debug-command', 'yes']);
    const queue = new RedisQueue(client(url), { defaultQueue: 'stall', retryAfter: 4 });
    const JOBS = 60;
    await queue.bulkRaw(Array.from({ length: JOBS }, (_, n) => job('App\\Jobs\\Work', n)));
    const runs = new Map<number, number>();
    const worker = new Worker(
      queue,
      {
        'App\\Jobs\\Work': async (j) => {
          runs.set(Number(j.command.n), (runs.get(Number(j.command.n)) ?? 0) + 1);
          await pause(200);
        },
      },
      { queues: ['stall'], sleep: 0.05, concurrency: 4, tries: 0, memory: 0 },
      { failer: false, log: () => undefined },
    );
    const running = worker.run();
    await pause(800);
    await admin.call('DEBUG', 'SLEEP', '6');
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && ((await queue.size()) > 0 || runs.size < JOBS)) await pause(100);
    // A job taken back by mistake would come round again within retry_after: wait that long too.
    await pause(4500);
    void worker.stop();
    await running;
    expect(
      [...runs].filter(([, times]) => times !== 1),
      'jobs run other than once ([n, runs])',
    ).toEqual([]);
    expect(runs.size, 'jobs that ran').toBe(JOBS);
  }, 60_000);
});

describe('a reserve that finds this worker’s own running job come back (its reservation ran out in a stall)', () => {
  it('restores the running reservation instead of running the job twice', async () => {
    const { url, admin } = await ownServer();
    const queue = new RedisQueue(client(url), { defaultQueue: 'own', retryAfter: 60 });
    await queue.pushRaw(job('App\\Jobs\\Work', 1));
    const running = await queue.pop();
    expect(running, 'no job to run').not.toBeNull();
    // As a stall does: the reservation of the job in hand runs out.
    await admin.zadd('queues:own:reserved', 'XX', 1, running!.reservedBytes);
    const again = await queue.pop();
    expect(again?.uuid, 'the running job was reserved a second time').toBeUndefined();
    const reserved = await admin.zrange('queues:own:reserved', 0, -1, 'WITHSCORES');
    expect(reserved[0], 'the reservation in the zset is not the running job’s').toBe(running!.reserved);
    expect(Number(reserved[1]) - (await redisNow(admin)), 'the restored reservation was not renewed to retry_after').toBeGreaterThan(58);
    expect(await admin.llen('queues:own'), 'jobs left on the list').toBe(0);
  });
});

describe('Redis full (maxmemory, noeviction) while jobs run', () => {
  it('renewals still extend the reservations, and each job runs once', async () => {
    const { url, admin } = await ownServer(['--maxmemory-policy', 'noeviction']);
    const queue = new RedisQueue(client(url), { defaultQueue: 'full', retryAfter: 2 });
    const JOBS = 4;
    await queue.bulkRaw(Array.from({ length: JOBS }, (_, n) => job('App\\Jobs\\Work', n)));
    const runs = new Map<number, number>();
    const worker = new Worker(
      queue,
      {
        'App\\Jobs\\Work': async (j) => {
          runs.set(Number(j.command.n), (runs.get(Number(j.command.n)) ?? 0) + 1);
          await pause(7000);
        },
      },
      { queues: ['full'], sleep: 0.05, concurrency: 8, tries: 0, memory: 0 },
      { failer: false, log: () => undefined },
    );
    const running = worker.run();
    while (runs.size < JOBS) await pause(20);
    // Redis full: a few MB of data, and maxmemory set a MB below what it uses.
    for (let i = 0; i < 40; i++) await admin.set(`filler:${i}`, 'x'.repeat(64 * 1024));
    const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
    await admin.config('SET', 'maxmemory', String(used - 1024 * 1024));
    const refused = await admin.set('one-more', 'x').then(
      () => 'accepted',
      (error: Error) => error.message,
    );
    expect(refused, 'Redis did not refuse a write').toMatch(/^OOM/);
    // Twice retry_after, full all along: every reservation must have been renewed meanwhile.
    await pause(4000);
    const now = await redisNow(admin);
    const scores = (await admin.zrange('queues:full:reserved', 0, -1, 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number);
    expect(
      scores.filter((score) => score <= now),
      'reservations that ran out while Redis was full',
    ).toEqual([]);
    expect(scores, 'reservations').toHaveLength(JOBS);
    await admin.config('SET', 'maxmemory', '0');
    while (runs.size < JOBS || (await queue.size()) > 0) await pause(100);
    await pause(2500);
    void worker.stop();
    await running;
    expect(
      [...runs].filter(([, times]) => times !== 1),
      'jobs run other than once ([n, runs])',
    ).toEqual([]);
  }, 60_000);
});

describe('a reserve of huge jobs', () => {
  it('takes jobs up to the byte cap (one at least), not a whole batch of them in one call', async () => {
    const { url, admin } = await ownServer();
    const queue = new RedisQueue(client(url), { defaultQueue: 'big', retryAfter: 60 });
    const big = (n: number) => job('App\\Jobs\\Big', n, { blob: 'b'.repeat(5 * 1024 * 1024) });
    await queue.bulkRaw([big(1), big(2), big(3), big(4)]);
    await admin.config('SET', 'slowlog-log-slower-than', '0');
    await admin.call('SLOWLOG', 'RESET');
    const first = await queue.popMany('big', 64);
    const entries = (await admin.call('SLOWLOG', 'GET', '10')) as [number, number, number, string[]][];
    const reserveMs = Math.max(...entries.filter(([, , , args]) => /^eval(sha)?$/i.test(args[0]!)).map(([, , micros]) => micros / 1000));
    // 5 MB each against a cap of 8 MB: the second one crosses it, and no third is taken.
    expect(first, 'jobs one reserve took').toHaveLength(2);
    const rest = await queue.popMany('big', 64);
    expect(rest, 'jobs the second reserve took').toHaveLength(2);
    process.stdout.write(`a reserve of two 5 MB jobs held Redis ${reserveMs} ms\n`);
  }, 60_000);
});

describe('a producer whose connection is killed while a command is out', () => {
  it('settles the command at once with an error saying its outcome is unknown (it is not sent again)', async () => {
    const { url, admin } = await ownServer();
    const settings = resolveFromEnv({ redis: url, prefix: 'p:' }, undefined);
    const producer = await openBoundedClient(settings, url, { connectTimeout: 2000, commandTimeout: 60_000, reconnect: true });
    cleanups.push(() => producer.disconnect());
    const started = Date.now();
    const waiting = producer.blpop('nothing-comes', 30).then(
      () => 'answered',
      (error: Error) => error,
    );
    await pause(100);
    await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    const outcome = await waiting;
    expect(outcome, 'the command in flight when its connection dropped').toBeInstanceOf(UnconfirmedCommandError);
    expect(Date.now() - started, 'ms before it settled').toBeLessThan(5000);
  });
});

const KILL_SECONDS = bySize(6, 25);

describe(`dispatch while CLIENT KILL drops every connection each 100 ms, for ${KILL_SECONDS} s`, () => {
  it('each acknowledged push is queued exactly once, no uuid twice, every other one reported', async () => {
    const { url, admin } = await ownServer();
    const queue = await connect({ redis: url, prefix: 'p:', defaultQueue: 'once', commandTimeout: 60_000, telemetry: false });
    cleanups.push(() => queue.close());
    const acknowledged: string[] = [];
    const reported: string[] = [];
    let killing = true;
    const killer = (async () => {
      while (killing) {
        await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes').catch(() => undefined);
        await pause(100);
      }
    })();
    const until = Date.now() + KILL_SECONDS * 1000;
    const producer = async (lane: number) => {
      for (let n = 0; Date.now() < until; n++) {
        try {
          const pushed = await queue.dispatch('App\\Jobs\\Tick', { lane, n });
          acknowledged.push(pushed.uuid!);
        } catch (error) {
          reported.push((error as Error).message);
        }
      }
    };
    await Promise.all([0, 1, 2, 3].map(producer));
    killing = false;
    await killer;
    const counts = new Map<string, number>();
    for (const payload of await admin.lrange('p:queues:once', 0, -1)) {
      const uuid = JSON.parse(payload).uuid as string;
      counts.set(uuid, (counts.get(uuid) ?? 0) + 1);
    }
    process.stdout.write(
      `${acknowledged.length} pushes acknowledged, ${reported.length} reported as failed, ${counts.size} distinct uuids queued\n`,
    );
    expect(
      [...counts].filter(([, times]) => times > 1),
      'uuids queued more than once ([uuid, times])',
    ).toEqual([]);
    expect(
      acknowledged.filter((uuid) => counts.get(uuid) !== 1),
      'acknowledged pushes not queued exactly once',
    ).toEqual([]);
    expect(
      reported.filter((message) => !/pushed/.test(message)),
      'failures that do not say whether the job was pushed',
    ).toEqual([]);
    expect(acknowledged.length, 'pushes acknowledged').toBeGreaterThan(100);
  }, 120_000);
});

describe('a reserve whose reply comes back late (Redis stalled)', () => {
  it('renews the jobs in hand at once, by Redis’s clock', async () => {
    const { url, admin } = await ownServer(['--enable-debug-command', 'yes']);
    const queue = new RedisQueue(client(url), { defaultQueue: 'late', retryAfter: 30 });
    await queue.pushRaw(job('App\\Jobs\\Work', 1));
    const inHand = await queue.pop();
    const before = Number(await admin.zscore('queues:late:reserved', inHand!.reservedBytes));
    const stalling = admin.call('DEBUG', 'SLEEP', '2');
    const popping = queue.pop();
    await stalling;
    expect(await popping, 'a job the late reserve took').toBeNull();
    const after = Number(await admin.zscore('queues:late:reserved', inHand!.reservedBytes));
    const now = await redisNow(admin);
    expect(after - before, 'the reservation in hand was not renewed after the late reply').toBeGreaterThan(1);
    expect(after - now, 'the renewed reservation does not run retry_after from Redis’s now').toBeGreaterThan(29);
  }, 30_000);
});
