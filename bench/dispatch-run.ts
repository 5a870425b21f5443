/**
 * One run of bench/dispatch.ts in a process of its own, for one tree and one mode: WARMUP
 * dispatches, then JOBS timed (or counted, under Valgrind), through the tree's `connect()` as a
 * library user has it (telemetry left to its default: `@opentelemetry/api` present, no SDK).
 * Its result is printed as JSON on the last line.
 *
 *   LQB_TREE=$PWD MODE=awaited|in-flight REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/dispatch-run.ts
 *   LQB_BUILD=src: the tree's src/ rather than its dist/ (build it first)
 *   PROFILE=FILE.cpuprofile: the timed part profiled (V8's CPU profile)
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Redis } from 'ioredis';
import { countFromNow, stopCounting } from './instructions.js';
import { mainThreadCpu } from './thread-cpu.mjs';
import { redisCpuSeconds } from './redis-target.js';

export type Mode = 'awaited' | 'in-flight' | 'laravel';

export interface RunResult {
  jobsPerSecond: number;
  /** This process's user + system CPU per dispatch, µs; and of it the kernel's (system: the socket's writes and reads). */
  nodeCpu: number;
  nodeSystem: number;
  /** The main thread's CPU per dispatch, µs (the rest is V8's compiler and collector threads); NaN off Linux. */
  nodeMain: number;
  /** Redis's user + system CPU per dispatch, µs (INFO cpu), a server the bench alone uses. */
  redisCpu: number;
  /** Instructions per dispatch under Valgrind (NaN otherwise): the process's and its main thread's. */
  instructions: number;
  mainInstructions: number;
  bytes: number;
}

/** The App\Jobs\Bridge\RecordJob of src/cli/demo.ts (bridgeRecordJob), by name: its properties in declaration order. */
export const CLASS = 'App\\Jobs\\Bridge\\RecordJob';
/** What php-fixture-gen/bench-push.php gives Laravel's push: a payload of about 1.5 KB. */
const ITEMS = Array.from({ length: 40 }, () => 'padding-to-a-kilobyte');
const props = (n: number) => ({
  tries: null,
  timeout: null,
  backoff: null,
  maxExceptions: null,
  n,
  label: 'bench',
  ratio: 0.5,
  items: ITEMS,
  flag: null,
});

interface Queue {
  dispatch(job: string, props: Record<string, unknown>): Promise<{ id: string | number | null }>;
  close(): Promise<void>;
}

/** `count` dispatches: one at a time, each awaited, or `inFlight` of them pending at once. */
async function dispatchMany(queue: Queue, from: number, count: number, inFlight: number): Promise<void> {
  if (inFlight <= 1) {
    for (let n = from; n < from + count; n++) await queue.dispatch(CLASS, props(n));
    return;
  }
  let next = from;
  const end = from + count;
  const lane = async () => {
    while (next < end) await queue.dispatch(CLASS, props(next++));
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, lane));
}

async function profiled(file: string | undefined, work: () => Promise<void>): Promise<void> {
  if (!file) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  await work();
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  writeFileSync(file, JSON.stringify(profile));
}

async function run(): Promise<RunResult> {
  const tree = process.env.LQB_TREE!;
  const mode = process.env.MODE as Mode;
  const url = process.env.REDIS_URL!;
  const jobs = Number(process.env.JOBS ?? 20_000);
  const warmup = Number(process.env.WARMUP ?? 20_000);
  const inFlight = mode === 'awaited' ? 1 : Number(process.env.IN_FLIGHT ?? 1000);
  const code = `${tree}/${process.env.LQB_BUILD === 'src' ? 'src' : 'dist'}`;
  const { connect } = (await import(`${code}/index.js`)) as { connect: (options: object) => Promise<Queue> };
  const prefix = `lqb-bench-dispatch-${randomBytes(4).toString('hex')}_`;
  // logger: false, so the one line about dispatching without shapes is not printed into the result.
  const queue = await connect({ redis: url, prefix, logger: false });
  const raw = new Redis(url);
  try {
    await dispatchMany(queue, 0, warmup, inFlight);
    const redisBefore = await redisCpuSeconds(raw);
    const counted = await countFromNow();
    const cpu = process.cpuUsage();
    const main = mainThreadCpu();
    const started = performance.now();
    await profiled(process.env.PROFILE, () => dispatchMany(queue, warmup, jobs, inFlight));
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const mainUsed = mainThreadCpu() - main;
    const count = await stopCounting();
    const redisCpu = ((await redisCpuSeconds(raw)) - redisBefore) * 1e6;
    const [sample] = await raw.lrange(`${prefix}queues:default`, 0, 0);
    return {
      jobsPerSecond: jobs / seconds,
      nodeCpu: (used.user + used.system) / jobs,
      nodeSystem: used.system / jobs,
      nodeMain: mainUsed / jobs,
      redisCpu: redisCpu / jobs,
      instructions: (count.all - counted.all) / jobs,
      mainInstructions: (count.main - counted.main) / jobs,
      bytes: Buffer.byteLength(sample ?? ''),
    };
  } finally {
    await queue.close();
    const keys = await raw.keys(`${prefix}*`);
    for (let at = 0; at < keys.length; at += 10_000) await raw.del(...keys.slice(at, at + 10_000));
    raw.disconnect();
  }
}

if (process.env.LQB_TREE) {
  console.log(JSON.stringify(await run()));
  process.exit(0);
}
