/**
 * DatabaseBatchRepository's lookups where the batch is not: on real SQLite, MariaDB and
 * PostgreSQL, a table that is not there reads as no batch (the worker then says where it
 * looked), and the place it names never shows a password.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex from 'knex';
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseBatchRepository, databaseOf } from '../../src/worker/BatchRepository.js';
import { knexConfig } from '../../src/worker/FailedJobProvider.js';

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
      const db = knex(knexConfig(url));
      await db.schema.createTable(table, (t) => {
        t.string('id').primary();
      });
      await db.destroy();
      expect(await batches.find('nope'), `no row nope in ${table}`).toBeUndefined();
      expect(await batches.hasTable()).toBe(true);
    } finally {
      await batches.close();
      const db = knex(knexConfig(url));
      await db.schema.dropTableIfExists(table);
      await db.destroy();
    }
  });
});

describe('where', () => {
  it('names the table and the database, its password masked', () => {
    expect(DatabaseBatchRepository.fromUrl('mysql://app:s3cret@db.internal:3306/shop', 'job_batches').where).toBe('table job_batches in mysql://app:***@db.internal:3306/shop');
    expect(DatabaseBatchRepository.fromUrl('postgres://app:s3cret@pg/shop?sslmode=require', 'batches').where).toBe('table batches in postgres://app:***@pg/shop?sslmode=require');
    expect(DatabaseBatchRepository.fromUrl('/var/app/database.sqlite').where).toBe('table job_batches in sqlite:///var/app/database.sqlite');
    // A knex config of fields, as the library takes one: never the password.
    expect(databaseOf({ client: 'mysql2', connection: { host: 'db', port: 3306, user: 'app', password: 's3cret', database: 'shop' } })).toBe('mysql2://app@db:3306/shop');
  });
});
