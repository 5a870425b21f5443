/**
 * What Horizon's records cost Redis, per job: Redis's own time in its scripts (INFO
 * commandstats, EVALSHA's microseconds), which no other client's load or this machine's
 * scheduling blurs the way it blurs a process's CPU. A worker's Node CPU follows Redis's: on a
 * machine whose cores Redis and Node share, every microsecond Redis spends on a job is one the
 * worker waits through in smaller, costlier turns (bench/horizon.ts shows the whole).
 *
 * For JOBS jobs laid out and recorded pending as Horizon's queue pushes them, BATCH at a time:
 * - the reserve step, without Horizon and with its JobReserved records written in the step;
 * - their completions (JobDeleted, with the metrics), one step a job as a producer-side caller
 *   writes them, and batched as a worker writes them (one call for a turn's completions).
 * Each a median of RUNS rounds, on a prefix of its own.
 *
 *   npx tsx bench/horizon-redis.ts            JOBS=20000 BATCH=8 RUNS=5
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { connectRedis, RedisQueue, type RedisJob } from '../src/redis/index.js';
import { HorizonRecorder } from '../src/horizon/HorizonRecorder.js';
import { buildPayload } from '../src/laravel/index.js';
import { bridgeRecordJob } from '../src/cli/demo.js';
import { dropPrefix } from './scratch.js';

const JOBS = Number(process.env.JOBS ?? 20_000);
const BATCH = Number(process.env.BATCH ?? 8);
const RUNS = Number(process.env.RUNS ?? 5);
const URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const raw = new Redis(URL);

/** Microseconds Redis has spent in EVALSHA since the last reset. */
async function scriptMicros(): Promise<number> {
  const stats = await raw.info('commandstats');
  return Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(stats)?.[1] ?? 0);
}

async function timed(work: () => Promise<void>): Promise<number> {
  await raw.config('RESETSTAT');
  await work();
  return (await scriptMicros()) / JOBS;
}

interface Round {
  reservePlain: number;
  reserveRecorded: number;
  completedEach: number;
  completedBatched: number;
}

/** JOBS Horizon payloads pushed and recorded pending, on a fresh prefix. */
async function seeded(base: string) {
  const queueClient = connectRedis({ url: URL, prefix: `${base}database_` });
  const horizonClient = connectRedis({ url: URL });
  const options = { prefix: `${base}horizon:` };
  const producer = new HorizonRecorder(horizonClient, options);
  const payloads = Array.from({ length: JOBS }, (_, n) =>
    producer.prepare(buildPayload(bridgeRecordJob({ n, label: 'bench', ratio: 0.5, items: [] })).raw),
  );
  const plain = new RedisQueue(queueClient);
  for (let i = 0; i < JOBS; i += 500) {
    const slice = payloads.slice(i, i + 500);
    await plain.bulkRaw(slice);
    await Promise.all(slice.map((payload) => producer.pushed('default', payload)));
  }
  return { queueClient, horizonClient, options, plain };
}

/** Every job reserved, BATCH a call, by `queue`. */
async function reserveAll(queue: RedisQueue): Promise<RedisJob[]> {
  const jobs: RedisJob[] = [];
  for (;;) {
    const taken = await queue.popMany('default', BATCH);
    if (taken.length === 0) return jobs;
    jobs.push(...taken);
  }
}

/** Each job's completion, BATCH in one turn, through `recorder`. */
async function completeAll(recorder: HorizonRecorder, jobs: RedisJob[]): Promise<void> {
  for (let i = 0; i < jobs.length; i += BATCH)
    await Promise.all(jobs.slice(i, i + BATCH).map((job) => recorder.deleted('default', job.reservedBytes, { runtimeMs: 1.25 })));
}

async function round(): Promise<Round> {
  const result = {} as Round;
  for (const recorded of [false, true]) {
    const base = `lqb-bench-hzredis-${randomBytes(4).toString('hex')}-`;
    const { queueClient, horizonClient, options, plain } = await seeded(base);
    try {
      const batched = new HorizonRecorder(horizonClient, { ...options, batch: recorded });
      const queue = recorded ? new RedisQueue(queueClient, { horizon: batched.queueRecords() }) : plain;
      let jobs: RedisJob[] = [];
      const reserve = await timed(async () => void (jobs = await reserveAll(queue)));
      if (jobs.length !== JOBS) throw new Error(`reserved ${jobs.length} of ${JOBS} jobs`);
      const completed = await timed(() => completeAll(batched, jobs));
      if (recorded) [result.reserveRecorded, result.completedBatched] = [reserve, completed];
      else [result.reservePlain, result.completedEach] = [reserve, completed];
    } finally {
      queueClient.disconnect();
      horizonClient.disconnect();
      await dropPrefix(base);
    }
  }
  return result;
}

const rounds: Round[] = [];
for (let i = 0; i < RUNS; i++) rounds.push(await round());
raw.disconnect();

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const of = (field: keyof Round) => median(rounds.map((r) => r[field])).toFixed(1);
console.log(`Redis's time in scripts per job, ${JOBS} Horizon jobs, ${BATCH} a call, median of ${RUNS} rounds\n`);
console.log('| step | Redis µs/job |');
console.log('|---|---:|');
console.log(`| reserve, without Horizon | ${of('reservePlain')} |`);
console.log(`| reserve, with JobReserved's records in the step | ${of('reserveRecorded')} |`);
console.log(`| completions (JobDeleted), one step each | ${of('completedEach')} |`);
console.log(`| completions, batched as a worker writes them | ${of('completedBatched')} |`);
