/**
 * Issue 45, one bench for all of it: lqb beside BullMQ 6 and Laravel 8.83, case by case, each
 * case a table.
 *
 *   npm run build && npx tsx bench/peers.ts
 *   CASES=worker1,worker32,dispatch1,dispatchMany,bulk,cold,database    (all, by default)
 *   ROUNDS=5                  rounds per case, at least 5 (SMOKE=1 lets fewer run: a check that it works, not a measure)
 *   JOBS=10000                jobs per worker run; DISPATCH_JOBS=10000 WARMUP=2000 per producer run;
 *   IN_FLIGHT=1000            dispatchMany's window; BULK_JOBS=20000 (1,000 per call); COLD_RUNS=4 per round; DB_JOBS=2000
 *   DB=mysql://root@127.0.0.1:3306/test,postgres://postgres@127.0.0.1:5432/test   database case: these besides SQLite
 *   SHARE=0                   lqb work --no-share (share is on by default, as it is in lqb work)
 *   RECORD=0                  lqb work --no-record (the worker's record, src/record/, is on by default, as it is in lqb work)
 *   NEIGHBOUR=1               a CPU hog (`for(;;)`, pinned to CPU 0 by taskset when there is one) runs through every case
 *   REDIS_URL=redis://…       that Redis, else a redis-server of the bench's own on a free port
 *   BASELINE=DIR              another checkout of lqb, built (npm ci && npm run build), run beside this one
 *                             in the worker and cold cases: two builds compared round by round
 *
 * Every candidate is a process of its own. Within a round each runs once, the order turning
 * round by round; each round prints every candidate's figure and lqb's speed against each
 * other's in that round (the machine's speed drifts between rounds more than between
 * neighbours), and the table gives medians with ranges. Redis CPU is INFO cpu's
 * used_cpu_sys + used_cpu_user over the measured part (the bench's own server, or REDIS_URL's,
 * which then counts whatever else uses it).
 *
 * - worker1, worker32: JOBS no-op RecordJobs (bench/record-job.ts, ~1.5 KB payload) worked to
 *   empty by `lqb work --concurrency=N` (dist/cli/main.js with --quiet --stop-when-empty --sleep=0
 *   --timeout=0 --memory=0, bench/noop-handlers.mjs), BullMQ's Worker at concurrency N (a no-op
 *   processor; the same properties as job data), and Laravel's Worker::runNextJob loop
 *   (php-fixture-gen/bench-run-next-job.php; one job at a time in both cases). Each candidate's
 *   queue is filled before its process starts; jobs/s and process CPU (GNU time) are of the
 *   whole process less the same process on no jobs (its boot), run just before.
 * - dispatch1: JOBS pushed one at a time, each awaited: connect()'s dispatch(), BullMQ's
 *   Queue.add, Laravel's dispatch() (php-fixture-gen/bench-dispatch.php). dispatchMany: IN_FLIGHT
 *   at once (PHP has no such thing). bulk: connect()'s bulk(jobs), BullMQ's addBulk, Laravel's
 *   Queue::bulk. Each after
 *   WARMUP untimed pushes in the same process; CPU is the process's over the timed part.
 * - cold: wall time of a process, COLD_RUNS a round, the round's median: `node dist/cli/main.js
 *   --version`, BullMQ's Worker made ready and closed, Laravel's worker booted
 *   (bench-run-next-job.php 0); then one job worked: `lqb work --once`, BullMQ's Worker for one
 *   job, Laravel's `queue:work --once` (php-fixture-gen/laravel-worker.php).
 * - database: DB_JOBS jobs on Laravel's database queue (a jobs table Laravel's migration made),
 *   `lqb work database` against Laravel's `queue:work database`, both at concurrency 1 and both
 *   printing their line per job (to /dev/null), as bench/database-worker.ts runs Laravel's.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Queue as BullQueue } from 'bullmq';
import { Redis } from 'ioredis';
import { DatabaseQueue } from '../src/database/index.js';
import { RedisQueue, connectRedis } from '../src/redis/index.js';
import { databasePayload, fill as fillDatabase, laravelDatabaseEnv, laravelDatabaseWorker, laravelJobsTable } from './database-worker.js';
import { recordPayload, recordProps } from './record-job.js';
import { REDIS_URL, ownRedisUnlessGiven, redisCpuSeconds, redisEnv } from './redis-target.js';
import { dropPrefix } from './scratch.js';
import { median } from './stats.js';

const SMOKE = process.env.SMOKE === '1';
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const JOBS = Number(process.env.JOBS ?? 10_000);
const DISPATCH_JOBS = Number(process.env.DISPATCH_JOBS ?? 10_000);
const WARMUP = Number(process.env.WARMUP ?? 2000);
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 1000);
const BULK_JOBS = Number(process.env.BULK_JOBS ?? 20_000);
const BULK_CHUNK = 1000;
const COLD_RUNS = Number(process.env.COLD_RUNS ?? 4);
const DB_JOBS = Number(process.env.DB_JOBS ?? 2000);
const DATABASES = (process.env.DB ?? '').split(',').filter(Boolean);
const SHARE = process.env.SHARE !== '0';
const RECORD = process.env.RECORD !== '0';
const NEIGHBOUR = process.env.NEIGHBOUR === '1';
const ALL_CASES = ['worker1', 'worker32', 'dispatch1', 'dispatchMany', 'bulk', 'cold', 'database'];
const CASES = (process.env.CASES ?? ALL_CASES.join(',')).split(',').filter(Boolean);
const QUEUE = 'bench';

const here = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const lqbBin = `${here}/dist/cli/main.js`;
const BASELINE = process.env.BASELINE?.replace(/\/$/, '');
const baselineBin = BASELINE && `${BASELINE}/dist/cli/main.js`;
/** A candidate run from BASELINE's build as well, when one is given. */
const andBaseline = <T>(make: (bin: string, label: string) => T): T[] => (baselineBin ? [make(baselineBin, `baseline (${BASELINE})`)] : []);
const nodeChild = `${here}/bench/peers-child.mjs`;
const php = (script: string) => `${here}/php-fixture-gen/${script}`;
const scratch = mkdtempSync(join(tmpdir(), 'lqb-peers-'));
const failedDb = join(scratch, 'failed.sqlite');

