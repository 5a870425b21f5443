/**
 * Worker and producer throughput, side by side in one run on the same Redis:
 *   - the Node worker (one process) vs Laravel 8.83's queue:work (one process) on no-op jobs
 *     of about 1 KB, and Redis's own ceiling for the pop step (the pop script alone, pipelined);
 *   - Node's push vs Laravel's Queue::push;
 *   - the Node worker's memory across a long run, and push-to-handler latency with block_for.
 *
 *   npx tsx bench/worker.ts          JOBS=20000 SOAK=200000 for other sizes
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { RedisQueue, connectRedis, registerSteps, type RedisClient } from '../src/redis/index.js';
import { Worker } from '../src/worker/index.js';
import { dropPrefix } from './scratch.js';
import { REDIS_URL, redisEnv } from './redis-target.js';
import { recordPayload as payload } from './record-job.js';

const root = new URL('..', import.meta.url).pathname;
const JOBS = Number(process.env.JOBS ?? 20_000);
const SOAK = Number(process.env.SOAK ?? 200_000);
const QUEUE = 'bench';
const prefix = `lqb-bench-${randomBytes(3).toString('hex')}:`;
const client: RedisClient = connectRedis({ url: REDIS_URL, prefix });
const queue = new RedisQueue(client, { defaultQueue: QUEUE });
const env = {
  ...process.env,
  ...redisEnv,
  REDIS_PREFIX: prefix,
  QUEUE_NAME: QUEUE,
  LQB_RECORD_FILE: '/dev/null',
  LQB_FAILED_DB: `/tmp/${prefix.replace(/:$/, '')}.sqlite`,
};

async function fill(count: number): Promise<number> {
  await queue.clear();
  const sample = payload(0);
  for (let i = 0; i < count; i += 1000) await queue.bulkRaw(Array.from({ length: Math.min(1000, count - i) }, (_, j) => payload(i + j)));
  return Buffer.byteLength(sample);
}

async function nodeWorker(concurrency: number): Promise<number> {
  await fill(JOBS);
  const worker = new Worker(
    queue,
    { 'App\\Jobs\\Bridge\\RecordJob': () => undefined },
    { queues: [QUEUE], stopWhenEmpty: true, sleep: 0, concurrency, timeout: 0, memory: 4096 },
    // No-op jobs never fail: nowhere to record failures but the events.
    { failer: false },
  );
  const start = performance.now();
  await worker.run();
  return JOBS / ((performance.now() - start) / 1000);
}

async function laravelWorker(): Promise<number> {
  await fill(JOBS);
  const start = performance.now();
  execFileSync('php', [`${root}php-fixture-gen/laravel-worker.php`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', '--timeout=0'], {
    env,
    stdio: 'ignore',
  });
  return JOBS / ((performance.now() - start) / 1000);
}

/** The pop step alone, 100 calls per pipeline: Redis's ceiling for any Laravel-compatible consumer. */
async function popCeiling(): Promise<number> {
  await fill(JOBS);
  registerSteps(client);
  const key = `queues:${QUEUE}`;
  const start = performance.now();
  for (let done = 0; done < JOBS; done += 100) {
    const pipeline = client.pipeline();
    // reserve.lua with COUNT 1 and no migrations is the pop step alone: Redis's clock, retry_after 90.
    for (let i = 0; i < 100; i++)
      (pipeline as unknown as Record<string, (...a: unknown[]) => void>).lqbReserve!(
        key,
        `${key}:delayed`,
        `${key}:reserved`,
        `${key}:notify`,
        '',
        90,
        1,
        0,
        0,
        -1,
        0,
      );
    await pipeline.exec();
  }
  return JOBS / ((performance.now() - start) / 1000);
}

async function nodePush(pipelined: boolean): Promise<number> {
  await queue.clear();
  const payloads = Array.from({ length: JOBS }, (_, i) => payload(i));
  const start = performance.now();
  if (pipelined) await queue.bulkRaw(payloads);
  else for (const p of payloads) await queue.pushRaw(p);
  return JOBS / ((performance.now() - start) / 1000);
}

/** Building each payload (serialize + envelope) and pushing it, one await at a time. */
async function nodeBuildAndPush(): Promise<number> {
  await queue.clear();
  const start = performance.now();
  for (let i = 0; i < JOBS; i++) await queue.pushRaw(payload(i));
  return JOBS / ((performance.now() - start) / 1000);
}

function laravelPush(): number {
  const out = execFileSync('php', [`${root}php-fixture-gen/bench-push.php`, String(JOBS)], { env, encoding: 'utf8' });
  const { jobs, seconds } = JSON.parse(out) as { jobs: number; seconds: number };
  return jobs / seconds;
}

