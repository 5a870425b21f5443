/**
 * Issue 42's shape, counted: a Node worker at work on 1,770 jobs with retry_after 4 while Redis
 * stalls 6 s (CLIENT PAUSE 6000 or DEBUG SLEEP 6), on a redis-server of its own. Deletes sent
 * into the stall reach Redis after the reserve that was sent before them, which finds those
 * reservations run out and puts the jobs back on the list. Counts, per run, the jobs that ran
 * more than once and how many ran at all.
 *
 * With MODE=cost, what deletes cost when nothing goes wrong (the common path): a no-op worker's
 * jobs/s at a few concurrencies, and Redis's own CPU per job (INFO cpu: every step of the job,
 * its delete included), medians over ROUNDS rounds of JOBS jobs each.
 *
 *   npx tsx bench/late-delete.ts        RUNS=5 JOBS=1770 STALL=pause|sleep CONCURRENCY=8 HANDLER_MS=2 AT_JOBS=590
 * With MODE=deletes, the deletes alone, the old way and the new way on the same server and in
 * turn: JOBS reserved jobs deleted in batches of BATCH, by one ZREM per batch and by the delete
 * step per batch; Redis's CPU per job deleted, medians over ROUNDS.
 *
 *   MODE=cost npx tsx bench/late-delete.ts    JOBS=20000 ROUNDS=3
 *   MODE=deletes npx tsx bench/late-delete.ts JOBS=20000 ROUNDS=5 BATCH=32
 */
import { Redis } from 'ioredis';
import { buildJob, buildPayload } from '../src/laravel/index.js';
import { RedisQueue, connectRedis } from '../src/redis/index.js';
import { lateDeleteKeys, runStep } from '../src/redis/scripts.js';
import { startRedisServer } from '../src/testing/index.js';
import { Worker } from '../src/worker/index.js';
import { redisCpuSeconds } from './redis-target.js';

const RUNS = Number(process.env.RUNS ?? 5);
const JOBS = Number(process.env.JOBS ?? 1770);
const STALL = process.env.STALL ?? 'pause';
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const HANDLER_MS = Number(process.env.HANDLER_MS ?? 2);
/** The stall begins once this many jobs have run (a third of them by default), whatever the machine's speed. */
const AT_JOBS = Number(process.env.AT_JOBS ?? Math.floor(JOBS / 3));
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface RunResult {
  /** Deletes that found the reservation gone: taken off the list, found nowhere (undefined before the delete step counted them). */
  late?: { late: number; gone: number };
  ran: number;
  twice: number;
  lines: number;
}

async function oneRun(): Promise<RunResult> {
  const server = await startRedisServer(['--enable-debug-command', 'yes']);
  const admin = new Redis(server.port, '127.0.0.1');
  const client = connectRedis({ url: `redis://127.0.0.1:${server.port}`, log: () => undefined });
  try {
    const queue = new RedisQueue(client, { defaultQueue: 'late', retryAfter: 4 });
    const payloads = Array.from(
      { length: JOBS },
      (_, n) => buildPayload(buildJob({ className: 'App\\Jobs\\Work', properties: { n } }), { maxTries: 0 }).raw,
    );
    await queue.bulkRaw(payloads);
    const runs = new Map<number, number>();
    let lines = 0;
    const worker = new Worker(
      queue,
      {
        'App\\Jobs\\Work': async (job) => {
          const n = Number(job.command.n);
          runs.set(n, (runs.get(n) ?? 0) + 1);
          await pause(HANDLER_MS);
        },
      },
      { queues: ['late'], sleep: 0.05, concurrency: CONCURRENCY, tries: 0, memory: 0 },
      {
        failer: false,
        log: (event) => {
          if (event.event === 'warning' || event.event === 'error') {
            lines++;
            if (process.env.SHOW) console.log(JSON.stringify(event));
          }
        },
      },
    );
    const running = worker.run();
    while (runs.size < AT_JOBS) await pause(1);
    if (STALL === 'sleep') await admin.call('DEBUG', 'SLEEP', '6');
    else await admin.call('CLIENT', 'PAUSE', '6000');
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline && ((await queue.size()) > 0 || runs.size < JOBS)) await pause(100);
    // A job put back by a late delete comes round within retry_after: wait that long too.
    await pause(4500);
    void worker.stop();
    await running;
    return {
      late: (queue as { lateDeletes?: { late: number; gone: number } }).lateDeletes,
      ran: runs.size,
      twice: [...runs.values()].filter((times) => times > 1).length,
      lines,
    };
  } finally {
    client.disconnect();
    admin.disconnect();
    server.stop();
  }
}

/** Redis's CPU time so far (user and system), in µs. */
async function redisCpu(admin: Redis): Promise<number> {
  return (await redisCpuSeconds(admin)) * 1e6;
}

