/**
 * One run of bench/horizon.ts, in a process of its own (HORIZON_BENCH_CHILD names its mode; see
 * bench/horizon.ts for the modes and the knobs): WARMUP + JOBS dispatches then a worker running
 * them, timed (or counted, under INSTRUCTIONS) after the warm-up; its Result printed as JSON on
 * the last line. bench/horizon.ts starts it, under Valgrind when it counts instructions.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Redis } from 'ioredis';
import { connect } from '../src/index.js';
import { dropPrefix } from './scratch.js';
import { countFromNow, stopCounting, uncounted } from './instructions.js';
import { mainThreadCpu } from './thread-cpu.mjs';
import { redisCpuSeconds } from './redis-target.js';

/** Under INSTRUCTIONS (bench/horizon.ts) a run counts 5,000 jobs by default, else it times 100,000. */
export const JOBS = Number(process.env.JOBS ?? (process.env.INSTRUCTIONS === '1' ? 5_000 : 100_000));
export const WARMUP = Number(process.env.WARMUP ?? 20_000);
export const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
/** Microseconds each job's handler keeps the CPU busy (0: a no-op job, the records' worst case). */
export const HANDLER_US = Number(process.env.HANDLER_US ?? 0);
const URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CLASS = 'App\\Jobs\\Bridge\\RecordJob';

export interface Result {
  /** The worker: jobs per second, this process's CPU µs per job, Redis's CPU µs per job. */
  workerJobsPerSecond: number;
  workerCpu: number;
  /** Of workerCpu, the kernel's (system time: socket writes and reads, and waking from a wait for Redis). */
  workerSystem: number;
  workerRedisCpu: number;
  /** The producer: CPU µs per dispatch. */
  dispatchCpu: number;
  /** The same two, of the main thread alone (V8's compiler and collector threads left out). */
  workerMain: number;
  dispatchMain: number;
  /** Under INSTRUCTIONS: instructions per job of the worker and per dispatch, every thread's and the main thread's (else NaN). */
  workerInstructions: number;
  workerMainInstructions: number;
  dispatchInstructions: number;
  dispatchMainInstructions: number;
}

const microsPerJob = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / JOBS;

/** A CPU profile and a sampling heap profile (every 4 KiB allocated, kept or not) of what runs between start and stop. */
async function startProfile(): Promise<{ stop: (file: string) => Promise<void> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await session.post('Profiler.start');
  return {
    stop: async (file) => {
      const { profile } = await session.post('Profiler.stop');
      const { profile: heap } = await session.post('HeapProfiler.stopSampling');
      session.disconnect();
      writeFileSync(`${file}.cpuprofile`, JSON.stringify(profile));
      writeFileSync(`${file}.heapprofile`, JSON.stringify(heap));
      printTop(profile);
    },
  };
}

/** The functions with the most self time, and where they are. */
function printTop(profile: {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples?: number[];
  timeDeltas?: number[];
}): void {
  const byNode = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (deltas[i] ?? 0)));
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(src|node_modules)\//, '$1/')}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + (byNode.get(node.id) ?? 0));
  }
  for (const [key, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 40))
    console.log(`${(micros / JOBS).toFixed(2).padStart(7)} µs/job  ${key}`);
}

/**
 * plain: no Horizon; horizon: Horizon's payloads and records; layout: Horizon's payloads (pushed
 * with `horizon`) run by a worker without it, which parts what Horizon's layout of the payload
 * costs the worker from what its records cost; loaded: a plain worker whose deletes keep Redis
 * busy about as long as Horizon's records do (LOADED_SPIN turns of a Lua loop a job, then the
 * ZREM), which parts what the records cost the worker's own code from what any such load on
 * Redis costs it; neighbour: the plain worker beside an idle-priority spinner on Redis's core.
 */
export type Mode = 'plain' | 'layout' | 'horizon' | 'loaded' | 'neighbour';

/** Turns of the loaded mode's Lua loop per job deleted: about 14 µs of this machine's Redis, what Horizon's records add. */
const LOADED_SPIN = Number(process.env.LOADED_SPIN ?? 4000);

/** For the loaded mode: every ZREM of this process (the worker's deletes) made a Lua step that first spins. */
function loadRedisDeletes(): void {
  const lua = `local n = 0 for i = 1, ${LOADED_SPIN} * #ARGV do n = n + i end return redis.call('ZREM', KEYS[1], unpack(ARGV))`;
  type Spinning = Redis & { lqbBenchSpinZrem?: (key: string, ...members: unknown[]) => Promise<number> };
  Redis.prototype.zrem = function (this: Spinning, key: string, ...members: unknown[]) {
    if (!this.lqbBenchSpinZrem) this.defineCommand('lqbBenchSpinZrem', { numberOfKeys: 1, lua });
    return this.lqbBenchSpinZrem!(key, ...members);
  };
}

