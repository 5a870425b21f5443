/**
 * A database of a test's own on each of the three engines, for the record's tables (whose names
 * are fixed, `lqb_*`): a SQLite file in a scratch folder, and a fresh database on MariaDB's and
 * PostgreSQL's servers (the servers test/helpers/jobs-table.ts uses), dropped afterwards. Other
 * test files' workers write their own `lqb_*` rows in the servers' shared `test` database; these
 * start empty, so a test can say what a table holds, and that a reader made none.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseConfig, openDatabase, type Database } from '../../src/database/index.js';

const MARIADB = process.env.LQB_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const POSTGRES = process.env.LQB_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface OwnDatabase {
  url: string;
  db: Database;
  /** Closes `db` and drops the database (removes the file). */
  drop(): Promise<void>;
}

/** The engines, each making a fresh database of its own. */
export const RECORD_DATABASES: [name: string, make: () => Promise<OwnDatabase>][] = [
  [
    'SQLite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'lqb-record-'));
      const url = `sqlite://${join(dir, 'app.sqlite')}`;
      const db = openDatabase(databaseConfig(url));
      return {
        url,
        db,
        drop: async () => {
          await db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  ['MariaDB', () => ownOnServer(MARIADB, '`')],
  ['PostgreSQL', () => ownOnServer(POSTGRES, '"')],
];

async function ownOnServer(serverUrl: string, quote: string): Promise<OwnDatabase> {
  const name = `lqb_record_${randomBytes(4).toString('hex')}`;
  const admin = openDatabase(databaseConfig(serverUrl));
  try {
    await admin.query(`create database ${quote}${name}${quote}`);
  } finally {
    await admin.close();
  }
  const url = serverUrl.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
  const db = openDatabase(databaseConfig(url));
  return {
    url,
    db,
    drop: async () => {
      await db.close();
      const again = openDatabase(databaseConfig(serverUrl));
      try {
        await again.query(`drop database if exists ${quote}${name}${quote}`);
      } finally {
        await again.close();
      }
    },
  };
}
