/**
 * Where failed jobs go: Laravel's `failed_jobs` table as its `database-uuids` failer keeps it
 * (Laravel 8's default), so `php artisan queue:failed` and `queue:retry` see what Node failed
 * and `lqb failed` sees what PHP failed. One SQL library (knex) reaches SQLite, MySQL/MariaDB
 * and PostgreSQL.
 */
import { accessSync, constants } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Knex } from 'knex';
import { TableStore, ZONELESS_AS_TEXT } from './knex.js';

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

/**
 * A database URL, as Laravel's DB_URL reads: `sqlite:///path/to/db.sqlite` (or a bare path),
 * `mysql://user:pass@host:3306/db`, `mariadb://…`, `postgres://user@host:5432/db`.
 */
/** knex prints its own warnings (a refused connection, with its stack); every error reaches the caller anyway. */
const QUIET: Knex.Config['log'] = { warn() {}, error() {}, deprecate() {}, debug() {} };

export function knexConfig(url: string): Knex.Config {
  const scheme = /^([a-z0-9+]+):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined || scheme === 'sqlite' || scheme === 'file') {
    const filename = scheme ? decodeURIComponent(url.replace(/^[a-z]+:\/\//i, '')) : url;
    return { client: 'better-sqlite3', connection: { filename }, useNullAsDefault: true, log: QUIET };
  }
  // Dates come back as the text the table holds, as PDO gives them to Laravel: the drivers would
  // otherwise read a zone-less `failed_at` as this process's local time, and shift it by the offset.
  if (scheme === 'mysql' || scheme === 'mariadb') return { client: 'mysql2', connection: { uri: url.replace(/^mariadb:/i, 'mysql:'), dateStrings: true }, log: QUIET };
  if (scheme === 'postgres' || scheme === 'postgresql' || scheme === 'pgsql') return { client: 'pg', connection: { connectionString: url.replace(/^pgsql:/i, 'postgres:'), types: ZONELESS_AS_TEXT }, log: QUIET };
  throw new Error(`unsupported failed-jobs database URL scheme "${scheme}" (use sqlite, mysql, mariadb or postgres)`);
}

export class DatabaseUuidFailedJobProvider extends TableStore implements FailedJobProvider {
  private ready: Promise<void> | undefined;

  /** A knex instance, or the config to make one from when the store is first used. */
  constructor(db: Knex | Knex.Config, table = 'failed_jobs') {
    super(db, table);
  }

  /** A provider for a database URL; the table is made (with Laravel's schema) when missing. */
  static fromUrl(url: string, table = 'failed_jobs'): DatabaseUuidFailedJobProvider {
    // knexConfig refuses a bad URL now, not at the first failure.
    return new DatabaseUuidFailedJobProvider(knexConfig(url), table);
  }

  /**
   * Throws, naming the cause, when the store cannot be used: a server that refuses the
   * connection or the login, a SQLite file in a folder that is not there or not writable. A
   * worker calls it before its first job, to learn this now rather than at its first failure.
   * No SQLite file is made here: as before, that waits for a first failed job.
   */
  async check(): Promise<void> {
    const filename = this.knex.config?.client === 'better-sqlite3' ? (this.knex.config.connection as { filename: string }).filename : undefined;
    if (filename === undefined) {
      await this.db.raw('select 1');
      return;
    }
    const folder = dirname(resolve(filename));
    try {
      accessSync(folder, constants.W_OK);
    } catch (error) {
      throw new Error(`the folder ${folder} cannot be written (${(error as NodeJS.ErrnoException).code})`);
    }
  }

  private get isMysql(): boolean {
    return /mysql/.test(String(this.db.client.config.client));
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
      if (await this.db.schema.hasTable(this.table).catch(() => false)) return;
      throw error;
    }
  }

  /**
   * In one transaction where the database allows it (SQLite, PostgreSQL): the table and its
   * unique index on uuid are two statements, and a worker killed between them would leave a
   * table whose records could repeat.
   */
  private createTableOnce(): Promise<void> {
    return this.db.transaction(async (trx) => {
      if (await trx.schema.hasTable(this.table)) return;
      await trx.schema.createTable(this.table, (table) => {
        table.bigIncrements('id');
        table.string('uuid').notNullable().unique();
        table.text('connection').notNullable();
        table.text('queue').notNullable();
        table.text('payload', 'longtext').notNullable();
        table.text('exception', 'longtext').notNullable();
        // Zone-less, to the second, as Laravel's timestamp(): PostgreSQL would otherwise make a
        // timestamptz, which queue:failed shows with its offset ("… 03:43:23+00").
        table.timestamp('failed_at', { useTz: false, precision: 0 }).notNullable().defaultTo(this.db.fn.now());
        // Laravel's mysql connection: utf8mb4 whatever the server's default, so a payload's emoji fits.
        if (this.isMysql) {
          table.charset('utf8mb4');
          table.collate('utf8mb4_unicode_ci');
        }
      });
    });
  }

  async log(connection: string, queue: string, payload: string, exception: string): Promise<string> {
    await this.ensureTable();
    const uuid = uuidOf(payload);
    // A worker killed after recording a failure but before deleting the job fails it again when
    // it comes back: the first record stands, the second write is a no-op on the unique uuid.
    // A plain insert whose duplicate is ignored, rather than ON CONFLICT, which a table without
    // the unique index (made by hand, or by an older release) would refuse for every record.
    try {
      await this.db(this.table).insert({ uuid, connection, queue, payload, exception: this.storable(exception), failed_at: laravelTimestamp(new Date()) });
    } catch (error) {
      if (isDuplicate(error)) return uuid;
      // knex puts the whole statement, the job's payload and exception text included, before the
      // driver's reason: the reason is what a log line needs.
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
    return this.db.client.config.client === 'pg' ? text.replaceAll('\0', '\\0') : text;
  }

  async all(): Promise<FailedJob[]> {
    await this.ensureTable();
    const rows = await this.db(this.table).select('*').orderBy('id', 'desc');
    return rows.map(normalRow);
  }

  async find(uuid: string): Promise<FailedJob | undefined> {
    await this.ensureTable();
    const row = await this.db(this.table).where({ uuid }).first();
    return row ? normalRow(row) : undefined;
  }

  async forget(uuid: string): Promise<boolean> {
    await this.ensureTable();
    return (await this.db(this.table).where({ uuid }).delete()) > 0;
  }

  async flush(hours?: number): Promise<number> {
    await this.ensureTable();
    const query = this.db(this.table);
    if (hours) query.where('failed_at', '<=', laravelTimestamp(new Date(Date.now() - hours * 3600_000)));
    return query.delete();
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

/** The driver's own words in a knex error ("insert into … - SQLITE_BUSY: database is locked"). */
function driverReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const at = message.lastIndexOf(' - ');
  return (at >= 0 ? message.slice(at + 3) : message).split('\n')[0]!;
}
