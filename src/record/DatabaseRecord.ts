/**
 * The record in a database-only app's database (the layout is NodeRecord.ts's): three tables
 * made by the first worker to write (`create table if not exists`, before its first transaction:
 * MySQL commits at a DDL statement), one transaction per flush. A reader never makes them: a
 * table that is not there reads as empty.
 */
import { quoteName, tableExists, type Database, type Dialect, type Queryable } from '../database/index.js';
import {
  RECORD_TABLES,
  byQueueAndClass,
  compare,
  isLive,
  readHeartbeat,
  type CompletedJob,
  type MinuteRow,
  type RecordOutcome,
  type WorkerHeartbeat,
} from './NodeRecord.js';
import type { RecordBatch, RecordStore } from './store.js';

/** Rows a statement inserts at most (their parameters stay under SQLite's older limit of 999). */
const ROWS_PER_INSERT = 100;

/** The tables, per dialect: MySQL's in utf8mb4 with a binary collation, so `Default` and `default` stay two queues. */
const CREATE: Record<Dialect, Record<keyof typeof RECORD_TABLES, string>> = {
  sqlite: {
    minutes:
      'create table if not exists "lqb_minutes" ("minute" integer not null, "queue" varchar(255) not null, "class" varchar(255) not null, "outcome" varchar(16) not null, "jobs" integer not null, "runtime_ms" integer not null, primary key ("minute", "queue", "class", "outcome"))',
    completed:
      'create table if not exists "lqb_completed" ("id" integer not null primary key autoincrement, "uuid" varchar(255), "name" text not null, "class" text not null, "queue" text not null, "connection" text not null, "runtime_ms" integer not null, "finished_at" real not null)',
    workers:
      'create table if not exists "lqb_workers" ("id" varchar(255) not null primary key, "last_poll" integer not null, "every" real not null, "heartbeat" text not null)',
  },
  mysql: {
    minutes:
      'create table if not exists `lqb_minutes` (`minute` bigint not null, `queue` varchar(255) not null, `class` varchar(255) not null, `outcome` varchar(16) not null, `jobs` bigint not null, `runtime_ms` bigint not null, primary key (`minute`, `queue`, `class`, `outcome`)) default character set utf8mb4 collate utf8mb4_bin',
    completed:
      'create table if not exists `lqb_completed` (`id` bigint unsigned not null auto_increment primary key, `uuid` varchar(255) null, `name` text not null, `class` text not null, `queue` text not null, `connection` text not null, `runtime_ms` bigint not null, `finished_at` double not null) default character set utf8mb4 collate utf8mb4_bin',
    workers:
      'create table if not exists `lqb_workers` (`id` varchar(255) not null primary key, `last_poll` bigint not null, `every` double not null, `heartbeat` text not null) default character set utf8mb4 collate utf8mb4_bin',
  },
  pgsql: {
    minutes:
      'create table if not exists "lqb_minutes" ("minute" bigint not null, "queue" varchar(255) not null, "class" varchar(255) not null, "outcome" varchar(16) not null, "jobs" bigint not null, "runtime_ms" bigint not null, primary key ("minute", "queue", "class", "outcome"))',
    completed:
      'create table if not exists "lqb_completed" ("id" bigserial primary key, "uuid" varchar(255), "name" text not null, "class" text not null, "queue" text not null, "connection" text not null, "runtime_ms" bigint not null, "finished_at" double precision not null)',
    workers:
      'create table if not exists "lqb_workers" ("id" varchar(255) not null primary key, "last_poll" bigint not null, "every" double precision not null, "heartbeat" text not null)',
  },
};

const MINUTE_COLUMNS = ['minute', 'queue', 'class', 'outcome', 'jobs', 'runtime_ms'];
const COMPLETED_COLUMNS = ['uuid', 'name', 'class', 'queue', 'connection', 'runtime_ms', 'finished_at'];
const WORKER_COLUMNS = ['id', 'last_poll', 'every', 'heartbeat'];

export class DatabaseRecord implements RecordStore {
  /** The tables made (or found), once per store; a failure is tried again at the next flush. */
  private made: Promise<void> | undefined;
  /** The last minute whose old rows were deleted: once a minute is enough. */
  private trimmedAt = 0;

  constructor(readonly db: Database) {}

