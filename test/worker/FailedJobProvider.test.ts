/**
 * The failed-jobs table on each database Laravel's failer can use: SQLite (embedded default),
 * MariaDB and PostgreSQL (both running on this machine). One table per test run, dropped after.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseConfig, openDatabase, quoteName } from '../../src/database/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';

const dir = mkdtempSync(join(tmpdir(), 'lqb-failer-'));
const table = `lqb_failed_${randomBytes(4).toString('hex')}`;
const databases: [string, string][] = [
  ['SQLite', `sqlite://${join(dir, 'failed.sqlite')}`],
  ['MariaDB', process.env.LQB_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'],
  ['PostgreSQL', process.env.LQB_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'],
];

afterAll(async () => {
  for (const [, url] of databases) {
    const db = openDatabase(databaseConfig(url));
    await db.query(`drop table if exists ${quoteName(db.dialect, table)}`);
    await db.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

describe.each(databases)('on %s', (_, url) => {
  it('keeps records as Laravel’s database-uuids failer does: log, all (newest first), find, forget, flush', async () => {
    const failer = DatabaseUuidFailedJobProvider.fromUrl(url, table);
    try {
      const first = randomUUID();
      const second = randomUUID();
      const payload = (uuid: string) => JSON.stringify({ uuid, displayName: 'App\\Jobs\\X', attempts: 1, note: 'naïve ✓' });
      expect(await failer.log('redis', 'emails', payload(first), 'Error: one')).toBe(first);
      expect(await failer.log('redis', 'default', payload(second), 'Error: two')).toBe(second);
      const all = await failer.all();
      expect(all.map((r) => r.uuid)).toEqual([second, first]);
      expect(all[1]).toMatchObject({ connection: 'redis', queue: 'emails', payload: payload(first), exception: 'Error: one' });
      expect(all[1]!.failed_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      expect((await failer.find(second))?.queue).toBe('default');
      expect(await failer.forget(second)).toBe(true);
      expect(await failer.forget(second)).toBe(false);
      // uuid is unique, as in Laravel's table: a second record of the same job (a worker killed
      // between recording and deleting it fails it again) leaves the first as it was.
      expect(await failer.log('redis', 'emails', payload(first), 'again')).toBe(first);
      expect((await failer.find(first))?.exception, 'the first record of a job failed twice').toBe('Error: one');
      expect(await failer.flush()).toBe(1);
      expect(await failer.all()).toEqual([]);
      // A payload that is not JSON still gets a record, under a uuid of its own.
      expect(await failer.log('redis', 'x', '{broken', 'Undecodable')).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await failer.close();
    }
  });
});

describe.each(databases)('an exception text with a NUL character, on %s', (name, url) => {
  it('is recorded (PostgreSQL, whose text cannot hold NUL, gets it as \\0), never refused', async () => {
    const failer = DatabaseUuidFailedJobProvider.fromUrl(url, table);
    try {
      const uuid = randomUUID();
      const exception = 'Error: no property "\0App\\Jobs\\X\0secret" on the command';
      expect(await failer.log('redis', 'default', JSON.stringify({ uuid }), exception)).toBe(uuid);
      expect((await failer.find(uuid))?.exception, `the exception text as ${name} keeps it`).toBe(
        name === 'PostgreSQL' ? exception.replaceAll('\0', '\\0') : exception,
      );
      await failer.forget(uuid);
    } finally {
      await failer.close();
    }
  });
});

describe('a failed_jobs table without its unique index (a create cut short between its two statements)', () => {
  it('still takes every record, where an insert … on conflict (uuid) is refused', async () => {
    const url = `sqlite://${join(dir, 'no-index.sqlite')}`;
    const db = openDatabase(databaseConfig(url));
    await db.query(
      'create table "failed_jobs" ("id" integer not null primary key autoincrement, "uuid" varchar(255), "connection" text, "queue" text, "payload" text, "exception" text, "failed_at" datetime)',
    );
    const onConflict = await db
      .query(
        'insert into "failed_jobs" ("uuid", "connection", "queue", "payload", "exception", "failed_at") values (?, ?, ?, ?, ?, ?) on conflict ("uuid") do nothing',
        ['x', 'redis', 'q', '{}', 'E', '2026-01-01 00:00:00'],
      )
      .then(
        () => 'taken',
        (error: Error) => error.message,
      );
    expect(onConflict, 'what SQLite says of on conflict without a unique index').toMatch(
      /ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint/,
    );
    await db.close();
    const failer = DatabaseUuidFailedJobProvider.fromUrl(url);
    try {
      const uuid = randomUUID();
      expect(await failer.log('redis', 'default', JSON.stringify({ uuid }), 'Error: one')).toBe(uuid);
      expect((await failer.all()).map((r) => r.uuid)).toEqual([uuid]);
    } finally {
      await failer.close();
    }
  });
});