/** RSS after the first tenth of a long run and at its end. */
async function memory(): Promise<{ early: number; late: number; jobs: number }> {
  await queue.clear();
  let processed = 0;
  let early = 0;
  const worker = new Worker(
    queue,
    {
      'App\\Jobs\\Bridge\\RecordJob': () => {
        processed++;
        if (processed === Math.floor(SOAK / 10)) early = process.memoryUsage().rss;
      },
    },
    { queues: [QUEUE], stopWhenEmpty: true, sleep: 0, timeout: 0, concurrency: 8, memory: 4096 },
    { failer: false },
  );
  const template = payload(0);
  for (let i = 0; i < SOAK; i += 5000)
    await queue.bulkRaw(
      Array.from({ length: Math.min(5000, SOAK - i) }, () =>
        template.replace(/"id":"[A-Za-z0-9]{32}"/, `"id":"${randomBytes(16).toString('hex')}"`),
      ),
    );
  await worker.run();
  return { early, late: process.memoryUsage().rss, jobs: processed };
}

/** Push-to-handler time with block_for, one job every 5 ms. */
async function latency(): Promise<{ p50: number; p99: number; samples: number }> {
  await queue.clear();
  const blocking = new RedisQueue(client, { defaultQueue: QUEUE, blockFor: 1 });
  const samples: number[] = [];
  const worker = new Worker(
    blocking,
    {
      'App\\Jobs\\Bridge\\RecordJob': (job) =>
        void samples.push(performance.timeOrigin + performance.now() - Number((job.command.items as { at: number }).at)),
    },
    { queues: [QUEUE], sleep: 0, timeout: 0, memory: 4096 },
  );
  const running = worker.run();
  await new Promise((r) => setTimeout(r, 200));
  const producer = new RedisQueue(connectRedis({ url: REDIS_URL, prefix }), { defaultQueue: QUEUE });
  for (let i = 0; i < 1000; i++) {
    await producer.pushRaw(payload(i, { at: performance.timeOrigin + performance.now() }));
    await new Promise((r) => setTimeout(r, 5));
  }
  const deadline = Date.now() + 30_000;
  while (samples.length < 1000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  void worker.stop();
  await running;
  await blocking.close();
  producer.client.disconnect();
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length * 0.5)]!, p99: samples[Math.floor(samples.length * 0.99)]!, samples: samples.length };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
try {
  const size = await fill(1);
  const ceiling = await popCeiling();
  const node1 = await nodeWorker(1);
  const node16 = await nodeWorker(16);
  const node64 = await nodeWorker(64);
  const node256 = await nodeWorker(256);
  const php = await laravelWorker();
  const pushSequential = await nodePush(false);
  const pushPipelined = await nodePush(true);
  const buildAndPush = await nodeBuildAndPush();
  const phpPush = laravelPush();
  const mem = await memory();
  const lat = await latency();
  console.log(`Jobs of ${size} bytes, ${fmt(JOBS)} per run, Redis ${REDIS_URL}, one process each.\n`);
  console.log('| what | jobs/s | vs Laravel | vs Redis pop ceiling |');
  console.log('|---|---:|---:|---:|');
  console.log(`| Redis: pop step alone, pipelined (ceiling) | ${fmt(ceiling)} |  | 100% |`);
  console.log(`| Laravel 8.83 queue:work | ${fmt(php)} | 1.0× | ${((100 * php) / ceiling).toFixed(0)}% |`);
  console.log(`| lqb worker, concurrency 1 | ${fmt(node1)} | ${(node1 / php).toFixed(1)}× | ${((100 * node1) / ceiling).toFixed(0)}% |`);
  console.log(
    `| lqb worker, concurrency 16 | ${fmt(node16)} | ${(node16 / php).toFixed(1)}× | ${((100 * node16) / ceiling).toFixed(0)}% |`,
  );
  console.log(
    `| lqb worker, concurrency 64 | ${fmt(node64)} | ${(node64 / php).toFixed(1)}× | ${((100 * node64) / ceiling).toFixed(0)}% |`,
  );
  console.log(
    `| lqb worker, concurrency 256 | ${fmt(node256)} | ${(node256 / php).toFixed(1)}× | ${((100 * node256) / ceiling).toFixed(0)}% |`,
  );
  console.log(`| Laravel 8.83 Queue::push | ${fmt(phpPush)} | 1.0× |  |`);
  console.log(`| lqb pushRaw, one await each | ${fmt(pushSequential)} | ${(pushSequential / phpPush).toFixed(1)}× |  |`);
  console.log(`| lqb bulkRaw (1,000 per call) | ${fmt(pushPipelined)} | ${(pushPipelined / phpPush).toFixed(1)}× |  |`);
  console.log(`| lqb build payload + pushRaw, one await each | ${fmt(buildAndPush)} | ${(buildAndPush / phpPush).toFixed(1)}× |  |`);
  console.log(
    `\nMemory over ${fmt(mem.jobs)} jobs (concurrency 8): RSS ${(mem.early / 2 ** 20).toFixed(1)} MB after the first tenth, ${(mem.late / 2 ** 20).toFixed(1)} MB at the end (${((100 * (mem.late - mem.early)) / mem.early).toFixed(1)}% growth).`,
  );
  console.log(
    `Push-to-handler latency with block_for=1, one job every 5 ms: p50 ${lat.p50.toFixed(2)} ms, p99 ${lat.p99.toFixed(2)} ms over ${lat.samples} jobs.`,
  );
} finally {
  await queue.clear();
  await queue.close();
  await dropPrefix(prefix);
  client.disconnect();
}
