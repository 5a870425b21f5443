/**
 * What Horizon's records of a worker cost Node alone, without the worker around them: the
 * recorder a worker runs (horizonWorkerRecorder) told of JOBS jobs taken up and completed,
 * CONCURRENCY at a time, each group's events in one turn of the event loop as a worker's are,
 * onto real Redis. Prints this process's CPU per job, median of RUNS runs. Steadier than
 * bench/horizon.ts on a busy machine (no worker, no queue), for comparing ways of writing them.
 *
 *   npx tsx bench/horizon-records.ts            JOBS=20000 RUNS=7 CONCURRENCY=16
 *   PROFILE=/tmp/records.cpuprofile …           one more run first, its timed part profiled
 */
import { randomBytes } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { connectRedis } from '../src/redis/index.js';
import { RedisJob } from '../src/redis/RedisJob.js';
import { HorizonRecorder } from '../src/horizon/HorizonRecorder.js';
import { horizonWorkerRecorder } from '../src/horizon/workerRecorder.js';
import { buildPayload } from '../src/laravel/index.js';
import { bridgeRecordJob } from '../src/cli/demo.js';
import type { JobRecord, WorkerEvent } from '../src/worker/types.js';
import { dropPrefix } from './scratch.js';

const JOBS = Number(process.env.JOBS ?? 20_000);
const RUNS = Number(process.env.RUNS ?? 7);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);

const client = connectRedis({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });

/** The jobs as the worker holds them once run: reserved bytes as Redis sent them, the payload decoded. */
function records(base: string): JobRecord[] {
  const recorder = new HorizonRecorder(client, { prefix: `${base}horizon:` });
  return Array.from({ length: JOBS }, (_, n) => {
    const raw = recorder.prepare(buildPayload(bridgeRecordJob({ n, label: 'bench', ratio: 0.5, items: [] })).raw);
    const reserved = Buffer.from(raw.replace(/"attempts":0/, '"attempts":1'));
    const job = new RedisJob(undefined as never, 'default', raw, reserved);
    return {
      job,
      name: 'App\\Jobs\\Bridge\\RecordJob',
      payload: job.payload,
      startedAt: performance.now(),
      deleted: true,
      failedRecorded: false,
    };
  });
}

async function run(profile?: string): Promise<number> {
  const base = `lqb-bench-hzrec-${randomBytes(4).toString('hex')}-`;
  const jobs = records(base);
  const recorder = (await horizonWorkerRecorder(new HorizonRecorder(client, { prefix: `${base}horizon:`, batch: true }))({
    warn: console.warn,
  } as never))!;
  const event = (name: WorkerEvent['event']) => ({ event: name }) as WorkerEvent;
  const session = profile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 50 });
    await session.post('Profiler.start');
  }
  const cpu = process.cpuUsage();
  for (let i = 0; i < JOBS; i += CONCURRENCY) {
    const group = jobs.slice(i, i + CONCURRENCY);
    for (const record of group) recorder.processing!(record, event('processing'));
    await nextTurn();
    for (const record of group) recorder.outcome!(record, event('processed'));
    await nextTurn();
  }
  await recorder.close!();
  const used = process.cpuUsage(cpu);
  if (session) writeFileSync(profile!, JSON.stringify((await session.post('Profiler.stop')).profile));
  await dropPrefix(base);
  return (used.user + used.system) / JOBS;
}

await run(); // warm-up
if (process.env.PROFILE) await run(process.env.PROFILE);
const results: number[] = [];
for (let i = 0; i < RUNS; i++) results.push(await run());
results.sort((a, b) => a - b);
console.log(
  `Horizon's records of ${JOBS} jobs, ${CONCURRENCY} per turn: ${results[Math.floor(RUNS / 2)]!.toFixed(2)} µs CPU per job (median of ${RUNS}; ${results.map((r) => r.toFixed(1)).join(' ')})`,
);
client.disconnect();