  /**
   * One flush in one transaction: the minutes' counts added (rows in key order, so that two
   * workers' flushes take their row locks in the same order), the completed jobs inserted and
   * those past `recent` deleted, the heartbeat upserted (or deleted at the run's end); once a
   * minute, the minutes past `keepSeconds` deleted.
   */
  async write(batch: RecordBatch): Promise<void> {
    await this.tables();
    const { keepSeconds, recent } = batch.options;
    const trim = Math.floor(batch.now / 60) > this.trimmedAt;
    await this.db.transaction(async (tx) => {
      const counts = [...batch.minutes].sort(
        (a, b) => a.minute - b.minute || compare(a.queue, b.queue) || compare(a.className, b.className) || compare(a.outcome, b.outcome),
      );
      for (let start = 0; start < counts.length; start += ROWS_PER_INSERT) {
        const rows = counts
          .slice(start, start + ROWS_PER_INSERT)
          .map((count) => [count.minute, count.queue, count.className, count.outcome, count.jobs, Math.round(count.ms)]);
        await tx.query(this.upsertMinutes(rows.length), rows.flat());
      }
      const completed = recent > 0 ? batch.completed.slice(-recent) : [];
      for (let start = 0; start < completed.length; start += ROWS_PER_INSERT) {
        const rows = completed
          .slice(start, start + ROWS_PER_INSERT)
          .map((job) => [job.uuid, job.name, job.className, job.queue, job.connection, Math.round(job.runtimeMs), job.finishedAt]);
        await tx.query(
          `insert into ${this.table('completed')} (${this.columns(COMPLETED_COLUMNS)}) values ${placeholders(rows.length, COMPLETED_COLUMNS.length)}`,
          rows.flat(),
        );
      }
      if (completed.length > 0) await this.trimCompleted(tx, recent);
      const beat = batch.heartbeat;
      if (batch.ended) await tx.query(`delete from ${this.table('workers')} where ${this.column('id')} = ?`, [beat.id]);
      else await tx.query(this.upsertWorker(), [beat.id, beat.lastPoll, beat.every, JSON.stringify(beat)]);
      if (trim)
        await tx.query(`delete from ${this.table('minutes')} where ${this.column('minute')} < ?`, [
          Math.floor(batch.now / 60) * 60 - keepSeconds - 60,
        ]);
    });
    if (trim) this.trimmedAt = Math.floor(batch.now / 60);
  }

  async prune(now: number): Promise<void> {
    await this.tables();
    await this.db.query(`delete from ${this.table('workers')} where ${this.column('last_poll')} + 3 * ${this.column('every')} < ?`, [now]);
  }

  async minutes(since: number, until: number): Promise<MinuteRow[]> {
    const found = await this.read<{
      minute: unknown;
      queue: unknown;
      class: unknown;
      outcome: unknown;
      jobs: unknown;
      runtime_ms: unknown;
    }>(
      'minutes',
      `select ${this.columns(MINUTE_COLUMNS)} from ${this.table('minutes')} where ${this.column('minute')} >= ? and ${this.column('minute')} <= ?`,
      [Math.floor(since / 60) * 60, Math.floor(until / 60) * 60],
    );
    const rows = new Map<string, MinuteRow>();
    for (const stored of found) {
      const [minute, queue, className] = [Number(stored.minute), String(stored.queue), String(stored.class)];
      const key = `${minute}\0${queue}\0${className}`;
      let row = rows.get(key);
      if (!row) rows.set(key, (row = { minute, queue, className, completed: 0, failed: 0, runtimeMs: 0 }));
      const outcome = String(stored.outcome) as RecordOutcome;
      if (outcome === 'completed' || outcome === 'failed') row[outcome] += Number(stored.jobs);
      row.runtimeMs += Number(stored.runtime_ms);
    }
    return [...rows.values()].sort(byQueueAndClass);
  }

  async recent(offset: number, limit: number): Promise<{ total: number; jobs: CompletedJob[] }> {
    const counted = await this.read<{ total: unknown }>(
      'completed',
      `select count(*) as ${this.column('total')} from ${this.table('completed')}`,
    );
    const total = Number(counted[0]?.total ?? 0);
    if (limit <= 0 || total === 0) return { total, jobs: [] };
    const rows = await this.read<Record<string, unknown>>(
      'completed',
      `select ${this.columns(COMPLETED_COLUMNS)} from ${this.table('completed')} order by ${this.column('id')} desc limit ${whole(limit)} offset ${whole(offset)}`,
    );
    const jobs = rows.map((row) => ({
      uuid: row.uuid === null || row.uuid === undefined ? null : String(row.uuid),
      name: String(row.name),
      className: String(row.class),
      queue: String(row.queue),
      connection: String(row.connection),
      runtimeMs: Number(row.runtime_ms),
      finishedAt: Number(row.finished_at),
    }));
    return { total, jobs };
  }

