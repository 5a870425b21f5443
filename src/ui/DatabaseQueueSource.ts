/**
 * Laravel's `database` queue connection as the dashboard reads it: the `jobs` table itself
 * (`id`, `queue`, `payload`, `attempts`, `reserved_at`, `available_at`, `created_at`, as
 * `queue:table` makes it), through the repository's SQL layer, never the whole table at once.
 *
 * A row's state is what Laravel's DatabaseQueue::pop would make of it now:
 * - ready: not reserved and available (available_at <= now), or reserved longer ago than
 *   `retry_after`, since pop takes an expired reservation as it takes an available job;
 * - delayed: not reserved and not yet available;
 * - reserved: reserved within the last `retry_after` seconds.
 * A payload on this table has no `id` nor `attempts` (DatabaseQueue keeps them in columns): the
 * row's id and its `attempts` column stand in for them.
 */
import type { Database } from '../database/index.js';
import { quoteName } from '../database/index.js';
import type { CancelOutcome } from '../redis/cancel.js';
import { DECODED_UP_TO, HEAD_READ, TAIL_READ, type JobState } from './jobs.js';
import type { FoundJob, PageOptions, QueueCounts, QueueSource, StoredJob } from './source.js';

/** What a uuid looks like: anything else is not looked for (it goes into a LIKE pattern). */
const UUID = /^[0-9A-Za-z-]{1,64}$/;

export interface DatabaseQueueSourceOptions {
  /** The jobs table (`queue.connections.database.table`). */
  table?: string;
  /** The connection's `retry_after`, in seconds (90 in Laravel's config): when a reservation expires. */
  retryAfter?: number;
  /** UNIX seconds now; tests may stand in their own. */
  now?: () => number;
}

interface JobRow {
  id: unknown;
  payload: unknown;
  /** A cut read's: the payload's size in bytes, and its tail when it was too large to send whole. */
  payload_bytes?: unknown;
  payload_tail?: unknown;
  attempts: unknown;
  reserved_at: unknown;
  available_at: unknown;
  created_at: unknown;
}

/**
 * A payload read for a list: whole up to DECODED_UP_TO bytes, else its head and tail only, with
 * its size, so a row of 50 MB sends a few kilobytes (the same cut as src/redis/lua/page-ends.lua).
 */
export function cutPayloadColumns(dialect: Database['dialect'], payload: string): string[] {
  const bytes = dialect === 'sqlite' ? `length(cast(${payload} as blob))` : `octet_length(${payload})`;
  const tail = dialect === 'sqlite' ? `substr(${payload}, -${TAIL_READ})` : `right(${payload}, ${TAIL_READ})`;
  return [
    `${bytes} as payload_bytes`,
    `case when ${bytes} > ${DECODED_UP_TO} then substr(${payload}, 1, ${HEAD_READ}) else ${payload} end as ${quoteName(dialect, 'payload')}`,
    `case when ${bytes} > ${DECODED_UP_TO} then ${tail} else null end as payload_tail`,
  ];
}

export class DatabaseQueueSource implements QueueSource {
  readonly connection = 'database';
  readonly table: string;
  readonly retryAfter: number;
  private readonly now: () => number;

  constructor(
    readonly db: Database,
    options: DatabaseQueueSourceOptions = {},
  ) {
    this.table = options.table ?? 'jobs';
    this.retryAfter = options.retryAfter ?? 90;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
  }

  private name(identifier: string): string {
    return quoteName(this.db.dialect, identifier);
  }

  /**
   * Each state's condition, with its parameters, at `now`. An expired reservation is
   * `reserved_at <= now - retry_after`, as DatabaseQueue::isReservedButExpired writes it.
   */
  private condition(state: JobState, now: number): [sql: string, params: number[]] {
    const [reserved, available] = [this.name('reserved_at'), this.name('available_at')];
    const expired = now - this.retryAfter;
    if (state === 'ready') return [`((${reserved} is null and ${available} <= ?) or ${reserved} <= ?)`, [now, expired]];
    if (state === 'delayed') return [`(${reserved} is null and ${available} > ?)`, [now]];
    return [`${reserved} > ?`, [expired]];
  }

  /** The queues that have rows, sorted (the `queue` column is indexed by Laravel's migration). */
  async queueNames(): Promise<string[]> {
    const queue = this.name('queue');
    const { rows } = await this.db.query<{ q: unknown }>(`select distinct ${queue} as q from ${this.name(this.table)}`);
    return rows.map((row) => String(row.q)).sort();
  }

  /** The three counts in one pass over the queue's rows. */
  async counts(queue: string): Promise<QueueCounts> {
    const now = this.now();
    const states: JobState[] = ['ready', 'delayed', 'reserved'];
    const parts = states.map((state) => this.condition(state, now));
    const sums = parts.map(([sql], i) => `sum(case when ${sql} then 1 else 0 end) as ${this.name(states[i]!)}`).join(', ');
    const { rows } = await this.db.query<Record<JobState, unknown>>(
      `select ${sums} from ${this.name(this.table)} where ${this.name('queue')} = ?`,
      [...parts.flatMap(([, params]) => params), queue],
    );
    const row = rows[0];
    return { ready: Number(row?.ready ?? 0), delayed: Number(row?.delayed ?? 0), reserved: Number(row?.reserved ?? 0) };
  }

