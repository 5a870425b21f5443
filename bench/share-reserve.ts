/**
 * Issue 44's reserve with share on, measured on a redis-server of the bench's own (or REDIS_URL,
 * under a prefix of its own; SLOWLOG's threshold is set for the run and put back).
 *
 * behind: PHP_JOBS PHP-looking jobs (~1.1 KB, a class Node has no handler for) ahead of NODE_JOBS
 *   Node jobs, no PHP worker running. A library worker with default options (share on) runs until
 *   the Node jobs have run: how long they waited (from the worker's start to the last one's
 *   handler), and the longest Redis step while it ran (SLOWLOG). Two candidates, alternated round
 *   by round: `filter`, this issue's reserve (takes only handled classes), and `give-back`, the
 *   path before it (the same worker on a queue whose reserve ignores the classes: it pops every
 *   job and gives back each one with no handler, share delay 1 s).
 * cost: a Node-only queue of COST_JOBS no-op jobs, one worker at CONCURRENCY, share on (`filter`)
 *   against `--no-share` (Laravel's pop): jobs/s, Redis's CPU per job (INFO cpu), longest step.
 *
 *   npx tsx bench/share-reserve.ts      ROUNDS=3 PHP_JOBS=100000 NODE_JOBS=10 COST_JOBS=20000 CONCURRENCY=1 MODE=behind,cost
 */
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { buildJob, buildPayload } from '../src/laravel/index.js';
import { RedisQueue, connectRedis, type RedisClient } from '../src/redis/index.js';
import { startRedisServer } from '../src/testing/index.js';
import { Worker } from '../src/worker/index.js';
import { redisCpuSeconds } from './redis-target.js';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PHP_JOBS = Number(process.env.PHP_JOBS ?? 100_000);
const NODE_JOBS = Number(process.env.NODE_JOBS ?? 10);
const COST_JOBS = Number(process.env.COST_JOBS ?? 20_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 1);
const MODES = (process.env.MODE ?? 'behind,cost').split(',');
const NODE = 'App\\Jobs\\Moved';
const PHP = 'App\\Jobs\\StillPhp';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A payload as Laravel 8 pushes it, about 1.1 KB (the size Laravel's own figures use). */
function template(className: string): string {
  return buildPayload(buildJob({ className, properties: { n: 1, note: 'x'.repeat(560) }, serializesModels: false })).raw;
}

/** `count` copies of a template, each with a uuid of its own (the template's uuid replaced). */
function copies(raw: string, count: number): string[] {
  const uuid = (JSON.parse(raw) as { uuid: string }).uuid;
  return Array.from({ length: count }, () => raw.replace(uuid, randomUUID()));
}

interface Target {
  admin: Redis;
  client: RedisClient;
  prefix: string;
  done(): Promise<void>;
}

async function target(): Promise<Target> {
  const prefix = `lqb-bench-share-${randomUUID().slice(0, 8)}:`;
  if (process.env.REDIS_URL) {
    const admin = new Redis(process.env.REDIS_URL);
    const client = connectRedis({ url: process.env.REDIS_URL, prefix, log: () => undefined });
    return {
      admin,
      client,
      prefix,
      done: async () => {
        const keys = await admin.keys(`${prefix}*`);
        if (keys.length) await admin.del(...keys);
        client.disconnect();
        admin.disconnect();
      },
    };
  }
  const server = await startRedisServer();
  const admin = new Redis(server.port, '127.0.0.1');
  const client = connectRedis({ url: `redis://127.0.0.1:${server.port}`, prefix, log: () => undefined });
  return {
    admin,
    client,
    prefix,
    done: async () => {
      client.disconnect();
      admin.disconnect();
      server.stop();
    },
  };
}

/** The reserve before this issue: the same queue, its reserve told no classes (it pops the head). */
function ignoringClasses(queue: RedisQueue): RedisQueue {
  return new Proxy(queue, {
    get(target, key, receiver) {
      if (key === 'popMany') return (name: string | undefined, count: number) => target.popMany(name, count);
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The longest step SLOWLOG holds, in ms, and the log emptied (so a long run never overflows it). */
async function takeLongest(admin: Redis): Promise<number> {
  const entries = (await admin.call('SLOWLOG', 'GET', '-1')) as [number, number, number, string[]][];
  await admin.call('SLOWLOG', 'RESET');
  return entries.reduce((longest, [, , micros]) => Math.max(longest, micros / 1000), 0);
}

/**
 * Runs a round with SLOWLOG logging every step over 50 µs (shorter ones cannot be the longest that
 * matters), read and emptied every 200 ms; the server's settings are put back after.
 */
async function withSlowlog<T>(admin: Redis, run: () => Promise<T>): Promise<T & { longestMs: number }> {
  const [, was] = (await admin.config('GET', 'slowlog-log-slower-than')) as [string, string];
  const [, len] = (await admin.config('GET', 'slowlog-max-len')) as [string, string];
  await admin.config('SET', 'slowlog-log-slower-than', '50');
  await admin.config('SET', 'slowlog-max-len', '100000');
  await admin.call('SLOWLOG', 'RESET');
  let longestMs = 0;
  let reading = true;
  const reader = (async () => {
    while (reading) {
      longestMs = Math.max(longestMs, await takeLongest(admin));
      await pause(200);
    }
  })();
  try {
    const result = await run();
    reading = false;
    await reader;
    return { ...result, longestMs: Math.max(longestMs, await takeLongest(admin)) };
  } finally {
    reading = false;
    await admin.config('SET', 'slowlog-log-slower-than', was);
    await admin.config('SET', 'slowlog-max-len', len);
  }
}

/** Redis's CPU time so far (user and system), in µs. */
async function redisCpu(admin: Redis): Promise<number> {
  return (await redisCpuSeconds(admin)) * 1e6;
}

type Candidate = 'filter' | 'give-back' | 'no-share';

/** One round of `behind`: how long the Node jobs behind PHP_JOBS waited, and the longest step. */
async function behindRound(how: Candidate): Promise<{ waitMs: number; longestMs: number; redisMs: number }> {
  const t = await target();
  try {
    const queue = new RedisQueue(t.client, { defaultQueue: 'behind' });
    const php = copies(template(PHP), PHP_JOBS);
    for (let i = 0; i < php.length; i += 1000) await queue.bulkRaw(php.slice(i, i + 1000));
    await queue.bulkRaw(copies(template(NODE), NODE_JOBS));
    let ran = 0;
    let lastAt = 0;
    const worker = new Worker(
      how === 'give-back' ? ignoringClasses(queue) : queue,
      {
        [NODE]: async () => {
          ran++;
          lastAt = performance.now();
        },
      },
      { queues: ['behind'], sleep: 0.05, concurrency: CONCURRENCY, memory: 0 },
      { failer: false, log: () => undefined },
    );
    const cpuBefore = await redisCpu(t.admin);
    return await withSlowlog(t.admin, async () => {
      const started = performance.now();
      const running = worker.run();
      const deadline = Date.now() + 600_000;
      while (ran < NODE_JOBS && Date.now() < deadline) await pause(5);
      await worker.stop();
      await running;
      if (ran < NODE_JOBS) throw new Error(`${how}: only ${ran} of ${NODE_JOBS} Node jobs ran within 600 s`);
      return { waitMs: lastAt - started, redisMs: ((await redisCpu(t.admin)) - cpuBefore) / 1000 };
    });
  } finally {
    await t.done();
  }
}

/** One round of `cost`: a Node-only queue run dry, share on against --no-share. */
async function costRound(how: Candidate): Promise<{ perSecond: number; redisUsPerJob: number; longestMs: number }> {
  const t = await target();
  try {
    const queue = new RedisQueue(t.client, { defaultQueue: 'cost' });
    const jobs = copies(template(NODE), COST_JOBS);
    for (let i = 0; i < jobs.length; i += 1000) await queue.bulkRaw(jobs.slice(i, i + 1000));
    const worker = new Worker(
      queue,
      { [NODE]: async () => undefined },
      { queues: ['cost'], sleep: 0.05, concurrency: CONCURRENCY, memory: 0, stopWhenEmpty: true, share: how !== 'no-share' },
      { failer: false, log: () => undefined },
    );
    const cpuBefore = await redisCpu(t.admin);
    return await withSlowlog(t.admin, async () => {
      const started = performance.now();
      await worker.run();
      const seconds = (performance.now() - started) / 1000;
      const left = await queue.size();
      if (left !== 0) throw new Error(`${how}: ${left} jobs left`);
      return { perSecond: COST_JOBS / seconds, redisUsPerJob: ((await redisCpu(t.admin)) - cpuBefore) / COST_JOBS };
    });
  } finally {
    await t.done();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const f = (n: number, digits = 1) => n.toFixed(digits);

async function main(): Promise<void> {
  console.log(
    `share-reserve: ${process.env.REDIS_URL ?? 'a redis-server of its own'}, ROUNDS=${ROUNDS} PHP_JOBS=${PHP_JOBS} NODE_JOBS=${NODE_JOBS} COST_JOBS=${COST_JOBS} CONCURRENCY=${CONCURRENCY}, payload ${template(PHP).length} bytes`,
  );
  if (MODES.includes('behind')) {
    const waits: Record<string, number[]> = { filter: [], 'give-back': [] };
    const steps: Record<string, number[]> = { filter: [], 'give-back': [] };
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternated: which candidate goes first changes round by round.
      const order: Candidate[] = round % 2 ? ['filter', 'give-back'] : ['give-back', 'filter'];
      const results: Record<string, { waitMs: number; longestMs: number; redisMs: number }> = {};
      for (const how of order) results[how] = await behindRound(how);
      for (const how of order) {
        waits[how]!.push(results[how]!.waitMs);
        steps[how]!.push(results[how]!.longestMs);
      }
      const a = results.filter!;
      const b = results['give-back']!;
      console.log(
        `behind round ${round}: ${NODE_JOBS} Node jobs behind ${PHP_JOBS} PHP jobs waited ${f(a.waitMs, 0)} ms with the filter (longest step ${f(a.longestMs, 2)} ms, Redis CPU ${f(a.redisMs, 0)} ms) and ${f(b.waitMs, 0)} ms popping and giving back (longest step ${f(b.longestMs, 2)} ms, Redis CPU ${f(b.redisMs, 0)} ms): give-back/filter wait ${f(b.waitMs / a.waitMs, 1)}x`,
      );
    }
    console.log(
      `behind medians: wait ${f(median(waits.filter!), 0)} ms (filter) vs ${f(median(waits['give-back']!), 0)} ms (give-back); longest step ${f(median(steps.filter!), 2)} vs ${f(median(steps['give-back']!), 2)} ms`,
    );
  }
  if (MODES.includes('cost')) {
    const ratios: number[] = [];
    const cpu: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const order: Candidate[] = round % 2 ? ['filter', 'no-share'] : ['no-share', 'filter'];
      const results: Record<string, { perSecond: number; redisUsPerJob: number; longestMs: number }> = {};
      for (const how of order) results[how] = await costRound(how);
      const a = results.filter!;
      const b = results['no-share']!;
      ratios.push(a.perSecond / b.perSecond);
      cpu.push(a.redisUsPerJob / b.redisUsPerJob);
      console.log(
        `cost round ${round}: ${COST_JOBS} Node-only jobs, share on ${f(a.perSecond, 0)} jobs/s (Redis ${f(a.redisUsPerJob, 1)} µs/job, longest step ${f(a.longestMs, 2)} ms), --no-share ${f(b.perSecond, 0)} jobs/s (Redis ${f(b.redisUsPerJob, 1)} µs/job, longest step ${f(b.longestMs, 2)} ms): share/no-share jobs/s ${f(a.perSecond / b.perSecond, 3)}, Redis CPU ${f(a.redisUsPerJob / b.redisUsPerJob, 3)}`,
      );
    }
    console.log(`cost medians: share on / --no-share jobs/s ${f(median(ratios), 3)}, Redis CPU per job ${f(median(cpu), 3)}`);
  }
}

await main();