  async workers(now: number): Promise<WorkerHeartbeat[]> {
    const rows = await this.read<{ heartbeat: unknown }>('workers', `select ${this.column('heartbeat')} from ${this.table('workers')}`);
    return rows
      .map((row) => readHeartbeat(String(row.heartbeat)))
      .filter((beat): beat is WorkerHeartbeat => beat !== undefined && isLive(beat, now))
      .sort((a, b) => a.since - b.since || compare(a.id, b.id));
  }

  /**
   * Makes the tables that are not there, once per store. Two workers starting together may both
   * make one (PostgreSQL's `if not exists` is no guard against a create at the same moment): a
   * create that failed is fine once the table is there.
   */
  private tables(): Promise<void> {
    this.made ??= (async () => {
      for (const [name, sql] of Object.entries(CREATE[this.db.dialect]) as [keyof typeof RECORD_TABLES, string][]) {
        try {
          await this.db.query(sql);
        } catch (error) {
          if (!(await tableExists(this.db, RECORD_TABLES[name]).catch(() => false))) throw error;
        }
      }
    })().catch((error: unknown) => {
      this.made = undefined;
      throw error;
    });
    return this.made;
  }

  /** A read of one of the tables: none when the table is not there (no worker has written yet). */
  private async read<Row>(table: keyof typeof RECORD_TABLES, sql: string, params: unknown[] = []): Promise<Row[]> {
    try {
      return (await this.db.query<Row>(sql, params)).rows;
    } catch (error) {
      if (!(await tableExists(this.db, RECORD_TABLES[table]))) return [];
      throw error;
    }
  }

  /** Deletes the completed jobs older than the last `recent`. */
  private async trimCompleted(tx: Queryable, recent: number): Promise<void> {
    const id = this.column('id');
    const { rows } = await tx.query<{ id: unknown }>(
      `select ${id} from ${this.table('completed')} order by ${id} desc limit 1 offset ${whole(recent)}`,
    );
    if (rows[0] !== undefined) await tx.query(`delete from ${this.table('completed')} where ${id} <= ?`, [rows[0].id]);
  }

  /** Adds `rows` minute counts, each added to the row of its key when there is one. */
  private upsertMinutes(rows: number): string {
    const insert = `insert into ${this.table('minutes')} (${this.columns(MINUTE_COLUMNS)}) values ${placeholders(rows, MINUTE_COLUMNS.length)}`;
    const [jobs, ms] = [this.column('jobs'), this.column('runtime_ms')];
    if (this.db.dialect === 'mysql')
      return `${insert} on duplicate key update ${jobs} = ${jobs} + values(${jobs}), ${ms} = ${ms} + values(${ms})`;
    const table = this.table('minutes');
    return `${insert} on conflict (${this.columns(MINUTE_COLUMNS.slice(0, 4))}) do update set ${jobs} = ${table}.${jobs} + excluded.${jobs}, ${ms} = ${table}.${ms} + excluded.${ms}`;
  }

  /** Writes a worker's heartbeat, over the one before. */
  private upsertWorker(): string {
    const insert = `insert into ${this.table('workers')} (${this.columns(WORKER_COLUMNS)}) values ${placeholders(1, WORKER_COLUMNS.length)}`;
    const rest = WORKER_COLUMNS.slice(1).map((name) => this.column(name));
    if (this.db.dialect === 'mysql')
      return `${insert} on duplicate key update ${rest.map((column) => `${column} = values(${column})`).join(', ')}`;
    return `${insert} on conflict (${this.column('id')}) do update set ${rest.map((column) => `${column} = excluded.${column}`).join(', ')}`;
  }

  private table(name: keyof typeof RECORD_TABLES): string {
    return quoteName(this.db.dialect, RECORD_TABLES[name]);
  }

  private column(name: string): string {
    return quoteName(this.db.dialect, name);
  }

  private columns(names: string[]): string {
    return names.map((name) => this.column(name)).join(', ');
  }
}

/** `(?, ?, …), (?, ?, …)`: `rows` rows of `columns` parameters. */
function placeholders(rows: number, columns: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

/** A whole number 0 or more, for a LIMIT or OFFSET written into the statement (no driver binds those alike). */
function whole(value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`expected a whole number 0 or more, found ${value}`);
  return value;
}