  /** A page of one state's rows in id order (the order pop meets them), with their count. */
  async page(
    queue: string,
    state: JobState,
    offset: number,
    limit: number,
    options: PageOptions = {},
  ): Promise<{ total: number; jobs: StoredJob[] }> {
    const now = this.now();
    const [condition, params] = this.condition(state, now);
    const where = `where ${this.name('queue')} = ? and ${condition}`;
    const columns = [
      ...['id', 'attempts', 'reserved_at', 'available_at', 'created_at'].map((c) => this.name(c)),
      ...(options.cut ? cutPayloadColumns(this.db.dialect, this.name('payload')) : [this.name('payload')]),
    ].join(', ');
    const [{ rows: counted }, { rows }] = await Promise.all([
      this.db.query<{ n: unknown }>(`select count(*) as n from ${this.name(this.table)} ${where}`, [queue, ...params]),
      this.db.query<JobRow>(
        `select ${columns} from ${this.name(this.table)} ${where} order by ${this.name('id')} limit ${Math.floor(limit)} offset ${Math.floor(offset)}`,
        [queue, ...params],
      ),
    ]);
    return { total: Number(counted[0]?.n ?? 0), jobs: rows.map((row) => this.stored(row, state)) };
  }

  /** A row as a page holds it: the time its state gives it (due, or the reservation's end), its id, attempts and push time. */
  private stored(row: JobRow, state: JobState): StoredJob {
    const until = state === 'delayed' ? Number(row.available_at) : state === 'reserved' ? Number(row.reserved_at) + this.retryAfter : null;
    const text = (value: unknown) => (Buffer.isBuffer(value) ? value.toString('utf8') : String(value));
    return {
      payload: text(row.payload),
      ...(row.payload_tail !== null && row.payload_tail !== undefined
        ? { cut: { bytes: Number(row.payload_bytes), tail: text(row.payload_tail) } }
        : {}),
      until,
      id: String(row.id),
      attempts: Number(row.attempts),
      pushedAt: Number(row.created_at),
    };
  }

  /** When the longest-waiting ready row became available (available_at: its push, or the end of its delay). */
  async readySince(queue: string): Promise<number | null | undefined> {
    const [ready, params] = this.condition('ready', this.now());
    const { rows } = await this.db.query<{ since: unknown }>(
      `select min(${this.name('available_at')}) as since from ${this.name(this.table)} where ${this.name('queue')} = ? and ${ready}`,
      [queue, ...params],
    );
    const since = rows[0]?.since;
    return since === null || since === undefined ? undefined : Number(since);
  }

  /** A job by its uuid (the payload's top-level `"uuid":"…"`), with the state its columns give it now. */
  async find(queue: string, uuid: string): Promise<FoundJob | undefined> {
    if (!UUID.test(uuid)) return undefined;
    const columns = ['id', 'payload', 'attempts', 'reserved_at', 'available_at', 'created_at'].map((c) => this.name(c)).join(', ');
    const { rows } = await this.db.query<JobRow>(
      `select ${columns} from ${this.name(this.table)} where ${this.name('queue')} = ? and ${this.name('payload')} like ? order by ${this.name('id')} limit 1`,
      [queue, `%"uuid":"${uuid}"%`],
    );
    const row = rows[0];
    if (!row) return undefined;
    const state = this.stateOfRow(row);
    return { ...this.stored(row, state), state };
  }

  /** The state a row's columns give it now, as the conditions above read them. */
  private stateOfRow(row: JobRow): JobState {
    const now = this.now();
    if (row.reserved_at !== null && row.reserved_at !== undefined)
      return Number(row.reserved_at) > now - this.retryAfter ? 'reserved' : 'ready';
    return Number(row.available_at) > now ? 'delayed' : 'ready';
  }

  /**
   * Cancels a delayed job: its row deleted, in one statement, only while it is still delayed and
   * unreserved, so a worker that took it in between keeps it. The uuid is the payload's top-level
   * `"uuid":"…"` (a nested payload's quotes are escaped inside its JSON string, so it cannot match).
   */
  async cancel(queue: string, uuid: string): Promise<CancelOutcome> {
    if (!UUID.test(uuid)) return { cancelled: false, queue, uuid, state: 'missing' };
    const pattern = `%"uuid":"${uuid}"%`;
    const [delayed, params] = this.condition('delayed', this.now());
    const { affected } = await this.db.query(
      `delete from ${this.name(this.table)} where ${this.name('queue')} = ? and ${delayed} and ${this.name('payload')} like ?`,
      [queue, ...params, pattern],
    );
    if (affected > 0) return { cancelled: true, queue, uuid };
    return { cancelled: false, queue, uuid, state: await this.stateOf(queue, pattern) };
  }

  /** Where a job is, when the cancel did not find it delayed. */
  private async stateOf(queue: string, pattern: string): Promise<'ready' | 'reserved' | 'missing'> {
    const [reserved] = this.condition('reserved', this.now());
    const { rows } = await this.db.query<{ r: unknown }>(
      `select case when ${reserved} then 1 else 0 end as r from ${this.name(this.table)} where ${this.name('queue')} = ? and ${this.name('payload')} like ?`,
      [this.now() - this.retryAfter, queue, pattern],
    );
    if (rows.length === 0) return 'missing';
    return Number(rows[0]!.r) === 1 ? 'reserved' : 'ready';
  }

  /**
   * DatabaseQueue::pushRaw, for a failed job's retry: a row available now, no attempts yet, as
   * `queue:retry` pushes it onto the database connection.
   */
  async pushRaw(payload: string, queue: string): Promise<void> {
    const now = this.now();
    const columns = ['queue', 'attempts', 'reserved_at', 'available_at', 'created_at', 'payload'].map((c) => this.name(c)).join(', ');
    await this.db.query(`insert into ${this.name(this.table)} (${columns}) values (?, 0, null, ?, ?, ?)`, [queue, now, now, payload]);
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
