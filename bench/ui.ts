/**
 * The dashboard on a large app: how long each page's own API takes, and what an idle dashboard
 * costs. Not a test: it prints what it measured.
 *
 *   npx tsx bench/ui.ts        (JOBS=100000, FAILED=100000, ROUNDS=20, IDLE_SECONDS=30, CHROMIUM_PATH=/usr/bin/chromium)
 *
 * It starts a redis-server of its own on a free port (or takes REDIS_URL), pushes JOBS ready jobs
 * and JOBS delayed ones (built by the library's own builder, as a Laravel app's would be: a command
 * with a few properties and a model) and a job of 50 MB at the head of the ready list and among
 * the delayed, writes FAILED failed_jobs rows (one of them the 50 MB job, with a megabyte of
 * exception) under a prefix of its own, serves createDashboard's handler on a loopback port, and
 * times, ROUNDS times each, every page's API call: the overview, the first, a middle and the last
 * page of ready and delayed jobs and of failed jobs, the failed list filtered by class and its
 * count, the 50 MB job's own page, a failed job's page by uuid, batches, who runs what, workers,
 * Node's completed jobs; a search window (no goal: a search reads); then, in Debian's chromium,
 * the page loaded until the queue's counts show, and a job list until its rows show. Last, the
 * built `lqb ui` alone on the same data: its CPU over IDLE_SECONDS with no visitor, and with one
 * page open polling every 2 s, as a share of one core (from /proc/PID/stat).
 * Everything it pushed is deleted at the end.
 *
 *   CONNECTION=database npx tsx bench/ui.ts   (QUEUE_DB=sqlite file by default, or mysql://, postgres://)
 *
 * does the same on the database connection: a jobs table made by Laravel 8.83's own Schema
 * builder (php-fixture-gen/laravel-database-queue.php create-table), JOBS ready rows and JOBS
 * delayed ones inserted as DatabaseQueue inserts them (a thousand a statement), the dashboard
 * reading the table (LIMIT/OFFSET by id), and the table dropped at the end.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { databaseConfig, openDatabase, quoteName } from '../src/database/index.js';
import { buildJob, buildModelIdentifier, buildPayload } from '../src/laravel/index.js';
import { RedisQueue, connectRedis } from '../src/redis/index.js';
import { createDashboard } from '../src/ui/index.js';
import { DatabaseUuidFailedJobProvider } from '../src/worker/index.js';
import { ownRedisUnlessGiven, REDIS_URL } from './redis-target.js';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

const JOBS = Number(process.env.JOBS ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 20);
const FAILED = Number(process.env.FAILED ?? 100_000);
const IDLE_SECONDS = Number(process.env.IDLE_SECONDS ?? 30);
const HUGE_BYTES = 50 * 2 ** 20;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const prefix = `lqb-bench-ui-${randomBytes(4).toString('hex')}:`;
const dir = mkdtempSync(join(tmpdir(), 'lqb-bench-ui-'));
const CONNECTION = process.env.CONNECTION === 'database' ? 'database' : 'redis';
const QUEUE_DB = process.env.QUEUE_DB ?? join(dir, 'queue.sqlite');
const TABLE = `lqb_bench_${randomBytes(4).toString('hex')}_jobs`;

/** php-fixture-gen/laravel-database-queue.php OP on the bench's table: Laravel's own Schema builder. */
function laravelTable(op: 'create-table' | 'drop-table'): void {
  execFileSync('php', [join(import.meta.dirname, '../php-fixture-gen/laravel-database-queue.php'), op], {
    env: { ...process.env, LQB_QUEUE_DB: QUEUE_DB, LQB_JOBS_TABLE: TABLE, REDIS_PREFIX: prefix },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** JOBS ready rows and JOBS delayed ones, as DatabaseQueue::pushToDatabase writes a row (payloads as the database driver builds them). */
async function fillTable(): Promise<void> {
  laravelTable('create-table');
  const db = openDatabase(databaseConfig(QUEUE_DB));
  const now = Math.floor(Date.now() / 1000);
  const columns = ['queue', 'attempts', 'reserved_at', 'available_at', 'created_at', 'payload']
    .map((c) => quoteName(db.dialect, c))
    .join(', ');
  // The 50 MB job, ready and first in id order: the first page meets it.
  await db.query(`insert into ${quoteName(db.dialect, TABLE)} (${columns}) values ('big', 0, null, ?, ?, ?)`, [
    now,
    now,
    hugePayload('database'),
  ]);
  for (const delayed of [false, true]) {
    for (let start = 0; start < JOBS; start += 1000) {
      const count = Math.min(1000, JOBS - start);
      const values: unknown[] = [];
      for (let i = 0; i < count; i++)
        values.push('big', 0, null, delayed ? now + 86_400 + start + i : now, now, payload(start + i, 'database'));
      await db.query(
        `insert into ${quoteName(db.dialect, TABLE)} (${columns}) values ${Array(count).fill('(?, ?, ?, ?, ?, ?)').join(', ')}`,
        values,
      );
    }
  }
  await db.close();
}

function payload(n: number, driver: 'redis' | 'database' = 'redis'): string {
  const user = buildModelIdentifier({ class: 'App\\Models\\User', id: n });
  const raw = buildPayload(
    buildJob({ className: 'App\\Jobs\\SendInvoice', properties: { invoiceId: n, amount: n * 1.5, user, lines: [n, n + 1, n + 2] } }),
  ).raw;
  // Laravel's DatabaseQueue leaves out the id and attempts the Redis queue appends: the row's columns hold them.
  return driver === 'database' ? raw.replace(/,"id":"[^"]*","attempts":0\}$/, '}') : raw;
}

/** The 50 MB job: a command whose one property is 50 MB of text. */
const hugePayload = (driver: 'redis' | 'database' = 'redis') => {
  const raw = buildPayload(buildJob({ className: 'App\\Jobs\\ImportFeed', properties: { feed: 'x'.repeat(HUGE_BYTES) } })).raw;
  return driver === 'database' ? raw.replace(/,"id":"[^"]*","attempts":0\}$/, '}') : raw;
};

/** FAILED rows in failed_jobs, a thousand a statement; the first is the 50 MB job with a megabyte of exception. */
async function fillFailed(file: string): Promise<string> {
  const failer = DatabaseUuidFailedJobProvider.fromUrl(file);
  const huge = hugePayload();
  await failer.log(
    'redis',
    'big',
    huge,
    `RuntimeException: feed too large\n${'#0 /app/Jobs/ImportFeed.php(12): handle()\n'.repeat(25_000)}`,
  );
  await failer.close();
  const db = openDatabase(databaseConfig(file));
  const columns = ['uuid', 'connection', 'queue', 'payload', 'exception', 'failed_at'].join(', ');
  const at = new Date().toISOString().slice(0, 19).replace('T', ' ');
  for (let start = 1; start < FAILED; start += 1000) {
    const count = Math.min(1000, FAILED - start);
    const values: unknown[] = [];
    for (let i = 0; i < count; i++) {
      const raw = payload(start + i);
      values.push(
        (JSON.parse(raw) as { uuid: string }).uuid,
        'redis',
        'big',
        raw,
        `RuntimeException: invoice ${start + i} failed\n#0 /app/Jobs/SendInvoice.php(30): handle()`,
        at,
      );
    }
    await db.query(`insert into failed_jobs (${columns}) values ${Array(count).fill('(?, ?, ?, ?, ?, ?)').join(', ')}`, values);
  }
  await db.close();
  return (JSON.parse(huge.slice(0, 200).replace(/,"displayName".*$/, '}')) as { uuid: string }).uuid;
}

async function fill(): Promise<void> {
  const client = connectRedis({ url: REDIS_URL, prefix });
  const queue = new RedisQueue(client);
  const due = Math.floor(Date.now() / 1000) + 86_400;
  for (let start = 0; start < JOBS; start += 5000) {
    const batch = Array.from({ length: Math.min(5000, JOBS - start) }, (_, i) => payload(start + i));
    await queue.bulkRaw(batch, 'big');
    const pipeline = client.pipeline();
    batch.forEach((p, i) => pipeline.zadd('queues:big:delayed', due + start + i, p));
    await pipeline.exec();
  }
  // The 50 MB job where a page meets it first: the head of the ready list, and among the delayed.
  const huge = hugePayload();
  await client.lpush('queues:big', huge);
  await client.zadd('queues:big:delayed', due + Math.floor(JOBS / 2), huge);
  client.disconnect();
}

/** Median and 95th percentile of ROUNDS timings of `task`, in ms. */
async function time(task: () => Promise<unknown>): Promise<{ median: number; p95: number }> {
  const ms: number[] = [];
  await task();
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    await task();
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]! * 10) / 10;
  return { median: at(0.5), p95: at(0.95) };
}

async function main(): Promise<void> {
  const filling = performance.now();
  await (CONNECTION === 'database' ? fillTable() : fill());
  const hugeFailed = await fillFailed(join(dir, 'failed.sqlite'));
  console.log(
    `pushed ${JOBS} ready and ${JOBS} delayed jobs (${CONNECTION}, a 50 MB one ${CONNECTION === 'redis' ? 'at the head and among the delayed' : 'first'}) and ${FAILED} failed_jobs rows (a 50 MB one) in ${Math.round(performance.now() - filling)} ms`,
  );
  const rssBefore = process.memoryUsage().rss;
  const settings =
    CONNECTION === 'database'
      ? { connection: 'database', queueDb: QUEUE_DB, jobsTable: TABLE, cachePrefix: prefix }
      : { redis: REDIS_URL, prefix };
  const dashboard = createDashboard({ settings: { ...settings, failedDb: join(dir, 'failed.sqlite') }, queues: ['big'] });
  const server = createServer(dashboard.handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const get = async (path: string) => {
    const response = await fetch(base + path);
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
    return response.json();
  };
  const rows: [string, { median: number; p95: number }][] = [];
  rows.push(['GET api/overview', await time(() => get('api/overview'))]);
  for (const state of ['ready', 'delayed']) {
    for (const [label, offset] of [
      ['first', 0],
      ['middle', Math.floor(JOBS / 2)],
      ['last', JOBS - 25],
    ] as const)
      rows.push([
        `GET ${state} page (${label}, offset ${offset}, 25 jobs)`,
        await time(() => get(`api/queues/big/jobs?state=${state}&offset=${offset}&limit=25`)),
      ]);
  }
  for (const [label, offset] of [
    ['first', 0],
    ['middle', Math.floor(FAILED / 2)],
    ['last', FAILED - 25],
  ] as const)
    rows.push([`GET failed page (${label}, offset ${offset}, 25 jobs)`, await time(() => get(`api/failed?offset=${offset}&limit=25`))]);
  const byClass = encodeURIComponent('App\\Jobs\\SendInvoice');
  rows.push(['GET failed page filtered by class', await time(() => get(`api/failed?class=${byClass}&limit=25`))]);
  rows.push(['GET the count retry-all / forget-all act on (by class)', await time(() => get(`api/failed/matching?class=${byClass}`))]);
  {
    const head = (await get('api/queues/big/jobs?state=ready&offset=0&limit=1')) as { jobs: { uuid: string }[] };
    rows.push([
      "GET the 50 MB job's own page (from its list)",
      await time(() => get(`api/jobs/${head.jobs[0]!.uuid}?queue=big&state=ready&offset=0`)),
    ]);
  }
  rows.push(["GET the 50 MB failed job's own page (by uuid)", await time(() => get(`api/jobs/${hugeFailed}`))]);
  rows.push(['GET batches', await time(() => get('api/batches'))]);
  rows.push(['GET who runs what', await time(() => get('api/activity'))]);
  rows.push(['GET workers', await time(() => get('api/workers'))]);
  rows.push(["GET Node's completed jobs", await time(() => get('api/completed'))]);
  const searchRow = ['GET a search window (2,000 jobs read; no goal)', await time(() => get('api/search?q=nothing-matches'))] as const;
  const rssAfter = process.memoryUsage().rss;

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage();
  rows.push([
    'chromium: page load until the counts show',
    await time(async () => {
      await page.goto(base);
      await page
        .getByTestId('queue-big')
        .getByTestId('ready')
        .filter({ hasText: String(JOBS + 1) })
        .waitFor();
    }),
  ]);
  rows.push([
    'chromium: last page of delayed jobs until its rows show',
    await time(async () => {
      await page.goto(`${base}#/queues/big/delayed/${JOBS - 25}`);
      await page.reload();
      await page.getByTestId('job').first().waitFor();
    }),
  ]);
  await browser.close();

  rows.push([searchRow[0], searchRow[1]]);
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log(`\n${'what'.padEnd(width)}  median ms  p95 ms   (${ROUNDS} rounds, ${JOBS} jobs a state)`);
  for (const [label, t] of rows) console.log(`${label.padEnd(width)}  ${String(t.median).padStart(9)}  ${String(t.p95).padStart(6)}`);
  console.log(
    `\nthe dashboard process's RSS: ${Math.round(rssBefore / 2 ** 20)} MiB before the requests, ${Math.round(rssAfter / 2 ** 20)} MiB after`,
  );

  await new Promise((resolve) => server.close(resolve));
  await dashboard.close();
  await idleCost(settings);
}

/** The built `lqb ui` alone on the same data: its CPU over IDLE_SECONDS, with no visitor and with one page polling every 2 s. */
async function idleCost(settings: { queueDb?: string; jobsTable?: string }): Promise<void> {
  const flags =
    CONNECTION === 'database'
      ? ['--connection=database', `--queue-db=${settings.queueDb}`, `--jobs-table=${settings.jobsTable}`]
      : [`--redis=${REDIS_URL}`, `--prefix=${prefix}`];
  const child = spawn(
    'node',
    [
      join(import.meta.dirname, '../dist/cli/main.js'),
      'ui',
      '--port=0',
      '--queue=big',
      ...flags,
      `--failed-db=${join(dir, 'failed.sqlite')}`,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const found = /serving (http:\/\/\S+\/)/.exec(out)?.[1];
      if (found) resolve(found);
    });
    child.on('exit', (code) => reject(new Error(`lqb ui exited with ${code}`)));
  });
  const ticks = () => {
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  const hz = 100;
  const share = async (poll: boolean) => {
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const before = ticks();
    const started = performance.now();
    const timer = poll ? setInterval(() => void fetch(`${url}api/overview`).then((r) => r.text()), 2000) : undefined;
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    clearInterval(timer);
    return ((ticks() - before) / hz / ((performance.now() - started) / 1000)) * 100;
  };
  const idle = await share(false);
  const polled = await share(true);
  child.kill('SIGTERM');
  console.log(
    `\nlqb ui alone on the same data, ${IDLE_SECONDS} s each: ${idle.toFixed(2)}% of a core with no visitor, ${polled.toFixed(2)}% with one page polling the overview every 2 s`,
  );
}

const redis = await ownRedisUnlessGiven();
try {
  await main();
} finally {
  if (CONNECTION === 'database') laravelTable('drop-table');
  else {
    const raw = new Redis(REDIS_URL);
    for (const key of ['queues:big', 'queues:big:delayed', 'queues:big:notify', 'queues:big:reserved']) await raw.del(prefix + key);
    raw.disconnect();
  }
  rmSync(dir, { recursive: true, force: true });
  redis.stop();
}
