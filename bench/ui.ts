/**
 * The dashboard with 100,000 jobs on a queue: how long its API and its page take when the queue
 * is large, to show that lists are paged from Redis (LRANGE / ZRANGE from an offset) and never
 * loaded whole. Not a test: it prints what it measured.
 *
 *   npx tsx bench/ui.ts        (JOBS=100000, ROUNDS=20, CHROMIUM_PATH=/usr/bin/chromium)
 *
 * It pushes JOBS ready jobs and JOBS delayed ones (built by the library's own builder, as a
 * Laravel app's would be: a command with a few properties and a model) under a prefix of its
 * own, serves createDashboard's handler on a loopback port, and times, ROUNDS times each: the
 * overview, the first, a middle and the last page of ready and of delayed jobs; then, in Debian's
 * chromium, the page loaded until the queue's counts show, and a job list until its rows show.
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

const JOBS = Number(process.env.JOBS ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 20);
const REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
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

async function fill(): Promise<void> {
  const client = connectRedis({ url: REDIS, prefix });
  const queue = new RedisQueue(client);
  const due = Math.floor(Date.now() / 1000) + 86_400;
  for (let start = 0; start < JOBS; start += 5000) {
    const batch = Array.from({ length: Math.min(5000, JOBS - start) }, (_, i) => payload(start + i));
    await queue.bulkRaw(batch, 'big');
    const pipeline = client.pipeline();
    batch.forEach((p, i) => pipeline.zadd('queues:big:delayed', due + start + i, p));
    await pipeline.exec();
  }
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
  console.log(`pushed ${JOBS} ready and ${JOBS} delayed jobs (${CONNECTION}) in ${Math.round(performance.now() - filling)} ms`);
  const rssBefore = process.memoryUsage().rss;
  const settings =
    CONNECTION === 'database'
      ? { connection: 'database', queueDb: QUEUE_DB, jobsTable: TABLE, cachePrefix: prefix }
      : { redis: REDIS, prefix };
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
        .filter({ hasText: String(JOBS) })
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

  const width = Math.max(...rows.map(([label]) => label.length));
  console.log(`\n${'what'.padEnd(width)}  median ms  p95 ms   (${ROUNDS} rounds, ${JOBS} jobs a state)`);
  for (const [label, t] of rows) console.log(`${label.padEnd(width)}  ${String(t.median).padStart(9)}  ${String(t.p95).padStart(6)}`);
  console.log(
    `\nthe dashboard process's RSS: ${Math.round(rssBefore / 2 ** 20)} MiB before the requests, ${Math.round(rssAfter / 2 ** 20)} MiB after`,
  );

  await new Promise((resolve) => server.close(resolve));
  await dashboard.close();
}

try {
  await main();
} finally {
  if (CONNECTION === 'database') laravelTable('drop-table');
  else {
    const raw = new Redis(REDIS);
    for (const key of ['queues:big', 'queues:big:delayed', 'queues:big:notify', 'queues:big:reserved']) await raw.del(prefix + key);
    raw.disconnect();
  }
  rmSync(dir, { recursive: true, force: true });
}
