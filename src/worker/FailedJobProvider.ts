/**
 * Where failed jobs go: Laravel's `failed_jobs` table as its `database-uuids` failer keeps it
 * (Laravel 8's default), so `php artisan queue:failed` and `queue:retry` see what Node failed
 * and `lqb failed` sees what PHP failed, on SQLite, MySQL/MariaDB or PostgreSQL (src/database/).
 */
import { accessSync, constants } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { databaseConfig, type Database, type DatabaseConfig } from '../database/index.js';
import { loadDriver } from '../database/drivers.js';
import { TableStore } from './tables.js';

export interface FailedJob {
  /** The auto-increment id. */
  id: number;
  /** The payload's uuid: the ID `queue:retry` and `queue:forget` take. */
  uuid: string;
  connection: string;
  queue: string;
  payload: string;
  exception: string;
  /** "Y-m-d H:i:s", as Laravel stores it. */
  failed_at: string;
}

export interface FailedJobProvider {
  /** Records a failure; returns the uuid it is kept under. */
  log(connection: string, queue: string, payload: string, exception: string): Promise<string>;
  /** Every record, newest first (as `queue:failed` lists them). */
  all(): Promise<FailedJob[]>;
  find(uuid: string): Promise<FailedJob | undefined>;
  forget(uuid: string): Promise<boolean>;
  /** Deletes every record (or those older than `hours`); returns how many. */
  flush(hours?: number): Promise<number>;
  close(): Promise<void>;
}

export class DatabaseUuidFailedJobProvider extends TableStore implements FailedJobProvider {
  private ready: Promise<void> | undefined;

  /** A database, or the config to open one from when the store is first used. */
  constructor(db: Database | DatabaseConfig, table = 'failed_jobs') {
    super(db, table);
  }

  /**
   * A provider for a database URL (`sqlite:///path` or a bare path, `mysql://`, `mariadb://`,
   * `postgres://`); the table is made (with Laravel's schema) when missing.
   */
  static fromUrl(url: string, table = 'failed_jobs'): DatabaseUuidFailedJobProvider {
    // databaseConfig refuses a bad URL now, not at the first failure.
    return new DatabaseUuidFailedJobProvider(databaseConfig(url), table);
  }

  /**
   * Throws, naming the cause, when the store cannot be used: a server that refuses the
   * connection or the login, a SQLite file in a folder that is not there or not writable. A
   * worker calls it before its first job, to learn this now rather than at its first failure.
   * No SQLite file is made here: as before, that waits for a first failed job.
   */
  async check(): Promise<void> {
    const filename = this.config?.dialect === 'sqlite' ? this.config.filename : undefined;
    if (filename === undefined) {
      await this.db.query('select 1');
      return;
    }
    // The file is opened only at the first failure: its driver is looked for now, so a missing
    // better-sqlite3 refuses the start rather than leaving that job reserved.
    loadDriver('sqlite');
    const folder = dirname(resolve(filename));
    try {
      accessSync(folder, constants.W_OK);
    } catch (error) {
      throw new Error(`the folder ${folder} cannot be written (${(error as NodeJS.ErrnoException).code})`);
    }
  }