/** A no-op worker's jobs/s on a server of its own, and Redis's CPU per job (every step, deletes included). */
async function costRound(concurrency: number, jobs: number): Promise<{ perSecond: number; redisUsPerJob: number }> {
  const server = await startRedisServer();
  const admin = new Redis(server.port, '127.0.0.1');
  const client = connectRedis({ url: `redis://127.0.0.1:${server.port}`, log: () => undefined });
  try {
    const queue = new RedisQueue(client, { defaultQueue: 'cost', retryAfter: 90 });
    for (let i = 0; i < jobs; i += 1000)
      await queue.bulkRaw(
        Array.from(
          { length: Math.min(1000, jobs - i) },
          (_, j) => buildPayload(buildJob({ className: 'App\\Jobs\\Work', properties: { n: i + j } }), { maxTries: 0 }).raw,
        ),
      );
    const cpuBefore = await redisCpu(admin);
    const worker = new Worker(
      queue,
      { 'App\\Jobs\\Work': () => undefined },
      { queues: ['cost'], stopWhenEmpty: true, sleep: 0, concurrency, timeout: 0, memory: 0 },
      { failer: false },
    );
    const start = performance.now();
    await worker.run();
    const perSecond = jobs / ((performance.now() - start) / 1000);
    return { perSecond, redisUsPerJob: ((await redisCpu(admin)) - cpuBefore) / jobs };
  } finally {
    client.disconnect();
    admin.disconnect();
    server.stop();
  }
}

/** Redis's CPU per job to delete `jobs` reserved jobs in batches, by ZREM or by the delete step. */
async function deleteRound(how: 'zrem' | 'step', jobs: number, batch: number): Promise<number> {
  const server = await startRedisServer();
  const admin = new Redis(server.port, '127.0.0.1');
  const client = connectRedis({ url: `redis://127.0.0.1:${server.port}`, log: () => undefined });
  try {
    const queue = new RedisQueue(client, { defaultQueue: 'deletes', retryAfter: 90 });
    for (let i = 0; i < jobs; i += 1000)
      await queue.bulkRaw(
        Array.from(
          { length: Math.min(1000, jobs - i) },
          (_, j) => buildPayload(buildJob({ className: 'App\\Jobs\\Work', properties: { n: i + j } }), { maxTries: 0 }).raw,
        ),
      );
    const members: Buffer[] = [];
    for (;;) {
      const taken = await queue.popMany('deletes', 500);
      if (taken.length === 0) break;
      for (const job of taken) members.push(job.reservedBytes as Buffer);
    }
    // Half the jobs ready on the list meanwhile, as a busy queue has.
    await queue.bulkRaw(Array.from({ length: Math.min(1000, jobs / 2) }, () => 'x'.repeat(1000)));
    const keys = lateDeleteKeys('queues:deletes:reserved');
    await runStep(client, 'lqbDelete', keys, ['warm-up']);
    const before = await redisCpu(admin);
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < members.length; i += batch) {
      const slice = members.slice(i, i + batch);
      pending.push(how === 'zrem' ? client.zrem(keys[0], ...slice) : runStep(client, 'lqbDelete', keys, slice));
      if (pending.length >= 16) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
    return ((await redisCpu(admin)) - before) / members.length;
  } finally {
    client.disconnect();
    admin.disconnect();
    server.stop();
  }
}

if (process.env.MODE === 'deletes') {
  const jobs = Number(process.env.JOBS ?? 20_000);
  const rounds = Number(process.env.ROUNDS ?? 5);
  const batch = Number(process.env.BATCH ?? 32);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const zrem: number[] = [];
  const step: number[] = [];
  for (let round = 0; round < rounds; round++) {
    zrem.push(await deleteRound('zrem', jobs, batch));
    step.push(await deleteRound('step', jobs, batch));
  }
  console.log(
    `deletes in batches of ${batch}: ZREM ${median(zrem).toFixed(2)} µs of Redis CPU per job, delete step ${median(step).toFixed(2)} µs (medians of ${rounds}; ZREM ${zrem.map((v) => v.toFixed(2)).join(', ')}; step ${step.map((v) => v.toFixed(2)).join(', ')})`,
  );
} else if (process.env.MODE === 'cost') {
  const jobs = Number(process.env.JOBS ?? 20_000);
  const rounds = Number(process.env.ROUNDS ?? 3);
  for (const concurrency of [1, 16, 64]) {
    const results = [];
    for (let round = 0; round < rounds; round++) results.push(await costRound(concurrency, jobs));
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(
      `concurrency ${concurrency}: ${Math.round(median(results.map((r) => r.perSecond)))} jobs/s, Redis ${median(results.map((r) => r.redisUsPerJob)).toFixed(1)} µs CPU per job (medians of ${rounds}: ${results.map((r) => Math.round(r.perSecond)).join(', ')} jobs/s)`,
    );
  }
} else {
  const results: RunResult[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const result = await oneRun();
    results.push(result);
    console.log(
      `run ${run}: ${result.ran} of ${JOBS} jobs ran, ${result.twice} more than once, ${result.lines} warning/error lines, late deletes ${result.late ? `${result.late.late} taken off the list, ${result.late.gone} found nowhere` : 'not counted'} (${STALL}, concurrency ${CONCURRENCY}, handler ${HANDLER_MS} ms)`,
    );
  }
  const twice = results.map((r) => r.twice);
  console.log(`jobs run more than once per run: ${twice.join(', ')} (total ${twice.reduce((a, b) => a + b, 0)} over ${RUNS} runs)`);
}
