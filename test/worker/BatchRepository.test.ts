/**
 * DatabaseBatchRepository's lookups where the batch is not: on real SQLite, MariaDB and
 * PostgreSQL, a table that is not there reads as no batch (the worker then says where it
 * looked), and the place it names never shows a password.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseBatchRepository, databaseOf } from '../../src/worker/BatchRepository.js';
import { databaseConfig, openDatabase, quoteName } from '../../src/database/index.js';

const dir = mkdtempSync(join(tmpdir(), 'lqb-batch-repo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DATABASES: [string, string][] = [
  ['SQLite', `sqlite://${join(dir, 'batches.sqlite')}`],
  ['MariaDB', process.env.LQB_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'],
  ['PostgreSQL', process.env.LQB_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'],
];

describe.each(DATABASES)('find on %s', (_, url) => {
  it('a missing table, and a missing row in a table that is there, are no batch', async () => {
    const table = `job_batches_${randomBytes(4).toString('hex')}`;
    const batches = DatabaseBatchRepository.fromUrl(url, table);
    try {
      expect(await batches.find('nope'), `${table} is not there`).toBeUndefined();
      expect(await batches.hasTable()).toBe(false);
      const db = openDatabase(databaseConfig(url));
      await db.query(`create table ${quoteName(db.dialect, table)} (id varchar(255) primary key)`);
      await db.close();
      expect(await batches.find('nope'), `no row nope in ${table}`).toBeUndefined();
      expect(await batches.hasTable()).toBe(true);
    } finally {
      await batches.close();
      const db = openDatabase(databaseConfig(url));
      await db.query(`drop table if exists ${quoteName(db.dialect, table)}`);
      await db.close();
    }
  });
});

describe('where', () => {
  it('names the table and the database, its password masked', () => {
    expect(DatabaseBatchRepository.fromUrl('mysql://app:s3cret@db.internal:3306/shop', 'job_batches').where).toBe(
      'table job_batches in mysql://app:***@db.internal:3306/shop',
    );
    expect(DatabaseBatchRepository.fromUrl('postgres://app:s3cret@pg/shop?sslmode=require', 'batches').where).toBe(
      'table batches in postgres://app:***@pg/shop?sslmode=require',
    );
    expect(DatabaseBatchRepository.fromUrl('/var/app/database.sqlite').where).toBe(
      'table job_batches in sqlite:///var/app/database.sqlite',
    );
    // A config as the library takes one: never the password.
    expect(databaseOf({ dialect: 'mysql', url: 'mysql://app:s3cret@db:3306/shop' })).toBe('mysql://app:***@db:3306/shop');
  });
});