  /** Laravel's `failed_jobs` migration (8.x), made here when the table is not there yet. */
  private ensureTable(): Promise<void> {
    // A failure (the database away, or another worker creating the table at the same moment) is
    // not kept: the next record tries again, rather than every record of this process failing.
    this.ready ??= this.createTable().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  private async createTable(): Promise<void> {
    try {
      await this.createTableOnce();
    } catch (error) {
      // Another process made it between our look and our create: it is there, which is all we need.
      if (await this.hasTable(this.db).catch(() => false)) return;
      throw error;
    }
  }

  /**
   * In one transaction where the database allows it (SQLite, PostgreSQL; MySQL commits each DDL
   * statement on its own): the table and its unique index on uuid are two statements, and a
   * worker killed between them would leave a table whose records could repeat.
   */
  private createTableOnce(): Promise<void> {
    return this.db.transaction(async (tx) => {
      if (await this.hasTable(tx)) return;
      for (const statement of this.createStatements()) await tx.query(statement);
    });
  }

  /**
   * Laravel's `failed_jobs` migration (8.x) in each dialect: a big auto-increment id, a unique
   * uuid, texts (long ones on MySQL), and `failed_at` zone-less to the second, as Laravel's
   * timestamp() (PostgreSQL would otherwise make a timestamptz, which queue:failed shows with
   * its offset, "… 03:43:23+00"); on MySQL utf8mb4 whatever the server's default, as Laravel's
   * mysql connection, so a payload's emoji fits.
   */
  private createStatements(): string[] {
    const table = this.tableName;
    const unique = this.db.dialect === 'mysql' ? `\`${this.table}_uuid_unique\`` : `"${this.table}_uuid_unique"`;
    switch (this.db.dialect) {
      case 'sqlite':
        return [
          `create table ${table} ("id" integer not null primary key autoincrement, "uuid" varchar(255) not null, "connection" text not null, "queue" text not null, "payload" text not null, "exception" text not null, "failed_at" datetime not null default CURRENT_TIMESTAMP)`,
          `create unique index ${unique} on ${table} ("uuid")`,
        ];
      case 'mysql':
        return [
          `create table ${table} (\`id\` bigint unsigned not null auto_increment primary key, \`uuid\` varchar(255) not null, \`connection\` text not null, \`queue\` text not null, \`payload\` longtext not null, \`exception\` longtext not null, \`failed_at\` timestamp(0) not null default CURRENT_TIMESTAMP) default character set utf8mb4 collate utf8mb4_unicode_ci`,
          `alter table ${table} add unique ${unique}(\`uuid\`)`,
        ];
      case 'pgsql':
        return [
          `create table ${table} ("id" bigserial primary key, "uuid" varchar(255) not null, "connection" text not null, "queue" text not null, "payload" text not null, "exception" text not null, "failed_at" timestamp(0) not null default CURRENT_TIMESTAMP)`,
          `alter table ${table} add constraint ${unique} unique ("uuid")`,
        ];
    }
  }

  async log(connection: string, queue: string, payload: string, exception: string): Promise<string> {
    await this.ensureTable();
    const uuid = uuidOf(payload);
    // A worker killed after recording a failure but before deleting the job fails it again when
    // it comes back: the first record stands, the second write is a no-op on the unique uuid.
    // A plain insert whose duplicate is ignored, rather than ON CONFLICT, which a table without
    // the unique index (made by hand, or by an older release) would refuse for every record.
    try {
      await this.db.query(
        `insert into ${this.tableName} (${this.columns(['uuid', 'connection', 'queue', 'payload', 'exception', 'failed_at'])}) values (?, ?, ?, ?, ?, ?)`,
        [uuid, connection, queue, payload, this.storable(exception), laravelTimestamp(new Date())],
      );
    } catch (error) {
      if (isDuplicate(error)) return uuid;
      // The driver's reason, on one line, is what a log line needs (never the payload).
      throw new Error(`could not insert into ${this.table}: ${driverReason(error)}`, { cause: error });
    }
    return uuid;
  }

  /**
   * PostgreSQL's text holds no NUL character, which an error naming a PHP private or protected
   * property carries ("\0App\\Job\0secret"): there it is written as the two characters \0,
   * rather than the whole record refused.
   */
  private storable(text: string): string {
    return this.db.dialect === 'pgsql' ? text.replaceAll('\0', '\\0') : text;
  }

  async all(): Promise<FailedJob[]> {
    await this.ensureTable();
    const { rows } = await this.db.query(`select * from ${this.tableName} order by ${this.columns(['id'])} desc`);
    return rows.map(normalRow);
  }

  async find(uuid: string): Promise<FailedJob | undefined> {
    await this.ensureTable();
    const [row] = (await this.db.query(`select * from ${this.tableName} where ${this.columns(['uuid'])} = ? limit 1`, [uuid])).rows;
    return row ? normalRow(row) : undefined;
  }

  async forget(uuid: string): Promise<boolean> {
    await this.ensureTable();
    return (await this.db.query(`delete from ${this.tableName} where ${this.columns(['uuid'])} = ?`, [uuid])).affected > 0;
  }

  async flush(hours?: number): Promise<number> {
    await this.ensureTable();
    if (!hours) return (await this.db.query(`delete from ${this.tableName}`)).affected;
    const before = laravelTimestamp(new Date(Date.now() - hours * 3600_000));
    return (await this.db.query(`delete from ${this.tableName} where ${this.columns(['failed_at'])} <= ?`, [before])).affected;
  }
}

/** The payload's uuid, as Laravel's failer takes it; a payload without one gets a new one. */
function uuidOf(payload: string): string {
  try {
    const uuid = (JSON.parse(payload) as { uuid?: unknown }).uuid;
    if (typeof uuid === 'string' && uuid) return uuid;
  } catch {
    // A payload that is not JSON failed for that very reason; it still deserves a record.
  }
  return crypto.randomUUID();
}

/** "Y-m-d H:i:s" in UTC, as Laravel writes `failed_at` with its default UTC timezone. */
export function laravelTimestamp(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

function normalRow(row: Record<string, unknown>): FailedJob {
  const failedAt = row.failed_at instanceof Date ? laravelTimestamp(row.failed_at) : String(row.failed_at);
  return {
    id: Number(row.id),
    uuid: String(row.uuid),
    connection: String(row.connection),
    queue: String(row.queue),
    payload: String(row.payload),
    exception: String(row.exception),
    failed_at: failedAt,
  };
}

/** A unique-key violation, as SQLite, MySQL/MariaDB and PostgreSQL report it. */
function isDuplicate(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'ER_DUP_ENTRY' || code === '23505';
}

/** The driver's own words, the first line ("database is locked"). */
function driverReason(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}
