/**
 * What Horizon's records cost Redis, per job: Redis's own time in its scripts (INFO
 * commandstats, EVALSHA's and ZREM's microseconds), which no other client's load or this machine's
 * scheduling blurs the way it blurs a process's CPU. A worker's Node CPU follows Redis's: on a
 * machine whose cores Redis and Node share, every microsecond Redis spends on a job is one the
 * worker waits through in smaller, costlier turns (bench/horizon.ts shows the whole).
 *
 * For JOBS jobs laid out and recorded pending as Horizon's queue pushes them, BATCH at a time:
 * - the reserve step, without Horizon and with its JobReserved records written in the step;
 * - their deletes: without Horizon (one ZREM a turn); then each turn's completions (JobDeleted,
 *   with the metrics) batched by the recorder (one call a turn); and with the completions
 *   written in the delete's own step, as a worker writes them.
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
import { median } from './stats.js';

const JOBS = Number(process.env.JOBS ?? 20_000);
const BATCH = Number(process.env.BATCH ?? 8);
const RUNS = Number(process.env.RUNS ?? 5);
const URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const raw = new Redis(URL);

/** Microseconds Redis has spent in EVALSHA and ZREM (a delete without Horizon) since the last reset. */
async function scriptMicros(): Promise<number> {
  const stats = await raw.info('commandstats');
  const usec = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=\\d+,usec=(\\d+)`).exec(stats)?.[1] ?? 0);
  return usec('evalsha') + usec('zrem');
}

async function timed(work: () => Promise<void>): Promise<number> {
  await raw.config('RESETSTAT');
  await work();
  return (await scriptMicros()) / JOBS;
}

interface Round {
  reservePlain: number;
  reserveRecorded: number;
  deletePlain: number;
  /** The deletes alone (ZREM), then the recorder's batched completions of the same jobs. */
  deleteThenBatch: number;
  deleteRecorded: number;
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

/**
 * Each job deleted, BATCH in one turn, by `queue` (its completion written in the step when the
 * queue records), and with `recorder` each turn's completions then written by it, batched.
 */
async function deleteAll(queue: RedisQueue, jobs: RedisJob[], recorder?: HorizonRecorder): Promise<void> {
  for (let i = 0; i < jobs.length; i += BATCH) {
    const turn = jobs.slice(i, i + BATCH);
    await Promise.all(turn.map((job) => queue.deleteReserved(job, { runtimeMs: 1.25 })));
    if (recorder) await Promise.all(turn.map((job) => recorder.deleted('default', job.reservedBytes, { runtimeMs: 1.25 })));
  }
}

/**
 * plain: no Horizon; batch: the reserve's records in its step, the deletes as they are, then
 * the recorder's batched completions; step: the reserve's and the deletes' records in their steps.
 */
async function round(): Promise<Round> {
  const result = {} as Round;
  for (const mode of ['plain', 'batch', 'step'] as const) {
    const base = `lqb-bench-hzredis-${randomBytes(4).toString('hex')}-`;
    const { queueClient, horizonClient, options, plain } = await seeded(base);
    try {
      const recorder = new HorizonRecorder(horizonClient, { ...options, batch: true });
      const reserving = mode === 'plain' ? plain : new RedisQueue(queueClient, { horizon: recorder.queueRecords() });
      let jobs: RedisJob[] = [];
      const reserve = await timed(async () => void (jobs = await reserveAll(reserving)));
      if (jobs.length !== JOBS) throw new Error(`reserved ${jobs.length} of ${JOBS} jobs`);
      if (mode === 'plain') [result.reservePlain, result.deletePlain] = [reserve, await timed(() => deleteAll(plain, jobs))];
      else if (mode === 'batch')
        [result.reserveRecorded, result.deleteThenBatch] = [reserve, await timed(() => deleteAll(plain, jobs, recorder))];
      else result.deleteRecorded = await timed(() => deleteAll(reserving, jobs));
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

const of = (field: keyof Round) => median(rounds.map((r) => r[field])).toFixed(1);
console.log(`Redis's time in scripts per job, ${JOBS} Horizon jobs, ${BATCH} a call, median of ${RUNS} rounds\n`);
console.log('| step | Redis µs/job |');
console.log('|---|---:|');
console.log(`| reserve, without Horizon | ${of('reservePlain')} |`);
console.log(`| reserve, with JobReserved's records in the step | ${of('reserveRecorded')} |`);
console.log(`| deletes, without Horizon | ${of('deletePlain')} |`);
console.log(`| deletes, then their completions (JobDeleted) batched by the recorder | ${of('deleteThenBatch')} |`);
console.log(`| deletes with their completions in the step (a worker's) | ${of('deleteRecorded')} |`);