/** One candidate's figures in one round. */
interface Sample {
  /** jobs/s (a `rate` case), or seconds a run (a `time` case). */
  value: number;
  /** The candidate's process CPU (user + system), µs a job (a `time` case: a run). */
  cpu: number;
  /** Redis's CPU over the same, µs a job (a `time` case: a run). */
  redis: number;
  /** Seconds the same process takes with no jobs, taken off its run (worker cases). */
  boot?: number;
}

interface Candidate {
  name: string;
  sample: () => Promise<Sample>;
}

interface Case {
  title: string;
  /** Lines said under the title: what is run, and how. */
  about: string[];
  /** `rate`: jobs/s, higher is faster; `time`: seconds a run, lower is faster. */
  kind: 'rate' | 'time';
  /** lqb first: every other's figure is set against it, round by round. */
  candidates: Candidate[];
  /** Rows for what a peer has no counterpart of: name and why. */
  missing?: [string, string][];
  /** Whether lqb's share setting (a worker's) takes part. */
  worker: boolean;
}

// ---------------------------------------------------------------- processes and Redis's CPU

/** Runs a command to its end under GNU time: its wall seconds and its CPU seconds (user + system, its children's included). */
function timed(argv: string[], env: NodeJS.ProcessEnv): Promise<{ seconds: number; cpu: number }> {
  const timeFile = join(scratch, `time-${randomBytes(3).toString('hex')}`);
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn('/usr/bin/time', ['-f', '%U %S', '-o', timeFile, ...argv], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => {
      const seconds = (performance.now() - start) / 1000;
      if (status !== 0) return reject(new Error(`${argv.join(' ')}: exit ${status}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
      const [user, system] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
      rmSync(timeFile, { force: true });
      resolve({ seconds, cpu: user! + system! });
    });
  });
}

/** A fresh key prefix for one run: BullMQ's `prefix` (Laravel's is this and a colon). */
const freshPrefix = () => `lqb-peers-${randomBytes(3).toString('hex')}`;

/** The environment a run's processes read: the Redis, and php-fixture-gen's app settings. */
function runEnv(prefix: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ...redisEnv,
    REDIS_PREFIX: `${prefix}:`,
    QUEUE_NAME: QUEUE,
    LQB_RECORD_FILE: '/dev/null',
    LQB_FAILED_DB: failedDb,
    LQB_PEERS_PREFIX: prefix,
    LQB_PEERS_QUEUE: QUEUE,
    LQB_PEERS_PROPS: JSON.stringify(recordProps(0)),
    LQB_TREE: here,
    ...extra,
  };
}

const shareFlag = SHARE ? [] : ['--no-share'];
const recordFlag = RECORD ? [] : ['--no-record'];

// ---------------------------------------------------------------- the queues: filled and checked

let admin: Redis;
let bullConnection: Redis;

/** Laravel's queue under `prefix`, as lqb and Laravel's worker read it. */
async function withLaravelQueue<T>(prefix: string, use: (queue: RedisQueue) => Promise<T>): Promise<T> {
  const client = connectRedis({ url: REDIS_URL, prefix: `${prefix}:` });
  const queue = new RedisQueue(client, { defaultQueue: QUEUE });
  try {
    return await use(queue);
  } finally {
    await queue.close();
    client.disconnect();
  }
}

async function withBullQueue<T>(prefix: string, use: (queue: BullQueue) => Promise<T>): Promise<T> {
  const queue = new BullQueue(QUEUE, { connection: bullConnection, prefix });
  try {
    return await use(queue);
  } finally {
    await queue.close();
  }
}

/** Where a worker's jobs come from: filled before its process starts, checked after. */
interface JobSource {
  fill: (prefix: string, count: number) => Promise<void>;
  /** Jobs still there: waiting, delayed, reserved or active. */
  left: (prefix: string) => Promise<number>;
}

const laravelRedis: JobSource = {
  fill: (prefix, count) =>
    withLaravelQueue(prefix, async (queue) => {
      for (let i = 0; i < count; i += 1000)
        await queue.bulkRaw(Array.from({ length: Math.min(1000, count - i) }, (_, j) => recordPayload(i + j)));
    }),
  left: (prefix) => withLaravelQueue(prefix, (queue) => queue.size()),
};

const bullmq: JobSource = {
  fill: (prefix, count) =>
    withBullQueue(prefix, async (queue) => {
      for (let i = 0; i < count; i += 1000)
        await queue.addBulk(
          Array.from({ length: Math.min(1000, count - i) }, (_, j) => ({
            name: 'RecordJob',
            data: recordProps(i + j),
            opts: { removeOnComplete: true, removeOnFail: true },
          })),
        );
    }),
  left: (prefix) =>
    withBullQueue(prefix, async (queue) => {
      const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'active', 'failed');
      return Object.values(counts).reduce((a, b) => a + b, 0);
    }),
};

const nothing: JobSource = { fill: async () => undefined, left: async () => 0 };

// ---------------------------------------------------------------- worker processes

/** A process that works a queue: its jobs' source and its command line for `count` jobs. */
interface WorkerProcess {
  name: string;
  source: JobSource;
  command: (prefix: string, count: number) => { argv: string[]; env: NodeJS.ProcessEnv };
}

/** One process run on `count` jobs under a prefix of its own: wall and CPU seconds, Redis's CPU seconds. */
async function processRun(w: WorkerProcess, count: number): Promise<{ seconds: number; cpu: number; redis: number }> {
  const prefix = freshPrefix();
  try {
    await w.source.fill(prefix, count);
    const { argv, env } = w.command(prefix, count);
    const before = await redisCpuSeconds(admin);
    const run = await timed(argv, env);
    const redis = (await redisCpuSeconds(admin)) - before;
    const left = await w.source.left(prefix);
    if (left !== 0) throw new Error(`${w.name}: ${left} jobs left after the run`);
    return { ...run, redis };
  } finally {
    await dropPrefix(`${prefix}:`);
  }
}

/** A worker's round: the process on no jobs (its boot), then on `count`, the boot taken off. */
function throughput(w: WorkerProcess, count: number): Candidate {
  return {
    name: w.name,
    sample: async () => {
      const boot = await processRun(w, 0);
      const full = await processRun(w, count);
      return {
        value: count / Math.max(1e-3, full.seconds - boot.seconds),
        cpu: (Math.max(0, full.cpu - boot.cpu) * 1e6) / count,
        redis: (full.redis * 1e6) / count,
        boot: boot.seconds,
      };
    },
  };
}

/** A process's cold start: COLD_RUNS runs on `count` jobs (0 or 1), the medians. */
function coldStart(w: WorkerProcess, count: number): Candidate {
  return {
    name: w.name,
    sample: async () => {
      const runs = [];
      for (let i = 0; i < COLD_RUNS; i++) runs.push(await processRun(w, count));
      return {
        value: median(runs.map((r) => r.seconds)),
        cpu: median(runs.map((r) => r.cpu)) * 1e6,
        redis: median(runs.map((r) => r.redis)) * 1e6,
      };
    },
  };
}

const lqbWork = (concurrency: number, once = false, bin = lqbBin, label = 'lqb'): WorkerProcess => ({
  name: `${label} ${once ? 'work --once' : `work --concurrency=${concurrency}`}`,
  source: laravelRedis,
  command: (prefix) => ({
    argv: [
      bin,
      'work',
      `--handlers=${here}/bench/noop-handlers.mjs`,
      `--queue=${QUEUE}`,
      `--prefix=${prefix}:`,
      `--concurrency=${concurrency}`,
      once ? '--once' : '--stop-when-empty',
      '--sleep=0',
      '--timeout=0',
      '--memory=0',
      `--failed-db=sqlite://${failedDb}`,
      '--quiet',
      ...shareFlag,
      ...recordFlag,
    ],
    env: runEnv(prefix),
  }),
});

