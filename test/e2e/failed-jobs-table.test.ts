/**
 * One failed_jobs table, two writers, on SQLite, MariaDB and PostgreSQL.
 *   - The table: made by Laravel 8.83 (its failer's schema, php-fixture-gen/worker-app.php) and
 *     made by Node (DatabaseUuidFailedJobProvider): the same columns, types and nullability.
 *   - Laravel's worker fails a job (Laravel produces the row); `lqb failed` reads it, in a time
 *     zone that is not the database's, and shows the failed_at Laravel's failer shows.
 *   - `lqb work` fails a job (Node produces the row); Laravel's failer reads its failed_at as it
 *     reads its own: "Y-m-d H:i:s", no offset.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { databaseConfig, openDatabase, quoteName, type Database } from '../../src/database/index.js';
import { beforeEach, describe, expect, it } from 'vitest';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { HANDLERS, lqb, php, scratchPerTest, type Scratch } from '../helpers/processes.js';

const QUEUE = 'failed-table';
const current = scratchPerTest('e2e-failed', QUEUE);
let s: Scratch;
beforeEach(() => ({ s } = current));

const DATABASES: [string, (dir: string) => string][] = [
  ['SQLite', (dir) => join(dir, 'failed.sqlite')],
  ['MariaDB', () => process.env.LQB_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'],
  ['PostgreSQL', () => process.env.LQB_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'],
];

/** Each column as the database describes it: name, type, nullable (and MySQL's table collation). */
async function describeTable(db: Database, table: string): Promise<unknown[]> {
  if (db.dialect === 'mysql') {
    const { rows: columns } = await db.query(
      'select column_name as name, column_type as type, is_nullable as nullable, column_default as dflt from information_schema.columns where table_schema = database() and table_name = ? order by ordinal_position',
      [table],
    );
    const {
      rows: [{ collation } = {}],
    } = await db.query<{ collation?: unknown }>(
      'select table_collation as collation from information_schema.tables where table_schema = database() and table_name = ?',
      [table],
    );
    return [...columns.map((c: object) => ({ ...c })), { collation }];
  }
  if (db.dialect === 'pgsql') {
    const { rows } = await db.query(
      'select column_name as name, data_type as type, datetime_precision as precision, is_nullable as nullable from information_schema.columns where table_name = ? order by ordinal_position',
      [table],
    );
    return rows;
  }
  // SQLite: the type's affinity is what counts (varchar and varchar(255) are one).
  const { rows } = await db.query<{ name: string; type: string; notnull: number }>(`pragma table_info("${table}")`);
  return rows.map((c) => ({ name: c.name, type: c.type.replace(/\(.*\)$/, '').toLowerCase(), notnull: c.notnull }));
}

/** Drops the tables named. */
async function dropTables(url: string, ...tables: string[]): Promise<void> {
  const db = openDatabase(databaseConfig(url));
  for (const table of tables) await db.query(`drop table if exists ${quoteName(db.dialect, table)}`);
  await db.close();
}

describe.each(DATABASES)('the failed_jobs table on %s', (_, where) => {
  it('Node makes the table Laravel makes', async () => {
    const url = where(s.dir);
    const [laravels, ours] = [`lqb_lar_${randomBytes(3).toString('hex')}`, `lqb_node_${randomBytes(3).toString('hex')}`];
    const db = openDatabase(databaseConfig(url));
    try {
      // Laravel's failer makes its table when first resolved; queue:failed resolves it.
      expect(
        (await php('laravel-dispatch.php', ['failed'], { ...s.env, LQB_FAILED_DB: url, LQB_FAILED_TABLE: laravels })).stdout.trim(),
      ).toBe('[]');
      const failer = DatabaseUuidFailedJobProvider.fromUrl(url, ours);
      await failer.all();
      await failer.close();
      expect(await describeTable(db, ours), `the columns of the table Node made, beside ${laravels}`).toEqual(
        await describeTable(db, laravels),
      );
    } finally {
      await db.close();
      await dropTables(url, laravels, ours);
    }
  });

  it('each side reads the other’s failed_at as it reads its own, whatever the reader’s time zone', async () => {
    const url = where(s.dir);
    const table = `lqb_failed_${randomBytes(4).toString('hex')}`;
    const env = { ...s.env, LQB_FAILED_DB: url, LQB_FAILED_TABLE: table };
    const laravelSees = async () =>
      JSON.parse((await php('laravel-dispatch.php', ['failed'], env)).stdout) as { id: string; failed_at: string }[];
    try {
      await php('laravel-dispatch.php', ['failing', JSON.stringify({ n: 1, message: 'php gives up', queue: QUEUE })], env);
      expect((await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', '--tries=1'], env)).status).toBe(0);
      await php('laravel-dispatch.php', ['failing', JSON.stringify({ n: 2, message: 'node gives up', queue: QUEUE })], env);
      // Node writes in a zone far from the database's (UTC here), and reads in another.
      expect(
        (
          await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], {
            ...env,
            TZ: 'America/New_York',
          })
        ).status,
      ).toBe(0);
      const listed = await lqb(['failed', '--json'], { ...env, TZ: 'Europe/Berlin' });
      expect(listed.stderr).toBe('');
      const ours = listed.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: string; failed_at: string });
      const theirs = await laravelSees();
      expect(theirs).toHaveLength(2);
      for (const record of theirs) {
        expect(record.failed_at, `failed_at of ${record.id} as Laravel reads it`).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
        expect(ours.find((o) => o.id === record.id)?.failed_at, `failed_at of ${record.id} as lqb failed reads it`).toBe(record.failed_at);
      }
    } finally {
      await dropTables(url, table);
    }
  });
});
