/**
 * Laravel's `jobs` table on each of the three databases, made by Laravel's own Schema builder
 * (php-fixture-gen/laravel-database-queue.php create-table) under a name of the test's own,
 * and dropped after it (with the Redis keys its PHP scripts' cache may have left).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { php } from './processes.js';
import { rawClient, removePrefix } from './redis.js';

/** Where each database is: a SQLite file in a scratch folder, MariaDB's and PostgreSQL's `test` databases. */
export const QUEUE_DATABASES: [name: string, url: (dir: string) => string][] = [
  ['SQLite', (dir) => join(dir, 'queue.sqlite')],
  ['MariaDB', () => process.env.LQB_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'],
  ['PostgreSQL', () => process.env.LQB_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'],
];

export interface JobsTable {
  /** The database's URL (or SQLite file). */
  url: string;
  table: string;
  dir: string;
  /** The environment for PHP scripts on this table (worker-app.php's `database` connection the default). */
  env: NodeJS.ProcessEnv;
  /** Runs laravel-database-queue.php OP; resolves to its parsed standard output. */
  laravel(op: string, options?: object, input?: string): Promise<any>;
}

/** A fresh jobs table (and scratch folder) for `work`, dropped (and removed) after it. */
export async function withJobsTable(url: (dir: string) => string, work: (t: JobsTable) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-dbqueue-'));
  const table = `lqb_t_${randomBytes(4).toString('hex')}_jobs`;
  const where = url(dir);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LQB_QUEUE_DB: where,
    LQB_JOBS_TABLE: table,
    QUEUE_CONNECTION: 'database',
    QUEUE_NAME: 'default',
    REDIS_PREFIX: `lqb-dbq-${randomBytes(3).toString('hex')}:`,
    LQB_FAILED_DB: join(dir, 'failed.sqlite'),
    LQB_RECORD_FILE: join(dir, 'php-runs.jsonl'),
  };
  const laravel = async (op: string, options?: object, input?: string) => {
    const result = await php('laravel-database-queue.php', options ? [op, JSON.stringify(options)] : [op], env, { input });
    if (result.status !== 0) throw new Error(`laravel-database-queue.php ${op} exited ${result.status}: ${result.stderr.trim()}`);
    return result.stdout.trim() === '' ? undefined : JSON.parse(result.stdout);
  };
  try {
    await laravel('create-table');
    await work({ url: where, table, dir, env, laravel });
  } finally {
    await laravel('drop-table').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    // Laravel's worker reads its restart signal from the Redis cache under this prefix.
    const redis = rawClient();
    await removePrefix(redis, env.REDIS_PREFIX!).catch(() => undefined);
    redis.disconnect();
  }
}