const bullmqWorker = (concurrency: number, label = `BullMQ Worker, concurrency ${concurrency}`): WorkerProcess => ({
  name: label,
  source: bullmq,
  command: (prefix, count) => ({
    argv: [process.execPath, nodeChild],
    env: runEnv(prefix, { LQB_PEERS_CHILD: 'bullmq-work', LQB_PEERS_JOBS: String(count), LQB_PEERS_CONCURRENCY: String(concurrency) }),
  }),
});

const laravelLoop: WorkerProcess = {
  name: 'Laravel 8.83 Worker::runNextJob loop',
  source: laravelRedis,
  command: (prefix, count) => ({ argv: ['php', php('bench-run-next-job.php'), String(count)], env: runEnv(prefix) }),
};

const laravelOnce: WorkerProcess = {
  name: 'Laravel 8.83 queue:work --once',
  source: laravelRedis,
  command: (prefix) => ({
    argv: ['php', php('laravel-worker.php'), `--queue=${QUEUE}`, '--once', '--sleep=0', '--timeout=0'],
    env: runEnv(prefix),
  }),
};

const lqbVersion = (bin = lqbBin, label = 'node dist/cli/main.js'): WorkerProcess => ({
  name: `${label} --version`,
  source: nothing,
  command: (prefix) => ({ argv: [process.execPath, bin, '--version'], env: runEnv(prefix) }),
});

