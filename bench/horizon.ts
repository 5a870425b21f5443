/**
 * What Horizon's records cost per job: a producer and a worker loop on no-op jobs, with and
 * without HorizonRecorder (prepare + pushed on push, reserved on pop, deleted on delete), the
 * worker's calls as the integration will make them. Prints jobs per second and this process's
 * CPU time per job for each mode, and the difference; the goal is under 15% of per-job CPU.
 * Runs alternate between the modes, so a machine whose speed drifts slows both alike.
 *
 *   npx tsx bench/horizon.ts            JOBS=5000 RUNS=5 CONCURRENCY=32
 */
import { randomBytes } from 'node:crypto';
import { buildJob, buildPayload } from '../src/laravel/index.js';
import { RedisQueue, connectRedis, type RedisJob } from '../src/redis/index.js';
import { HorizonRecorder } from '../src/horizon/index.js';
import { dropPrefix } from './scratch.js';

const JOBS = Number(process.env.JOBS ?? 5000);
const RUNS = Number(process.env.RUNS ?? 5);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Result {
  jobsPerSecond: number;
  cpuMicrosPerJob: number;
  /** The worker's part alone: pop, delete and their records. */
  workerCpuMicrosPerJob: number;
}

async function run(horizon: boolean): Promise<Result> {
  const base = `lqb-bench-horizon-${randomBytes(4).toString('hex')}-`;
  const queueClient = connectRedis({ url: URL, prefix: `${base}database_` });
  const horizonClient = connectRedis({ url: URL });
  const queue = new RedisQueue(queueClient, { defaultQueue: 'default' });
  const recorder = new HorizonRecorder(horizonClient, { prefix: `${base}horizon:` });
  const command = buildJob({ className: 'App\\Jobs\\Bridge\\RecordJob', properties: { n: 1, label: 'bench', ratio: 0.5, items: [] } });
  const payload = () => buildPayload(command).raw;

  const produce = async () => {
    const raw = payload();
    if (!horizon) return queue.pushRaw(raw);
    const prepared = recorder.prepare(raw);
    await queue.pushRaw(prepared);
    await recorder.pushed('default', prepared);
  };
  const consume = async () => {
    const job: RedisJob | null = await queue.pop();
    if (!job) return;
    if (horizon) await recorder.reserved('default', job.reserved);
    await queue.deleteReserved(job);
    if (horizon) await recorder.deleted('default', job.reserved);
  };

  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let done = 0; done < JOBS; done += CONCURRENCY)
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, JOBS - done) }, produce));
  const workerCpu = process.cpuUsage();
  for (let done = 0; done < JOBS; done += CONCURRENCY)
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, JOBS - done) }, consume));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const worker = process.cpuUsage(workerCpu);
  await dropPrefix(base);
  queueClient.disconnect();
  horizonClient.disconnect();
  return {
    jobsPerSecond: JOBS / seconds,
    cpuMicrosPerJob: (used.user + used.system) / JOBS,
    workerCpuMicrosPerJob: (worker.user + worker.system) / JOBS,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const results: Record<'plain' | 'horizon', Result[]> = { plain: [], horizon: [] };
await run(false); // warm-up
await run(true);
for (let i = 0; i < RUNS; i++) {
  results.plain.push(await run(false));
  results.horizon.push(await run(true));
}
for (const mode of ['plain', 'horizon'] as const) {
  const jps = median(results[mode].map((r) => r.jobsPerSecond));
  const cpu = median(results[mode].map((r) => r.cpuMicrosPerJob));
  const workerCpu = median(results[mode].map((r) => r.workerCpuMicrosPerJob));
  console.log(
    `${mode.padEnd(8)} ${jps.toFixed(0).padStart(7)} jobs/s  ${cpu.toFixed(1).padStart(7)} µs CPU per job (push + pop + delete), ${workerCpu.toFixed(1)} µs of it the worker's (pop + delete)`,
  );
}
const plainCpu = median(results.plain.map((r) => r.cpuMicrosPerJob));
const horizonCpu = median(results.horizon.map((r) => r.cpuMicrosPerJob));
const plainWorker = median(results.plain.map((r) => r.workerCpuMicrosPerJob));
const horizonWorker = median(results.horizon.map((r) => r.workerCpuMicrosPerJob));
console.log(
  `horizon's records: +${(horizonCpu - plainCpu).toFixed(1)} µs (+${(((horizonCpu - plainCpu) / plainCpu) * 100).toFixed(1)}%) CPU per job; the worker's part +${(horizonWorker - plainWorker).toFixed(1)} µs`,
);
