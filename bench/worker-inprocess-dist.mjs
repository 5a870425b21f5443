/**
 * bench/worker-inprocess.ts's timed run in a process of its own, for one tree: its compiled build
 * (`$LQB_TREE/dist`, run by plain `node`, so no TypeScript loader is in the measure: tsx wraps
 * every named function in a `__name` call) or, with LQB_BUILD=src, its sources (run under
 * `--import tsx`). One file for every tree: the commit before the redesign has no copy of it.
 *
 *   LQB_TREE=/path/to/checkout LQB_BENCH_CHILD=connect node bench/worker-inprocess-dist.mjs
 *   LQB_BUILD=src: the tree's src/ (node --import tsx …)
 *   PROFILE=FILE.cpuprofile: the timed part profiled (V8's CPU profile)
 *   WARMUP_WORKER=1: warm up with a worker of its own, then time a second worker from run() to
 *       its end (the way this bench measured before 2026-11-26): the second worker's run then
 *       also carries V8's optimizing compiler compiling the worker's code again for it
 *
 * By default one worker runs WARMUP + JOBS jobs, and the clock and the CPU count start when its
 * handler is called for the (WARMUP + 1)th time: the per-job cost of a worker that has warmed
 * up, which is what a long-running worker pays per job. Besides the process's CPU, the main
 * thread's (`mainPerJob`, from /proc on Linux) is given: the rest is V8's helper threads
 * (its optimizing compiler and the garbage collector's parallel and concurrent work).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { mainThreadCpu } from './thread-cpu.mjs';

const tree = process.env.LQB_TREE;
const mode = process.env.LQB_BENCH_CHILD;
if (!tree || (mode !== 'connect' && mode !== 'bare')) throw new Error('LQB_TREE and LQB_BENCH_CHILD=connect|bare are needed');
const JOBS = Number(process.env.JOBS ?? 40_000);
const WARMUP = Number(process.env.WARMUP ?? 60_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const ATTEMPTS = Number(process.env.ATTEMPTS ?? 0);
/** The jobs' timeout in seconds (0: none, the default here; `lqb work`'s default is 60). */
const TIMEOUT = Number(process.env.TIMEOUT ?? 0);
const CLASS = 'App\\Jobs\\Bridge\\RecordJob';
/** dist (the build) or src (the sources, under tsx). */
const code = `${tree}/${process.env.LQB_BUILD === 'src' ? 'src' : 'dist'}`;

const { buildPayload } = await import(`${code}/laravel/index.js`);
const { bridgeRecordJob } = await import(`${code}/cli/demo.js`);
const { RedisQueue, connectRedis } = await import(`${code}/redis/index.js`);
const { Worker } = await import(`${code}/worker/index.js`);
const { connect } = await import(`${code}/connect/index.js`);

const prefix = `lqb-bench-${randomBytes(3).toString('hex')}:`;
const payload = (n) => {
  const raw = buildPayload(
    bridgeRecordJob({ n, label: 'bench', ratio: 0.5, items: { pad: Array.from({ length: 12 }, () => 'padding-to-a-kilobyte') } }),
  ).raw;
  return ATTEMPTS > 0 ? raw.replace(/"attempts":0}$/, `"attempts":${ATTEMPTS}}`) : raw;
};
/** Warm-up in the timed worker's own run (see above), unless WARMUP_WORKER asks for a worker of its own. */
const warmInRun = !process.env.WARMUP_WORKER;
const options = {
  stopWhenEmpty: true,
  sleep: 0,
  timeout: TIMEOUT,
  concurrency: CONCURRENCY,
  memory: 0,
  ...(ATTEMPTS > 0 ? { tries: 0 } : {}),
};
// REDIS_URL (else 127.0.0.1:6379), as bench/redis-target.ts: the parent passes its environment on.
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const lq = mode === 'connect' ? await connect({ redis: REDIS_URL, prefix }) : undefined;
const client = connectRedis({ url: REDIS_URL, prefix });
const queue = new RedisQueue(client, { defaultQueue: 'default' });
const fill = async (count) => {
  for (let i = 0; i < count; i += 1000) await queue.bulkRaw(Array.from({ length: Math.min(1000, count - i) }, (_, j) => payload(i + j)));
};
let cpuPerJob = 0;
let systemPerJob = 0;
let mainPerJob = 0;
/** Time in V8's collector during the timed part, per job (µs), and the collections made. */
let gcPerJob = 0;
let collections = 0;
/** Runs one worker over `warmup` + `count` jobs, timing the last `count` of them; jobs/s of those. */
const work = async (warmup, count, profile) => {
  await fill(warmup + count);
  const session = profile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
  }
  // The handler starts the clock at the (warmup + 1)th job (before run() when there is no warm-up).
  let handled = 0;
  const handlers = {
    [CLASS]: () => {
      if (++handled === warmup + 1) startClock();
    },
  };
  const worker = lq
    ? lq.worker(handlers, { ...options, failer: false })
    : new Worker(queue, handlers, { ...options, queues: ['default'] }, { failer: false });
  let gcMs = 0;
  let gcs = 0;
  let timing = false;
  const observer = new PerformanceObserver((list) => {
    if (!timing) return;
    for (const entry of list.getEntries()) {
      gcMs += entry.duration;
      gcs++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  let cpu;
  let main = 0;
  let start = 0;
  const startClock = () => {
    timing = true;
    if (session) void session.post('Profiler.start');
    main = mainThreadCpu();
    cpu = process.cpuUsage();
    start = performance.now();
  };
  if (warmup === 0) startClock();
  await worker.run();
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  mainPerJob = (mainThreadCpu() - main) / count;
  observer.disconnect();
  gcPerJob = (gcMs * 1000) / count;
  collections = gcs;
  cpuPerJob = (used.user + used.system) / count;
  systemPerJob = used.system / count;
  if (session) writeFileSync(profile, JSON.stringify((await session.post('Profiler.stop')).profile));
  const left = await queue.size();
  if (left !== 0) throw new Error(`${mode}: ${left} jobs left in the queue after the run`);
  if (handled !== warmup + count) throw new Error(`${mode}: the handler ran ${handled} times for ${warmup + count} jobs`);
  return count / seconds;
};
try {
  if (!warmInRun && WARMUP > 0) await work(0, WARMUP);
  const jobsPerSecond = await work(warmInRun ? WARMUP : 0, JOBS, process.env.PROFILE);
  console.log(
    JSON.stringify({ jobsPerSecond, cpuPerJob, mainPerJob, systemPerJob, gcPerJob, collections, bytes: Buffer.byteLength(payload(0)) }),
  );
} finally {
  await lq?.close();
  await queue.close();
  const raw = new Redis(REDIS_URL);
  const keys = await raw.keys(`${prefix}*`);
  if (keys.length) await raw.del(...keys);
  raw.disconnect();
  client.disconnect();
}