const laravelBoot: WorkerProcess = {
  name: 'Laravel 8.83 worker boot (bench-run-next-job.php 0)',
  source: nothing,
  command: (prefix) => ({ argv: ['php', php('bench-run-next-job.php'), '0'], env: runEnv(prefix) }),
};

// ---------------------------------------------------------------- producers

/** A producer process: its command line for a style of pushing, and how many jobs it left on the queue. */
interface Producer {
  name: string;
  command: (prefix: string, jobs: number) => { argv: string[]; env: NodeJS.ProcessEnv };
  pushed: (prefix: string) => Promise<number>;
}

/** Reads a child's standard output a line at a time. */
function lines(child: ReturnType<typeof spawn>): () => Promise<string> {
  const reader = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return async () => {
    const next = await reader.next();
    if (next.done) throw new Error('the producer ended before its line');
    return next.value;
  };
}

/** A producer's round: Redis's CPU read around its timed part, which it times itself. */
function producing(p: Producer, jobs: number): Candidate {
  return {
    name: p.name,
    sample: async () => {
      const prefix = freshPrefix();
      const { argv, env } = p.command(prefix, jobs);
      const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      const next = lines(child);
      try {
        if ((await next()) !== 'ready') throw new Error('no "ready" line');
        const before = await redisCpuSeconds(admin);
        child.stdin.write('go\n');
        const result = JSON.parse(await next()) as { jobs: number; seconds: number; cpuSeconds: number };
        const redis = (await redisCpuSeconds(admin)) - before;
        if ((await exited) !== 0) throw new Error('it exited with a failure');
        const pushed = await p.pushed(prefix);
        if (pushed !== WARMUP + jobs) throw new Error(`${pushed} jobs on the queue, not ${WARMUP + jobs}`);
        return { value: result.jobs / result.seconds, cpu: (result.cpuSeconds * 1e6) / result.jobs, redis: (redis * 1e6) / result.jobs };
      } catch (error) {
        child.kill();
        throw new Error(`${p.name}: ${(error as Error).message}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
      } finally {
        await dropPrefix(`${prefix}:`);
      }
    },
  };
}

const nodeProducer = (name: string, child: 'lqb-dispatch' | 'bullmq-add', style: string, window = 1000): Producer => ({
  name,
  command: (prefix, jobs) => ({
    argv: [process.execPath, nodeChild],
    env: runEnv(prefix, {
      LQB_PEERS_CHILD: child,
      LQB_PEERS_STYLE: style,
      LQB_PEERS_JOBS: String(jobs),
      LQB_PEERS_WARMUP: String(WARMUP),
      LQB_PEERS_WINDOW: String(window),
    }),
  }),
  pushed: child === 'lqb-dispatch' ? laravelPushed : (prefix) => withBullQueue(prefix, (queue) => queue.getWaitingCount()),
});

const laravelPushed = (prefix: string) => withLaravelQueue(prefix, (queue) => queue.size());

const laravelProducer = (name: string, mode: 'dispatch' | 'bulk'): Producer => ({
  name,
  command: (prefix, jobs) => ({ argv: ['php', php('bench-dispatch.php'), mode, String(jobs), String(WARMUP)], env: runEnv(prefix) }),
  pushed: laravelPushed,
});

// ---------------------------------------------------------------- database queue

/** `lqb work database` and Laravel's `queue:work database` on one database's jobs table. */
function databaseCandidates(url: string, table: string, queue: DatabaseQueue): Candidate[] {
  const phpDb = url.startsWith('sqlite://') ? url.slice('sqlite://'.length) : url;
  const source: JobSource = {
    fill: (_prefix, count) =>
      fillDatabase(
        queue,
        Array.from({ length: count }, (_, i) => databasePayload(i)),
      ),
    left: () => queue.size(),
  };
  const env = (prefix: string) => ({ ...laravelDatabaseEnv(phpDb, table, failedDb), ...redisEnv, REDIS_PREFIX: `${prefix}:` });
  const lqb: WorkerProcess = {
    name: 'lqb work database',
    source,
    command: (prefix) => ({
      argv: [
        lqbBin,
        'work',
        'database',
        `--queue-db=${url}`,
        `--jobs-table=${table}`,
        `--handlers=${here}/bench/noop-handlers.mjs`,
        `--prefix=${prefix}:`,
        '--stop-when-empty',
        '--sleep=0',
        '--timeout=0',
        '--memory=0',
        `--failed-db=sqlite://${failedDb}`,
        ...shareFlag,
        ...recordFlag,
      ],
      env: env(prefix),
    }),
  };
  const laravel: WorkerProcess = {
    name: 'Laravel 8.83 queue:work database',
    source,
    command: (prefix) => ({ argv: laravelDatabaseWorker, env: env(prefix) }),
  };
  return [throughput(lqb, DB_JOBS), throughput(laravel, DB_JOBS)];
}

