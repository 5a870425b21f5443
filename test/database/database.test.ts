/**
 * The small SQL layer under the failed-jobs, lock and batch stores, on real SQLite, MariaDB and
 * PostgreSQL: rows and counts come back alike, a transaction commits or rolls back as a whole,
 * and inside one a row taken FOR UPDATE SKIP LOCKED is skipped by a second transaction (what a
 * database queue driver's reserve needs); SQLite's transactions take turns.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../helpers/processes.js';
import { DatabaseClosedError, databaseConfig, openDatabase, quoteName, type Database } from '../../src/database/index.js';

const dir = mkdtempSync(join(tmpdir(), 'lqb-database-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DATABASES: [string, () => string][] = [
  ['SQLite', () => join(dir, `db-${randomBytes(3).toString('hex')}.sqlite`)],
  ['MariaDB', () => process.env.LQB_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'],
  ['PostgreSQL', () => process.env.LQB_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'],
];

/** A table of this test's own, made for `work` and dropped after it. */
async function withTable(url: string, work: (db: Database, table: string) => Promise<void>): Promise<void> {
  const db = openDatabase(databaseConfig(url));
  const table = quoteName(db.dialect, `lqb_db_${randomBytes(4).toString('hex')}`);
  await db.query(
    `create table ${table} (${quoteName(db.dialect, 'id')} integer not null primary key, ${quoteName(db.dialect, 'key')} varchar(50) not null)`,
  );
  try {
    await work(db, table);
  } finally {
    await db.query(`drop table if exists ${table}`);
    await db.close();
  }
}

describe.each(DATABASES)('on %s', (_, where) => {
  it('rows come back as objects, changes as counts; `key` (a MySQL keyword) is quoted', () =>
    withTable(where(), async (db, table) => {
      const key = quoteName(db.dialect, 'key');
      expect((await db.query(`insert into ${table} (id, ${key}) values (?, ?), (?, ?)`, [1, 'a', 2, 'b'])).affected, 'rows inserted').toBe(
        2,
      );
      expect((await db.query(`update ${table} set ${key} = ? where id = ?`, ['c', 2])).affected, 'rows updated').toBe(1);
      const { rows } = await db.query<{ id: number; key: string }>(`select id, ${key} from ${table} order by id`);
      expect(
        rows.map((row) => [Number(row.id), row.key]),
        'rows read',
      ).toEqual([
        [1, 'a'],
        [2, 'c'],
      ]);
      expect((await db.query(`delete from ${table} where id in (?, ?)`, [1, 2])).affected, 'rows deleted').toBe(2);
    }));

  it('a transaction commits as a whole, and one that throws leaves nothing', () =>
    withTable(where(), async (db, table) => {
      const key = quoteName(db.dialect, 'key');
      await db.transaction(async (tx) => {
        await tx.query(`insert into ${table} (id, ${key}) values (?, ?)`, [1, 'kept']);
      });
      const failed = await db
        .transaction(async (tx) => {
          await tx.query(`insert into ${table} (id, ${key}) values (?, ?)`, [2, 'rolled back']);
          throw new Error('the work failed');
        })
        .catch((error: Error) => error.message);
      expect(failed).toBe('the work failed');
      expect(
        (await db.query(`select id from ${table}`)).rows.map((row) => Number(row.id)),
        'ids left after the rollback',
      ).toEqual([1]);
    }));

  it('after close() a statement is refused rather than a connection opened again', async () => {
    const db = openDatabase(databaseConfig(where()));
    await db.query('select 1');
    await db.close();
    await expect(db.query('select 1')).rejects.toThrow(DatabaseClosedError);
  });
});

describe.each(DATABASES.slice(1))('FOR UPDATE SKIP LOCKED on %s', (_, where) => {
  it('a row one transaction holds is skipped by another, which takes the next', () =>
    withTable(where(), async (db, table) => {
      const key = quoteName(db.dialect, 'key');
      await db.query(`insert into ${table} (id, ${key}) values (?, ?), (?, ?)`, [1, 'first', 2, 'second']);
      const second = openDatabase(databaseConfig(where()));
      try {
        const taken = await db.transaction(async (tx) => {
          const [mine] = (await tx.query(`select id from ${table} order by id limit 1 for update skip locked`)).rows;
          // While this transaction holds row 1, another connection's reserve skips it.
          const [theirs] = (
            await second.transaction((other) => other.query(`select id from ${table} order by id limit 1 for update skip locked`))
          ).rows;
          return [Number(mine!.id), Number(theirs!.id)];
        });
        expect(taken, 'ids taken by the first and the second transaction').toEqual([1, 2]);
      } finally {
        await second.close();
      }
    }));
});