/** Keeps this thread busy for `micros` µs, as a handler's own work would. */
function spin(micros: number): void {
  const until = performance.now() + micros / 1000;
  while (performance.now() < until);
}

async function run(mode: Mode, raw: Redis, profile?: string): Promise<Result> {
  const base = `lqb-bench-horizon-${randomBytes(4).toString('hex')}-`;
  const open = (horizon: boolean) =>
    connect({ redis: URL, prefix: `${base}database_`, telemetry: false, horizon: horizon ? { prefix: `${base}horizon:` } : false });
  const queue = await open(mode === 'layout' || mode === 'horizon');
  const workers = mode === 'layout' ? await open(false) : queue;
  try {
    // Dispatch is timed as the worker is, over the last JOBS pushes, once the first WARMUP have
    // warmed its code (with WARMUP=0, from the first push).
    let dispatchStart = process.cpuUsage();
    let dispatchMainStart = mainThreadCpu();
    let dispatchCountStart = uncounted;
    let timedFrom = 0;
    for (let done = 0; done < WARMUP + JOBS; done += CONCURRENCY) {
      if (done <= WARMUP && WARMUP < done + CONCURRENCY) {
        dispatchCountStart = await countFromNow();
        [dispatchStart, dispatchMainStart, timedFrom] = [process.cpuUsage(), mainThreadCpu(), done];
      }
      const batch = Array.from({ length: Math.min(CONCURRENCY, WARMUP + JOBS - done) }, (_, i) =>
        queue.dispatch(CLASS, { n: done + i, label: 'bench', ratio: 0.5, items: [] }),
      );
      await Promise.all(batch);
    }
    const perDispatch = (total: number) => total / (WARMUP + JOBS - timedFrom);
    const dispatched = process.cpuUsage(dispatchStart);
    const dispatchCpu = perDispatch(dispatched.user + dispatched.system);
    const dispatchMain = perDispatch(mainThreadCpu() - dispatchMainStart);
    const dispatchCount = await stopCounting();
    const dispatchInstructions = perDispatch(dispatchCount.all - dispatchCountStart.all);
    const dispatchMainInstructions = perDispatch(dispatchCount.main - dispatchCountStart.main);

    // The clock starts at the (WARMUP + 1)th job: its handler waits for Redis's count of its CPU.
    const startClock = async () => {
      const redisBefore = await redisCpuSeconds(raw);
      const profiler = profile ? await startProfile() : undefined;
      const counted = await countFromNow();
      return { redisBefore, profiler, counted, cpu: process.cpuUsage(), main: mainThreadCpu(), started: performance.now() };
    };
    let handled = 0;
    let timed: ReturnType<typeof startClock> | undefined;
    const worker = workers.worker(
      {
        [CLASS]: async () => {
          if (++handled === WARMUP + 1) await (timed = startClock());
          if (HANDLER_US > 0) spin(HANDLER_US);
        },
      },
      { stopWhenEmpty: true, sleep: 0, concurrency: CONCURRENCY, failer: false },
    );
    if (WARMUP === 0) await (timed = startClock());
    await worker.run();
    const { redisBefore, profiler, counted, cpu, main, started } = await timed!;
    const workerCount = await stopCounting();
    const workerUsage = process.cpuUsage(cpu);
    const workerCpu = microsPerJob(workerUsage);
    const workerSystem = workerUsage.system / JOBS;
    const workerMain = (mainThreadCpu() - main) / JOBS;
    const seconds = (performance.now() - started) / 1000;
    if (profiler) await profiler.stop(`${profile}.${mode}`);
    const workerRedisCpu = (((await redisCpuSeconds(raw)) - redisBefore) * 1e6) / JOBS;
    if (worker.stats().processed !== WARMUP + JOBS) throw new Error(`the worker ran ${worker.stats().processed} of ${WARMUP + JOBS} jobs`);
    return {
      workerJobsPerSecond: JOBS / seconds,
      workerCpu,
      workerSystem,
      workerRedisCpu,
      dispatchCpu,
      workerMain,
      dispatchMain,
      workerInstructions: (workerCount.all - counted.all) / JOBS,
      workerMainInstructions: (workerCount.main - counted.main) / JOBS,
      dispatchInstructions,
      dispatchMainInstructions,
    };
  } finally {
    await queue.close();
    if (workers !== queue) await workers.close();
    await dropPrefix(base);
  }
}

const child = process.env.HORIZON_BENCH_CHILD as Mode | undefined;
if (child) {
  const raw = new Redis(URL);
  if (child === 'loaded') loadRedisDeletes();
  // The neighbour mode is the plain worker; only what runs beside it differs.
  const result = await run(child === 'neighbour' ? 'plain' : child, raw, process.env.PROFILE);
  raw.disconnect();
  console.log(JSON.stringify(result));
  process.exit(0);
}