// ---------------------------------------------------------------- the cases

function workerCase(concurrency: number): Case {
  return {
    title: `Worker, concurrency ${concurrency}: ${fmt(JOBS)} no-op jobs`,
    about: [
      `Each process works its full queue to empty; jobs/s and CPU less the same process on an empty queue (boot).${concurrency > 1 ? " Laravel's loop runs one job at a time: it has no concurrency." : ''}`,
    ],
    kind: 'rate',
    worker: true,
    candidates: [
      throughput(lqbWork(concurrency), JOBS),
      ...andBaseline((bin, label) => throughput(lqbWork(concurrency, false, bin, label), JOBS)),
      throughput(bullmqWorker(concurrency), JOBS),
      throughput(laravelLoop, JOBS),
    ],
  };
}

const dispatchCases: Record<string, () => Case> = {
  dispatch1: () => ({
    title: `Dispatch one at a time, each awaited: ${fmt(DISPATCH_JOBS)} jobs`,
    about: [`After ${fmt(WARMUP)} untimed in the same process; CPU is the process's over the timed part.`],
    kind: 'rate',
    worker: false,
    candidates: [
      producing(nodeProducer('lqb connect().dispatch()', 'lqb-dispatch', 'awaited'), DISPATCH_JOBS),
      producing(nodeProducer('BullMQ Queue.add', 'bullmq-add', 'awaited'), DISPATCH_JOBS),
      producing(laravelProducer('Laravel 8.83 dispatch()', 'dispatch'), DISPATCH_JOBS),
    ],
  }),
  dispatchMany: () => ({
    title: `Dispatch ${fmt(IN_FLIGHT)} in flight: ${fmt(DISPATCH_JOBS)} jobs`,
    about: [`Windows of ${fmt(IN_FLIGHT)} (Promise.all), after ${fmt(WARMUP)} untimed; CPU is the process's over the timed part.`],
    kind: 'rate',
    worker: false,
    candidates: [
      producing(nodeProducer('lqb connect().dispatch()', 'lqb-dispatch', 'inflight', IN_FLIGHT), DISPATCH_JOBS),
      producing(nodeProducer('BullMQ Queue.add', 'bullmq-add', 'inflight', IN_FLIGHT), DISPATCH_JOBS),
    ],
    missing: [['Laravel 8.83 dispatch()', "none: PHP's dispatch() returns when Redis has answered, one at a time"]],
  }),
  bulk: () => ({
    title: `Bulk push, ${fmt(BULK_CHUNK)} a call: ${fmt(BULK_JOBS)} jobs`,
    about: [
      `lqb's connect().bulk(jobs): each payload laid out as dispatch() lays it out, pushed in one script call. After ${fmt(WARMUP)} untimed.`,
    ],
    kind: 'rate',
    worker: false,
    candidates: [
      producing(nodeProducer('lqb connect().bulk()', 'lqb-dispatch', 'bulk', BULK_CHUNK), BULK_JOBS),
      producing(nodeProducer('BullMQ Queue.addBulk', 'bullmq-add', 'bulk', BULK_CHUNK), BULK_JOBS),
      producing(laravelProducer('Laravel 8.83 Queue::bulk (push in a loop)', 'bulk'), BULK_JOBS),
    ],
  }),
};

