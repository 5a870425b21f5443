/**
 * The Node worker against Laravel 8.83's worker on Laravel's database queue, per database, in
 * one run: the same JOBS no-op jobs (Laravel's RecordJob, about 1 KB, as the database driver
 * writes it) on a jobs table Laravel's Schema builder made, run to empty by
 *   - Laravel 8.83's worker (`queue:work database --stop-when-empty --sleep=0`, the real
 *     WorkCommand and Worker::runNextJob loop, php-fixture-gen/laravel-worker.php), one process;
 *   - the Node worker (`new Worker(new DatabaseQueue(...))`), one process, at each CONCURRENCY.
 * Each side's time runs from its start to the table's last job done; Laravel's includes its
 * process start (about 0.1 s of PHP boot), Node's does not.
 *
 *   npx tsx bench/database-worker.ts   (JOBS=5000, CONCURRENCY=1,16,64,256, DATABASES=sqlite,mariadb,postgres)
 *
 * bench/peers.ts imports its helpers (the payload, the jobs table, Laravel's worker command).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bridgeRecordJob } from '../src/cli/demo.js';
import { DatabaseQueue } from '../src/database/index.js';
import { buildPayload } from '../src/laravel/index.js';
import { Worker } from '../src/worker/index.js';

const root = new URL('..', import.meta.url).pathname;
const JOBS = Number(process.env.JOBS ?? 5000);
const CONCURRENCY = (process.env.CONCURRENCY ?? '1,16,64,256').split(',').map(Number);
const WANTED = (process.env.DATABASES ?? 'sqlite,mariadb,postgres').split(',');

/** The MySQL/MariaDB and PostgreSQL databases, unless LQB_MYSQL_URL / LQB_POSTGRES_URL name others. */
export const MYSQL_URL = process.env.LQB_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
export const POSTGRES_URL = process.env.LQB_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** RecordJob with enough items to make the payload about 1 KB, as the database driver writes it (no id, no attempts). */
export function databasePayload(n: number): string {
  const items = { pad: Array.from({ length: 20 }, () => 'padding-to-a-kilobyte') };
  return buildPayload(bridgeRecordJob({ n, label: 'bench', ratio: 0.5, items }), { profile: '8', driver: 'database' }).raw;
}

/** The environment php-fixture-gen's app reads to work Laravel's database queue on `url`'s `table`, failed jobs in `failedDb`. */
export function laravelDatabaseEnv(url: string, table: string, failedDb: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    LQB_QUEUE_DB: url,
    LQB_JOBS_TABLE: table,
    QUEUE_CONNECTION: 'database',
    QUEUE_NAME: 'default',
    LQB_RECORD_FILE: '/dev/null',
    LQB_FAILED_DB: failedDb,
    REDIS_PREFIX: `lqb-bench-dbw-${randomBytes(3).toString('hex')}:`,
  };
}

/** Creates or drops the jobs table of `env` (laravelDatabaseEnv) with Laravel's own migration. */
export function laravelJobsTable(env: NodeJS.ProcessEnv, op: 'create-table' | 'drop-table'): void {
  execFileSync('php', [`${root}php-fixture-gen/laravel-database-queue.php`, op], { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** The queue emptied, then these payloads pushed as Laravel's bulk pushes them. */
export async function fill(q: DatabaseQueue, payloads: string[]): Promise<void> {
  await q.clear();
  for (let i = 0; i < payloads.length; i += 1000) await q.bulkRaw(payloads.slice(i, i + 1000));
  // The table's statistics, as autovacuum keeps them on a table in use: PostgreSQL plans a
  // fresh table's reserve (Laravel's and ours alike) as a read and sort of every row.
  if (q.db.dialect === 'pgsql') await q.db.query(`analyze ${q.table}`);
}

/** Laravel 8.83's `queue:work database` to empty, as a command line (run with laravelDatabaseEnv's environment). */
export const laravelDatabaseWorker = [
  'php',
  `${root}php-fixture-gen/laravel-worker.php`,
  'database',
  '--stop-when-empty',
  '--sleep=0',
  '--timeout=0',
];

function laravelWorker(env: NodeJS.ProcessEnv): number {
  const [command, ...args] = laravelDatabaseWorker;
  const start = performance.now();
  execFileSync(command!, args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
  return JOBS / ((performance.now() - start) / 1000);
}

async function nodeWorker(q: DatabaseQueue, concurrency: number): Promise<number> {
  let ran = 0;
  const worker = new Worker(
    q,
    { 'App\\Jobs\\Bridge\\RecordJob': () => void ran++ },
    { stopWhenEmpty: true, sleep: 0, concurrency, timeout: 0, memory: 0, share: false, connectionName: 'database' },
    { failer: false },
  );
  const start = performance.now();
  await worker.run();
  const rate = JOBS / ((performance.now() - start) / 1000);
  const left = await q.size();
  if (ran !== JOBS || left !== 0) throw new Error(`node worker at concurrency ${concurrency}: ran ${ran} of ${JOBS} jobs, ${left} left`);
  return rate;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const rows: string[] = [];

async function bench(name: string, url: string, dir: string): Promise<void> {
  const table = `lqb_bench_${randomBytes(4).toString('hex')}_jobs`;
  const env = laravelDatabaseEnv(url, table, join(dir, 'failed.sqlite'));
  laravelJobsTable(env, 'create-table');
  const q = DatabaseQueue.open(url, { table });
  try {
    const payloads = Array.from({ length: JOBS }, (_, i) => databasePayload(i));
    await fill(q, payloads);
    const php = laravelWorker(env);
    const left = await q.size();
    if (left !== 0) throw new Error(`Laravel's worker left ${left} jobs on ${name}`);
    rows.push(`| ${name} | Laravel 8.83 queue:work database | ${fmt(php)} | 1.0× |`);
    for (const concurrency of CONCURRENCY) {
      await fill(q, payloads);
      const node = await nodeWorker(q, concurrency);
      rows.push(`| ${name} | lqb worker, concurrency ${concurrency} | ${fmt(node)} | ${(node / php).toFixed(1)}× |`);
    }
  } finally {
    await q.close();
    laravelJobsTable(env, 'drop-table');
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-bench-dbw-'));
  const databases: Record<string, string> = { sqlite: join(dir, 'queue.sqlite'), mariadb: MYSQL_URL, postgres: POSTGRES_URL };
  try {
    const load = loadavg().map((n) => n.toFixed(2));
    for (const name of WANTED) {
      const url = databases[name];
      if (url === undefined) throw new Error(`unknown database "${name}" in DATABASES (sqlite, mariadb, postgres)`);
      await bench(name, url, dir);
    }
    console.log(
      `${fmt(JOBS)} no-op jobs of ${Buffer.byteLength(databasePayload(0))} bytes per run, one process each; load average at start ${load.join(', ')}, at end ${loadavg()
        .map((n) => n.toFixed(2))
        .join(', ')}.\n`,
    );
    console.log('| database | worker | jobs/s | vs Laravel |');
    console.log('|---|---|---:|---:|');
    for (const row of rows) console.log(row);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run as a script; imported (bench/peers.ts), it only lends its helpers.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
