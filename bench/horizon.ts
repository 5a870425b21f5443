/**
 * What Horizon's records cost per job, measured on the real thing: `connect().worker()` running
 * the same no-op jobs with and without `horizon` (the worker's records: reserved, then completed
 * with its metrics; the supervisor's heartbeat), and `connect().dispatch()` pushing them with and
 * without it (prepare and the pending record). Prints, for each mode, jobs per second and this
 * process's CPU time per job, and the difference; the goal is under 15% of per-job CPU.
 * Runs alternate between the modes, so a machine whose speed drifts slows both alike. Redis's
 * own CPU per job is printed too (INFO's used_cpu), noisy on a server others share.
 *
 *   npx tsx bench/horizon.ts            JOBS=4000 RUNS=5 CONCURRENCY=16
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { connect } from '../src/index.js';
import { dropPrefix } from './scratch.js';

const JOBS = Number(process.env.JOBS ?? 4000);
const RUNS = Number(process.env.RUNS ?? 5);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CLASS = 'App\\Jobs\\Bridge\\RecordJob';

interface Result {
  /** The worker: jobs per second, this process's CPU µs per job, Redis's CPU µs per job. */
  workerJobsPerSecond: number;
  workerCpu: number;
  workerRedisCpu: number;
  /** The producer: CPU µs per dispatch. */
  dispatchCpu: number;
}

/** Redis's CPU seconds so far (user + system, its main thread and the rest). */
async function redisCpu(raw: Redis): Promise<number> {
  const info = await raw.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

const microsPerJob = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / JOBS;

async function run(horizon: boolean, raw: Redis): Promise<Result> {
  const base = `lqb-bench-horizon-${randomBytes(4).toString('hex')}-`;
  const queue = await connect({
    redis: URL,
    prefix: `${base}database_`,
    telemetry: false,
    horizon: horizon ? { prefix: `${base}horizon:` } : false,
  });
  try {
    const dispatchStart = process.cpuUsage();
    for (let done = 0; done < JOBS; done += CONCURRENCY) {
      const batch = Array.from({ length: Math.min(CONCURRENCY, JOBS - done) }, (_, i) =>
        queue.dispatch(CLASS, { n: done + i, label: 'bench', ratio: 0.5, items: [] }),
      );
      await Promise.all(batch);
    }
    const dispatchCpu = microsPerJob(process.cpuUsage(dispatchStart));

    const worker = queue.worker(
      { [CLASS]: async () => undefined },
      { stopWhenEmpty: true, sleep: 0, concurrency: CONCURRENCY, failer: false },
    );
    const redisBefore = await redisCpu(raw);
    const cpu = process.cpuUsage();
    const started = performance.now();
    await worker.run();
    const seconds = (performance.now() - started) / 1000;
    const workerCpu = microsPerJob(process.cpuUsage(cpu));
    const workerRedisCpu = (((await redisCpu(raw)) - redisBefore) * 1e6) / JOBS;
    if (worker.stats().processed !== JOBS) throw new Error(`the worker ran ${worker.stats().processed} of ${JOBS} jobs`);
    return { workerJobsPerSecond: JOBS / seconds, workerCpu, workerRedisCpu, dispatchCpu };
  } finally {
    await queue.close();
    await dropPrefix(base);
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const percent = (more: number, base: number) => `${more >= base ? '+' : ''}${(((more - base) / base) * 100).toFixed(1)}%`;

const raw = new Redis(URL);
const results: Record<'plain' | 'horizon', Result[]> = { plain: [], horizon: [] };
await run(false, raw); // warm-up
await run(true, raw);
for (let i = 0; i < RUNS; i++) {
  results.plain.push(await run(false, raw));
  results.horizon.push(await run(true, raw));
}
raw.disconnect();

const of = (mode: 'plain' | 'horizon', field: keyof Result) => median(results[mode].map((r) => r[field]));
console.log(`${JOBS} no-op jobs, concurrency ${CONCURRENCY}, median of ${RUNS} runs per mode`);
for (const mode of ['plain', 'horizon'] as const) {
  console.log(
    `${mode.padEnd(8)} worker ${of(mode, 'workerJobsPerSecond').toFixed(0).padStart(6)} jobs/s, ${of(mode, 'workerCpu').toFixed(1).padStart(6)} µs CPU per job (Redis ${of(mode, 'workerRedisCpu').toFixed(1)} µs); dispatch ${of(mode, 'dispatchCpu').toFixed(1)} µs CPU per job`,
  );
}
console.log(
  `horizon's records: worker ${percent(of('horizon', 'workerCpu'), of('plain', 'workerCpu'))} CPU per job (+${(of('horizon', 'workerCpu') - of('plain', 'workerCpu')).toFixed(1)} µs), ` +
    `${percent(of('horizon', 'workerJobsPerSecond'), of('plain', 'workerJobsPerSecond'))} jobs/s, Redis ${percent(of('horizon', 'workerRedisCpu'), of('plain', 'workerRedisCpu'))}; ` +
    `dispatch ${percent(of('horizon', 'dispatchCpu'), of('plain', 'dispatchCpu'))} CPU per job`,
);