const coldCases: (() => Case)[] = [
  () => ({
    title: 'Cold start: boot alone',
    about: [`Wall time of the whole process, ${COLD_RUNS} runs a round (the round's median); CPU by GNU time (10 ms steps).`],
    kind: 'time',
    worker: false,
    candidates: [
      coldStart(lqbVersion(), 0),
      ...andBaseline((bin, label) => coldStart(lqbVersion(bin, label), 0)),
      coldStart(bullmqWorker(1, 'BullMQ Worker ready, then closed'), 0),
      coldStart(laravelBoot, 0),
    ],
  }),
  () => ({
    title: 'Cold start: one job',
    about: [`Wall time of the whole process on one job, ${COLD_RUNS} runs a round (the round's median); CPU by GNU time (10 ms steps).`],
    kind: 'time',
    worker: true,
    candidates: [
      coldStart(lqbWork(1, true), 1),
      ...andBaseline((bin, label) => coldStart(lqbWork(1, true, bin, label), 1)),
      coldStart(bullmqWorker(1, 'BullMQ Worker, one job, then closed'), 1),
      coldStart(laravelOnce, 1),
    ],
  }),
];

// ---------------------------------------------------------------- running a case and printing it

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const load = () => loadavg()[0]!.toFixed(2);
const times = (x: number) => `${x.toFixed(2)}×`;

/** Whose a candidate is, as the round lines name it. */
const whose = (name: string) =>
  name.startsWith('BullMQ') ? 'BullMQ' : name.startsWith('Laravel') ? 'Laravel' : name.startsWith('baseline') ? 'baseline' : 'lqb';

/** Candidate indexes in a round's order: turned by one each round. */
const turned = (n: number, round: number) => Array.from({ length: n }, (_, i) => (i + round) % n);

/** How much faster lqb was than `other` in one round (above 1: lqb faster). */
const lqbFaster = (c: Case, lqb: Sample, other: Sample) => (c.kind === 'rate' ? lqb.value / other.value : other.value / lqb.value);

const figure = (c: Case, value: number) => (c.kind === 'rate' ? `${fmt(value)} jobs/s` : `${(value * 1000).toFixed(0)} ms`);