describe('SQLite transactions', () => {
  it('take turns on the one connection: a statement outside waits for the transaction to end', async () => {
    await withTable(DATABASES[0]![1](), async (db, table) => {
      const order: string[] = [];
      const inside = db.transaction(async (tx) => {
        await tx.query(`insert into ${table} (id, "key") values (1, 'tx')`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        order.push('transaction ends');
      });
      const outside = db.query(`select count(*) as n from ${table}`).then(({ rows }) => order.push(`outside sees ${String(rows[0]!.n)}`));
      await Promise.all([inside, outside]);
      expect(order).toEqual(['transaction ends', 'outside sees 1']);
    });
  });
});

describe.each(DATABASES.slice(1))('on %s, connections the server ends at any moment', (engine, where) => {
  it('end no process: 8 users of statements and transactions live through 200 rounds of every connection ended', async () => {
    const child = await run('node', ['--import', 'tsx', 'test/helpers/db-churn.ts', where(), '200'], process.env, { timeoutMs: 120_000 });
    expect(
      [child.status, child.stdout.split(' ')[0]],
      `${engine}: the process using the database (its error: ${child.stderr.split('\n').find((l) => /error/i.test(l)) ?? 'none'})`,
    ).toEqual([0, 'survived']);
    const [ok, failed] = child.stdout.trim().split(' ').slice(1).map(Number);
    expect(ok, `${engine}: statements that succeeded between the ends (${failed} failed)`).toBeGreaterThan(0);
    expect(failed, `${engine}: statements the ends cut short (so the connections were ended)`).toBeGreaterThan(0);
  }, 150_000);
});

/**
 * Laravel 8's database queue pops in a deferred transaction: a select, then an update. SQLite
 * refuses that update at once ("database is locked", no busy wait) when another connection holds
 * the write lock meanwhile, and Laravel's worker then reports the error and, under
 * --stop-when-empty, stops with jobs left. Another process's connection (a thread here, with
 * PDO's 60 s busy wait) pops that way in a loop while this layer writes outside a transaction.
 */
describe('SQLite writes beside another process’s deferred transactions', () => {
  it('a statement that writes never takes the write lock while the other has read and means to write', async () => {
    const file = DATABASES[0]![1]();
    await withTable(file, async (db, table) => {
      await db.query(`insert into ${table} (id, "key") values (1, 'a'), (2, 'b')`);
      const popper = new Worker(
        `
        const { workerData, parentPort } = require('node:worker_threads');
        const Sqlite = require(workerData.driver);
        const connection = new Sqlite(workerData.file, { timeout: 60000 });
        const refused = [];
        for (let round = 0; round < 60; round++) {
          try {
            connection.exec('BEGIN');
            connection.prepare('select id from ' + workerData.table + ' where id = 1').all();
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
            connection.prepare('update ' + workerData.table + ' set "key" = ? where id = 1').run('pop ' + round);
            connection.exec('COMMIT');
          } catch (error) {
            refused.push('round ' + round + ': ' + error.message);
            if (connection.inTransaction) connection.exec('ROLLBACK');
          }
        }
        connection.close();
        parentPort.postMessage(refused);
        `,
        { eval: true, workerData: { file, table, driver: createRequire(import.meta.url).resolve('better-sqlite3') } },
      );
      const refused = new Promise<string[]>((resolve, reject) => popper.once('message', resolve).once('error', reject));
      let writing = true;
      void refused.finally(() => (writing = false));
      let writes = 0;
      while (writing) {
        await db.query(`update ${table} set "key" = ? where id = 2`, [`write ${writes++}`]);
      }
      expect(await refused, `the other process's pops refused their update (${writes} writes here meanwhile)`).toEqual([]);
      await popper.terminate();
    });
  });
});
