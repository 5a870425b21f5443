/**
 * DatabaseQueue's own operations, per database: how many no-op jobs a second it pushes (one
 * insert each, and in bulk) and reserves then deletes (popMany of CONCURRENCY rows, then their
 * deletes), on a jobs table Laravel's Schema builder made. Queue operations only: no worker, no
 * handler; the worker's bench compares with Laravel's worker loop (phase 2).
 *
 *   npx tsx bench/database-queue.ts   (JOBS=2000, CONCURRENCY=1,8, DATABASES=sqlite,mariadb,postgres)
 *
 * The payload is a 1.1 KB job as Laravel 8.83's database driver writes it (no id, no attempts).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseQueue } from '../src/database/index.js';
import { buildJob, buildPayload } from '../src/laravel/index.js';

const root = new URL('..', import.meta.url).pathname;
const JOBS = Number(process.env.JOBS ?? 2000);
const CONCURRENCY = (process.env.CONCURRENCY ?? '1,8').split(',').map(Number);
const WANTED = (process.env.DATABASES ?? 'sqlite,mariadb,postgres').split(',');

const dir = mkdtempSync(join(tmpdir(), 'lqb-bench-dbq-'));
const DATABASES: Record<string, string> = {
  sqlite: join(dir, 'queue.sqlite'),
  mariadb: process.env.LQB_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
  postgres: process.env.LQB_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
};

/** A no-op job of about 1.1 KB, as the database driver's envelope carries it. */
function noopPayload(i: number): string {
  const command = buildJob({ className: 'App\\Jobs\\Noop', properties: { n: i, note: 'x'.repeat(700) } }, '8');
  return buildPayload(command, { profile: '8', driver: 'database' }).raw;
}

function laravelTable(url: string, table: string, op: 'create-table' | 'drop-table'): void {
  execFileSync('php', [`${root}php-fixture-gen/laravel-database-queue.php`, op], {
    env: { ...process.env, LQB_QUEUE_DB: url, LQB_JOBS_TABLE: table, LQB_FAILED_DB: join(dir, 'failed.sqlite') },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

const rate = (jobs: number, ms: number) => `${Math.round((jobs * 1000) / ms).toLocaleString('en')} jobs/s`;

async function bench(name: string, url: string): Promise<void> {
  const table = `lqb_bench_${randomBytes(4).toString('hex')}_jobs`;
  laravelTable(url, table, 'create-table');
  const q = DatabaseQueue.open(url, { table });
  try {
    const payloads = Array.from({ length: JOBS }, (_, i) => noopPayload(i));
    let started = performance.now();
    for (const payload of payloads) await q.pushRaw(payload);
    console.log(`${name}: pushRaw, one insert each: ${rate(JOBS, performance.now() - started)}`);
    for (const concurrency of CONCURRENCY) {
      started = performance.now();
      let done = 0;
      for (;;) {
        const jobs = await q.popMany(undefined, concurrency);
        if (jobs.length === 0) break;
        await Promise.all(jobs.map((job) => job.delete()));
        done += jobs.length;
      }
      console.log(`${name}: popMany(${concurrency}) then delete: ${rate(done, performance.now() - started)}`);
      started = performance.now();
      await q.bulkRaw(payloads);
      console.log(`${name}: bulkRaw: ${rate(JOBS, performance.now() - started)}`);
    }
    await q.clear();
  } finally {
    await q.close();
    laravelTable(url, table, 'drop-table');
  }
}

try {
  for (const name of WANTED) {
    const url = DATABASES[name];
    if (url === undefined) throw new Error(`unknown database "${name}" in DATABASES (sqlite, mariadb, postgres)`);
    await bench(name, url);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