function roundLine(c: Case, samples: Sample[][], round: number, order: number[]): string {
  const at = (i: number) => samples[i]![round]!;
  const figures = c.candidates.map((x, i) => `${whose(x.name)} ${figure(c, at(i).value)}`).join(', ');
  const ratios = c.candidates
    .slice(1)
    .map((x, i) => `lqb ÷ ${whose(x.name)} ${times(lqbFaster(c, at(0), at(i + 1)))}`)
    .join(', ');
  return `round ${round + 1} (order ${order.map((i) => whose(c.candidates[i]!.name)).join(', ')}): ${figures}; ${ratios}`;
}

/** Ratios as `1.23× (1.10–1.40)`: median, min–max. */
const ratioRange = (xs: number[]) => `${times(median(xs))} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;

const range = (xs: number[], show: (x: number) => string) => `${show(median(xs))} (${show(Math.min(...xs))}–${show(Math.max(...xs))})`;

function printTable(c: Case, samples: Sample[][]): void {
  const rate = c.kind === 'rate';
  const boot = samples.some((xs) => xs.some((s) => s.boot !== undefined));
  const unit = rate ? 'µs/job' : 'ms a run';
  const perUnit = (x: number) => (rate ? x.toFixed(1) : (x / 1000).toFixed(0));
  console.log(
    `\n| candidate | ${rate ? 'jobs/s' : 'wall ms a run'}, median (min–max) |${boot ? ' boot s |' : ''} process CPU ${unit} | Redis CPU ${unit} | lqb faster, per round: median (min–max) |`,
  );
  console.log(`|---|---:|${boot ? '---:|' : ''}---:|---:|---:|`);
  c.candidates.forEach((x, i) => {
    const xs = samples[i]!;
    const vs = i === 0 ? '1.00×' : ratioRange(xs.map((s, r) => lqbFaster(c, samples[0]![r]!, s)));
    console.log(
      `| ${x.name} | ${range(
        xs.map((s) => s.value),
        (v) => (rate ? fmt(v) : (v * 1000).toFixed(0)),
      )} |${boot ? ` ${median(xs.map((s) => s.boot ?? NaN)).toFixed(2)} |` : ''} ${perUnit(median(xs.map((s) => s.cpu)))} | ${perUnit(median(xs.map((s) => s.redis)))} | ${vs} |`,
    );
  });
  for (const [name, why] of c.missing ?? []) console.log(`| ${name} | ${why} |${boot ? ' |' : ''} | | |`);
}

async function runCase(c: Case): Promise<void> {
  console.log(`\n### ${c.title}\n`);
  for (const line of c.about) console.log(line);
  console.log(
    c.worker
      ? `lqb share: ${SHARE ? 'on (the default; SHARE=0 runs --no-share)' : 'off (--no-share, SHARE=0)'}; record: ${RECORD ? 'on (the default; RECORD=0 runs --no-record)' : 'off (--no-record, RECORD=0)'}.`
      : `lqb share: ${SHARE ? 'on' : 'off'} (a worker's setting: no lqb worker in this case).`,
  );
  if (NEIGHBOUR) console.log(`Neighbour: ${neighbourLine}, running through every round.`);
  console.log(`Load average (1 min) at start: ${load()}.`);
  const samples: Sample[][] = c.candidates.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const order = turned(c.candidates.length, round);
    for (const i of order) samples[i]![round] = await c.candidates[i]!.sample();
    console.log(roundLine(c, samples, round, order));
  }
  console.log(`Load average (1 min) at end: ${load()}.`);
  printTable(c, samples);
}

/** Each database's case: a jobs table Laravel's migration made, dropped at the end. */
async function runDatabaseCases(): Promise<void> {
  for (const url of [`sqlite://${join(scratch, 'queue.sqlite')}`, ...DATABASES]) {
    const table = `lqb_peers_${randomBytes(4).toString('hex')}_jobs`;
    const env = laravelDatabaseEnv(url.startsWith('sqlite://') ? url.slice('sqlite://'.length) : url, table, failedDb);
    laravelJobsTable(env, 'create-table');
    const queue = DatabaseQueue.open(url, { table });
    try {
      await runCase({
        title: `Database queue (${url.split(':')[0]}), concurrency 1: ${fmt(DB_JOBS)} no-op jobs`,
        about: [
          `The jobs table filled before each process starts; jobs/s and CPU less the same process on an empty table (boot). Both print their line per job (to /dev/null). BullMQ has no database driver.`,
        ],
        kind: 'rate',
        worker: true,
        candidates: databaseCandidates(url, table, queue),
      });
    } finally {
      await queue.close();
      laravelJobsTable(env, 'drop-table');
    }
  }
}

// ---------------------------------------------------------------- the neighbour, and the run

const taskset = existsSync('/usr/bin/taskset');
const neighbourLine = `a process spinning \`for(;;)\`${taskset ? ' pinned to CPU 0 (taskset -c 0)' : ' (no taskset: not pinned)'}`;

/** The CPU hog NEIGHBOUR=1 runs: one core kept busy, the same in every round. */
function startNeighbour(): () => void {
  const argv = [process.execPath, '-e', 'for(;;){}'];
  const child = taskset ? spawn('taskset', ['-c', '0', ...argv], { stdio: 'ignore' }) : spawn(argv[0]!, argv.slice(1), { stdio: 'ignore' });
  return () => child.kill();
}

function version(argv: string[]): string {
  return execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8' }).trim();
}

async function main(): Promise<void> {
  if (ROUNDS < 5 && !SMOKE) throw new Error(`ROUNDS=${ROUNDS}: at least 5 (SMOKE=1 runs fewer, to check the bench works)`);
  const unknown = CASES.filter((c) => !ALL_CASES.includes(c));
  if (unknown.length) throw new Error(`CASES: unknown ${unknown.join(', ')} (${ALL_CASES.join(', ')})`);
  if (!existsSync(lqbBin)) throw new Error(`${lqbBin} is missing: npm run build first`);
  if (baselineBin && !existsSync(baselineBin)) throw new Error(`BASELINE: ${baselineBin} is missing: npm ci && npm run build there first`);
  const redis = await ownRedisUnlessGiven();
  admin = new Redis(REDIS_URL);
  bullConnection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const stopNeighbour = NEIGHBOUR ? startNeighbour() : () => undefined;
  try {
    const redisVersion = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1];
    const bullmqVersion = (JSON.parse(readFileSync(`${here}/node_modules/bullmq/package.json`, 'utf8')) as { version: string }).version;
    console.log(
      `lqb ${version(['git', '-C', here, 'rev-parse', '--short', 'HEAD'])}${BASELINE ? ` (baseline ${version(['git', '-C', BASELINE, 'rev-parse', '--short', 'HEAD'])})` : ''}, BullMQ ${bullmqVersion}, Laravel 8.83 on PHP ${version(['php', '-r', 'echo PHP_VERSION;'])}, Node ${process.version}, Redis ${redisVersion} (${redis.own ? `the bench's own, ${REDIS_URL}` : `REDIS_URL ${REDIS_URL}`}), ${cpus().length} cores; ${ROUNDS} rounds a case${SMOKE ? ' (SMOKE: a check that the bench runs, not a measure)' : ''}.`,
    );
    console.log(
      `Jobs: Laravel's RecordJob, a payload of ${Buffer.byteLength(recordPayload(0))} bytes; BullMQ's job data its properties as JSON, ${Buffer.byteLength(JSON.stringify(recordProps(0)))} bytes, added with removeOnComplete and removeOnFail (Laravel and lqb delete a job once done).`,
    );
    console.log(
      `lqb share: ${SHARE ? 'on (the default)' : 'off (SHARE=0: --no-share)'}. Neighbour: ${NEIGHBOUR ? neighbourLine : 'none (NEIGHBOUR=1 adds one)'}.`,
    );
    const cases: (() => Case)[] = [];
    if (CASES.includes('worker1')) cases.push(() => workerCase(1));
    if (CASES.includes('worker32')) cases.push(() => workerCase(32));
    for (const name of ['dispatch1', 'dispatchMany', 'bulk']) if (CASES.includes(name)) cases.push(dispatchCases[name]!);
    if (CASES.includes('cold')) cases.push(...coldCases);
    for (const c of cases) await runCase(c());
    if (CASES.includes('database')) await runDatabaseCases();
  } finally {
    stopNeighbour();
    admin.disconnect();
    bullConnection.disconnect();
    redis.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
