/**
 * Laravel's database queue: the `jobs` table (id, queue, payload, attempts, reserved_at,
 * available_at, created_at), read and written with the statements Laravel's DatabaseQueue runs,
 * so PHP and Node workers can share one table.
 *
 * - push, later and bulk insert rows: attempts 0, reserved_at null, available_at = now + delay.
 * - A reserve is one transaction: the oldest rows (by id) of the queue that are due and not
 *   reserved, or reserved longer ago than retry_after, taken `FOR UPDATE SKIP LOCKED` where
 *   Laravel takes them so (MySQL 8.0.1+, MariaDB 10.6+, PostgreSQL 9.5+), plain `FOR UPDATE` on
 *   older servers, nothing on SQLite (whose transaction takes the write lock first); then
 *   reserved_at = now and attempts + 1.
 * - delete locks the row, then deletes it; release locks it, deletes it and inserts a new row
 *   with the same payload and attempts (a new id, at the back of the queue). A delete that meets
 *   an outage is tried again until the server answers: by the row's id, whatever its
 *   reservation says by then, so a job this worker finished does not run again.
 * - Times are this process's clock in UNIX seconds, as Laravel's are PHP's.
 */
import { encodeString } from '../laravel/json.js';
import { classNamingTexts, containsParam, containsSql } from './contains.js';
import type { LaravelProfile } from '../laravel/index.js';
import type { Queue, QueuedJob, TakeOnly, WatchedClient } from '../queue/contract.js';
import { takesHead } from '../queue/take.js';
import { openDatabase, quoteName, type Database, type DatabaseOptions, type Queryable } from './database.js';
import { DatabaseJob, type JobRecord } from './DatabaseJob.js';
import { isConnectionError, outagePause } from './reach.js';
import { databaseConfig } from './url.js';
import { ClassTally, type ClassCount } from '../queue/byClass.js';

export interface DatabaseQueueOptions {
  /** The jobs table (`queue.connections.database.table`, `jobs`); `schema.table` is quoted part by part. */
  table?: string;
  /** The queue used when none is named (Laravel's `queue` setting). */
  defaultQueue?: string;
  /** Seconds a reservation lasts before another worker may take the job (`retry_after`, 90); null: never. */
  retryAfter?: number | null;
  /** The clock, in UNIX seconds; tests may stand in their own. */
  now?: () => number;
  /**
   * The server version Laravel's connection config may state (`version`), read in place of the
   * server's own when deciding the reserve's lock, as Laravel does.
   */
  serverVersion?: string;
  /** The Laravel version the app runs: from 9, a Vitess (PlanetScale) server is judged as Laravel 9+ judges it. */
  laravel?: LaravelProfile;
  /**
   * Seconds a pop that finds nothing polls the table for a job before it returns empty. Laravel
   * has no such wait (its worker sleeps `--sleep`), so none by default; interruptWait() ends it.
   */
  waitFor?: number | null;
  /** Milliseconds between two looks at the table while waiting (waitFor): 250. */
  pollInterval?: number;
}

/** A reserve that failed on the rows it had chosen: Laravel 12.54+ fails that job rather than block the queue on it. */
export class DatabaseReserveError extends Error {
  override name = 'DatabaseReserveError';
  constructor(
    /** The job the reserve had taken, as its row was before (the transaction was rolled back). */
    readonly job: DatabaseJob,
    cause: unknown,
  ) {
    super(`could not reserve job ${job.id} of queue "${job.queue}": ${firstLine(cause)}`, { cause });
  }
}

/** Deletes waiting for their transaction, and the callers told when it commits. */
interface DeleteBatch {
  ids: string[];
  done: { resolve: () => void; reject: (error: unknown) => void }[];
}

/** The lock clause Laravel's reserve query ends with: SKIP LOCKED, plain FOR UPDATE, or none (SQLite). */
export type PopLock = 'for update skip locked' | 'for update' | '';

/** The rows a reserve may take, as Laravel's reserve selects them: the queue's, ready, or reserved and run out (parameters: queue, now, expiration). */
const RESERVABLE = 'queue = ? and ((reserved_at is null and available_at <= ?) or (reserved_at <= ?))';

/** With share on, the rows a reserve reads for candidates per page, and pages per reserve; with canary shares, the bytes of each payload read. */
const SHARE_PAGE = 500;
const SHARE_PAGES = 20;
/** With share on, the longest a reserve goes on from where the last left off before it looks from the first row again. */
const SHARE_RESTART_MS = 5000;
const HEAD_BYTES = 2048;
/** With share on, how long candidates a reserve did not come to are kept for the next (see takeSpares). */
const SPARES_MS = 1000;

/** Candidate rows found at `since` for a TakeOnly, not yet tried (see takeSpares). */
interface Spares {
  take: TakeOnly;
  ids: string[];
  since: number;
}

/** A reserve takes at most this many rows at once (a worker's concurrency asks for fewer). */
const MOST_PER_RESERVE = 1000;
/** Rows per insert statement in a bulk push, and its payload bytes: under SQLite's parameter limit and MySQL's packet size. */
const BULK_ROWS = 500;
const BULK_BYTES = 4 * 1024 * 1024;
/** A transaction that lost a deadlock (or a serialization) to another is tried again, up to this many times in all. */
const CONCURRENCY_TRIES = 3;

export class DatabaseQueue implements Queue<DatabaseJob> {
  readonly driver = 'database' as const;
  readonly defaultQueue: string;
  readonly retryAfter: number | null;
  readonly table: string;
  private readonly quotedTable: string;
  private readonly now: () => number;
  private readonly waitFor: number | null;
  private readonly pollInterval: number;
  private lock: Promise<PopLock> | undefined;
  /**
   * The jobs this worker holds, by row id: those it last renewed and those reserved since, less
   * the ones it deleted, released or gave back. A reserve that meets one of them (its
   * reservation ran out while this worker still runs it) renews it instead of running it twice.
   */
  private held = new Map<string, DatabaseJob>();
  /** Deletes asked for in one turn of the event loop, done in one transaction. */
  private pendingDeletes: DeleteBatch | undefined;
  /** The last batch of deletes scheduled (each starts when the one before has ended), which close() waits for. */
  private flushing: Promise<void> | undefined;
  private waiting: AbortController | undefined;
  private closed = false;
  /** Delete batches waiting for the server to answer again; a reserve waits for them (see reserve). */
  private deletesInOutage = 0;
  /** Ends the pauses of deletes waiting out an outage: at close(), and when the worker stops (interruptWait). */
  private outageWait = new AbortController();

  constructor(
    readonly db: Database,
    private readonly options: DatabaseQueueOptions & { ownsDatabase?: boolean } = {},
  ) {
    this.table = options.table ?? 'jobs';
    this.quotedTable = quoteName(db.dialect, this.table);
    this.defaultQueue = options.defaultQueue ?? 'default';
    this.retryAfter = options.retryAfter === undefined ? 90 : options.retryAfter;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.waitFor = options.waitFor ?? null;
    this.pollInterval = options.pollInterval ?? 250;
  }

  /** A queue on the database a URL names (sqlite:///path, mysql://, mariadb://, postgres://); close() closes that database. */
  static open(url: string, options: DatabaseQueueOptions & DatabaseOptions = {}): DatabaseQueue {
    return new DatabaseQueue(openDatabase(databaseConfig(url), { busyTimeout: options.busyTimeout }), { ...options, ownsDatabase: true });
  }

  /** The database server's reach, which the worker watches for health() and its outage lines (none for a SQLite file). */
  get clients(): readonly WatchedClient[] {
    return this.db.reach ? [this.db.reach] : [];
  }

  // ---- pushing ----

  /** Inserts a payload, due now; resolves to the new row's id (Laravel's pushRaw returns it too). */
  async pushRaw(payload: string, queue?: string): Promise<string> {
    return this.pushToDatabase(this.db, this.queueName(queue), payload, 0, 0);
  }

  /** Inserts a payload due after `delay` seconds (or at a Date); resolves to the new row's id. */
  async laterRaw(delay: number | Date, payload: string, queue?: string): Promise<string> {
    return this.pushToDatabase(this.db, this.queueName(queue), payload, delay, 0);
  }

  /** Inserts many payloads, due now, in order, in one transaction (Laravel's bulk is one insert). */
  async bulkRaw(payloads: string[], queue?: string): Promise<void> {
    if (payloads.length === 0) return;
    const name = this.queueName(queue);
    const now = this.now();
    await this.db.transaction(async (tx) => {
      for (const chunk of chunks(payloads)) {
        const rows = chunk.map(() => '(?, ?, ?, ?, ?, ?)').join(', ');
        await tx.query(
          `insert into ${this.quotedTable} (queue, attempts, reserved_at, available_at, created_at, payload) values ${rows}`,
          chunk.flatMap((payload) => [name, 0, null, now, now, payload]),
        );
      }
    });
  }

  /** Laravel's pushToDatabase: one row, returning its id (PostgreSQL says it with RETURNING, as Laravel's insertGetId asks). */
  private async pushToDatabase(on: Queryable, queue: string, payload: string, delay: number | Date, attempts: number): Promise<string> {
    const returning = this.db.dialect === 'pgsql' ? ' returning id' : '';
    const result = await on.query<{ id: unknown }>(
      `insert into ${this.quotedTable} (queue, attempts, reserved_at, available_at, created_at, payload) values (?, ?, ?, ?, ?, ?)${returning}`,
      [queue, attempts, null, this.availableAt(delay), this.now(), payload],
    );
    return String(returning ? result.rows[0]?.id : result.insertId);
  }

  // ---- reserving ----

  async pop(queue?: string): Promise<DatabaseJob | null> {
    return (await this.popMany(queue, 1))[0] ?? null;
  }

  /**
   * Reserves up to `count` rows in one transaction: the first `count` rows Laravel's pop would
   * take one after another (the same rows, locked the same way), each left as Laravel's pop
   * leaves its row: reserved_at = now, attempts + 1. With `waitFor`, polls that long for a job.
   */
  async popMany(queue: string | undefined, count: number, take?: TakeOnly): Promise<DatabaseJob[]> {
    const name = this.queueName(queue);
    const wanted = Math.max(0, Math.min(MOST_PER_RESERVE, Math.floor(count)));
    if (wanted === 0) return [];
    const jobs = await this.reserve(name, wanted, take);
    if (jobs.length > 0 || this.waitFor === null || this.waitFor <= 0) return jobs;
    return this.pollFor(name, wanted, this.waitFor, take);
  }

  private async pollFor(name: string, count: number, seconds: number, take?: TakeOnly): Promise<DatabaseJob[]> {
    const until = Date.now() + seconds * 1000;
    const waiting = (this.waiting = new AbortController());
    try {
      while (!waiting.signal.aborted && !this.closed && Date.now() < until) {
        await abortableSleep(Math.min(this.pollInterval, Math.max(0, until - Date.now())), waiting.signal);
        if (waiting.signal.aborted || this.closed) break;
        const jobs = await this.reserve(name, count, take);
        if (jobs.length > 0) return jobs;
      }
      return [];
    } finally {
      if (this.waiting === waiting) this.waiting = undefined;
    }
  }

  /**
   * One reserve transaction. Should marking the rows fail (Laravel 12.54 names an attempts
   * column that overflows), a reserve of several is tried again row by row, so that the error
   * names the one job it is about, as Laravel's pop of one row would.
   */
  private async reserve(name: string, count: number, take?: TakeOnly): Promise<DatabaseJob[]> {
    // Jobs finished before an outage are deleted first: a reserve would otherwise find those
    // whose reservation ran out meanwhile and run them again.
    while (this.deletesInOutage > 0 && this.flushing) await this.flushing;
    // Deletes asked for and not yet begun commit with this reserve: one transaction a job, one
    // commit (a disk flush) where there would be two. Taken before the first await: the worker
    // asks for the delete and then the next job in the same turn, and the delete's own flush
    // (a setImmediate later) would otherwise take them while the reserve waits on the server.
    // Should the reserve fail, they go on by themselves.
    const deletes = this.takePendingDeletes();
    let chosen: JobRecord[] = [];
    try {
      const lock = await this.lockForPopping();
      const select = `select * from ${this.quotedTable} where ${RESERVABLE} order by id asc limit ${count}${lock ? ` ${lock}` : ''}`;
      // With share on, the rows of the classes taken are chosen first, without a lock (see
      // candidates): those a reserve before found and did not come to, while fresh, else looked for.
      const spare = take ? this.takeSpares(name, take) : undefined;
      const since = spare?.since ?? Date.now();
      const candidates = take ? (spare?.ids ?? (await this.candidates(name, count, take))) : undefined;
      const nothingToReserve =
        candidates?.length === 0 || (!candidates && this.db.dialect === 'sqlite' && !deletes && !(await this.anyToReserve(select, name)));
      if (nothingToReserve && !deletes) return [];
      const jobs = await this.transaction(async (tx) => {
        chosen = [];
        if (deletes) await this.deleteRows(tx, deletes.ids);
        if (nothingToReserve) return [];
        const now = this.now();
        let rows: Record<string, unknown>[];
        if (candidates) {
          const locked = await this.lockEach(tx, candidates, count, lock, name, now);
          rows = locked.rows;
          this.keepSpares(name, { take: take!, ids: candidates.slice(locked.tried), since });
        } else rows = (await tx.query(select, [name, now, this.expiration(now)])).rows;
        chosen = rows.map(toRecord);
        return this.markAsReserved(tx, chosen, now);
      });
      if (deletes) for (const { resolve } of deletes.done) resolve();
      for (const job of jobs) this.held.set(job.id, job);
      // Spares all gone meanwhile (other workers took them): looked for afresh, not "queue empty".
      if (spare && jobs.length === 0) return await this.reserve(name, count, take);
      return jobs;
    } catch (error) {
      if (deletes) this.flushAlone(deletes);
      // A server gone mid-reserve is an outage, not a bad row: nothing was reserved.
      if (chosen.length === 0 || isConnectionError(error)) throw error;
      if (chosen.length > 1) return this.reserve(name, 1, take);
      throw new DatabaseReserveError(new DatabaseJob(this, chosen[0]!), error);
    }
  }

  /**
   * With share on, the ids of rows a reserve may take: ready (or run out) rows of the queue whose
   * payload names a class taken (`"displayName":"…"` or `"commandName":"…"`, as JSON spells them),
   * oldest first, a few more than wanted (another Node worker may hold some). Read without a lock
   * and outside the reserve's transaction: under MySQL/MariaDB's REPEATABLE READ a locking read
   * over this scan would lock every row it passes, PHP's included, and PHP's own SKIP LOCKED
   * reserve would then find nothing and sleep. Each candidate is locked alone after (lockEach).
   * The LIKE over the payload is a scan of the queue's rows in id order until enough match.
   */
  private async candidates(name: string, count: number, take: TakeOnly): Promise<string[]> {
    const patterns = this.takePatterns(take);
    if (patterns.length === 0) return [];
    const now = this.now();
    const likes = patterns.map(() => this.containsSql).join(' or ');
    const limit = Math.min(MOST_PER_RESERVE, count * 2 + 8);
    // Read in pages by id, going on after the last row the reserve before looked at: the rows
    // left to PHP stay where they are (PHP takes them from the front), so they are passed once,
    // not at every poll; from the first row again only when none is found after (new rows come
    // after; a row whose reservation ran out, or one released early, is met then, and at least
    // every SHARE_RESTART_MS). With canary shares a row's class and bucket are read from its
    // payload's head (take.ts).
    const head = take.shares ? `substr(payload, 1, ${HEAD_BYTES})` : `''`;
    const found: string[] = [];
    const cursor = this.shareCursors.get(name);
    const from = cursor && Date.now() - cursor.since < SHARE_RESTART_MS ? cursor.after : 0;
    const since = from === 0 ? Date.now() : cursor!.since;
    let after = from;
    let wrapped = from === 0;
    for (let page = 0; page < SHARE_PAGES && found.length < limit; page++) {
      // As many rows as are still wanted: the scan stops at the last of them rather than reading
      // on to the end of the table. With canary shares a row read may be left (its bucket), so a page.
      const asked = take.shares ? SHARE_PAGE : limit - found.length;
      const { rows } = await this.db.query<{ id: unknown; head: unknown }>(
        `select id, ${head} as head from ${this.quotedTable} where ${RESERVABLE} and (${likes}) and id > ? order by id asc limit ${asked}`,
        [name, now, this.expiration(now), ...patterns, after],
      );
      for (const row of rows) {
        if (found.length >= limit) break;
        after = Number(row.id);
        if (!take.shares || takesHead(take.classes, take.shares, String(row.head ?? ''), after)) found.push(String(row.id));
      }
      if (rows.length < asked && found.length < limit) {
        if (wrapped) break;
        // The end reached: once more from the first row.
        [after, wrapped] = [0, true];
        this.shareCursors.delete(name);
      }
    }
    this.shareCursors.set(name, {
      after: found.length > 0 ? Number(found[0]) - 1 : after,
      since: wrapped && from !== 0 ? Date.now() : since,
    });
    return found;
  }

  /**
   * A payload holds a text (containsSql's parameter, see takePatterns). PostgreSQL's planner
   * reckons `payload like '%…%'` matches almost no row, and then reads every ready row of the
   * queue and sorts them at each reserve, where strpos's default estimate keeps it walking the
   * primary key in order, stopping at the limit (as it does for Laravel's own reserve).
   * MySQL/MariaDB and SQLite walk the key in order either way.
   */
  private get containsSql(): string {
    return containsSql(this.db.dialect, 'payload');
  }

  /**
   * Candidates a reserve found and did not come to (it wanted fewer), kept a moment for the next
   * reserve on the queue: one query fewer a job for a worker taking one job at a time. Each is
   * still locked alone and checked reservable when taken (lockEach), so one another worker took
   * meanwhile is passed over; kept no longer than SPARES_MS, so a job whose reservation ran out
   * waits no longer for its turn than the cursor lets it (see candidates).
   */
  private takeSpares(name: string, take: TakeOnly): Spares | undefined {
    const spares = this.spares.get(name);
    this.spares.delete(name);
    if (!spares || spares.take !== take || Date.now() - spares.since > SPARES_MS) return undefined;
    return spares;
  }

  private keepSpares(name: string, spares: Spares): void {
    if (spares.ids.length > 0) this.spares.set(name, spares);
    else this.spares.delete(name);
  }

  /** With share on, per queue: candidates found and not yet tried (see takeSpares). */
  private readonly spares = new Map<string, Spares>();

  /** The containsSql parameters a TakeOnly's classes are matched with, made once per TakeOnly. */
  private takePatterns(take: TakeOnly): string[] {
    let patterns = this.patterns.get(take);
    if (patterns === undefined) {
      const texts = [...new Set(take.classes.flatMap(classNamingTexts))];
      patterns = texts.map((text) => containsParam(this.db.dialect, text));
      this.patterns.set(take, patterns);
    }
    return patterns;
  }

  private readonly patterns = new WeakMap<TakeOnly, string[]>();
  /** With share on, per queue: the row id the next look for candidates goes on after. */
  private readonly shareCursors = new Map<string, { after: number; since: number }>();

  /**
   * In the reserve's transaction, each candidate locked alone (`… where id = ? for update skip
   * locked`, the lock Laravel's reserve takes on this server) while it is still reservable, until
   * `count` are held: no row but those taken is ever locked. One another worker holds is skipped.
   */
  private async lockEach(
    tx: Queryable,
    ids: string[],
    count: number,
    lock: PopLock,
    name: string,
    now: number,
  ): Promise<{ rows: Record<string, unknown>[]; tried: number }> {
    const rows: Record<string, unknown>[] = [];
    const sql = `select * from ${this.quotedTable} where id = ? and ${RESERVABLE}${lock ? ` ${lock}` : ''}`;
    let tried = 0;
    for (const id of ids) {
      if (rows.length >= count) break;
      tried++;
      const { rows: found } = await tx.query<Record<string, unknown>>(sql, [idParam(id), name, now, this.expiration(now)]);
      rows.push(...found);
    }
    return { rows, tried };
  }

  /**
   * SQLite: whether the reserve's select finds a row, read without the write lock. SQLite has one
   * writer, and a Laravel 8 worker whose transaction read and then wants to write is refused at
   * once ("database is locked") while another connection holds that lock: a worker polling an
   * empty table takes it only when there is a row to reserve.
   */
  private async anyToReserve(select: string, name: string): Promise<boolean> {
    const now = this.now();
    const { rows } = await this.db.query(select.replace(/ limit \d+$/, ' limit 1'), [name, now, this.expiration(now)]);
    return rows.length > 0;
  }

  /**
   * reserved_at = now and attempts + 1 for the rows taken (under their lock, or SQLite's write
   * lock, so `attempts + 1` is the value read plus one, as Laravel writes it). A row this worker
   * already holds, whose reservation ran out, is renewed instead and not handed out again.
   */
  private async markAsReserved(tx: Queryable, records: JobRecord[], now: number): Promise<DatabaseJob[]> {
    const mine = records.filter((record) => this.isHeld(record));
    const fresh = records.filter((record) => !this.isHeld(record));
    if (mine.length > 0) {
      await tx.query(`update ${this.quotedTable} set reserved_at = ? where id in (${marks(mine)})`, [now, ...mine.map(idParam)]);
      for (const record of mine) this.held.get(record.id)!.record.reservedAt = now;
    }
    if (fresh.length === 0) return [];
    await tx.query(`update ${this.quotedTable} set reserved_at = ?, attempts = attempts + 1 where id in (${marks(fresh)})`, [
      now,
      ...fresh.map(idParam),
    ]);
    return fresh.map((record) => new DatabaseJob(this, { ...record, reservedAt: now, attempts: record.attempts + 1 }));
  }

  /** The row is one this worker runs: the same row id, its attempts not counted again by another worker since. */
  private isHeld(record: JobRecord): boolean {
    return this.held.get(record.id)?.record.attempts === record.attempts;
  }

  /** Reservations made at or before this moment have run out (Laravel: now minus retry_after). */
  private expiration(now: number): number | null {
    // retry_after null: a reservation never runs out here (`reserved_at <= null` matches no row).
    return this.retryAfter === null ? null : now - this.retryAfter;
  }

  /**
   * The lock Laravel's reserve query takes on this database, decided once from the server's
   * version (or the `serverVersion` option, as Laravel's connection config `version`).
   */
  lockForPopping(): Promise<PopLock> {
    return (this.lock ??= this.decideLock().catch((error: unknown) => {
      this.lock = undefined;
      throw error;
    }));
  }

  private async decideLock(): Promise<PopLock> {
    if (this.db.dialect === 'sqlite') return '';
    const version = this.options.serverVersion ?? (await this.serverVersion());
    return lockForPopping(this.db.dialect, version, this.options.laravel);
  }

  /** What PDO's ATTR_SERVER_VERSION gives Laravel: MySQL's VERSION(), PostgreSQL's server_version. */
  private async serverVersion(): Promise<string> {
    const sql = this.db.dialect === 'pgsql' ? 'show server_version' : 'select version() as server_version';
    const { rows } = await this.db.query<{ server_version: unknown }>(sql);
    return String(rows[0]?.server_version ?? '');
  }

  // ---- finishing ----

  /**
   * Deletes a reserved job's row: locked first, then deleted, in one transaction, as Laravel's
   * deleteReserved. Deletes asked for in the same turn of the event loop, or while the
   * transaction before them commits, share one transaction (a group commit: each commit is a disk
   * flush, and jobs finishing together then cost one), rows locked in id order so two workers'
   * batches cannot deadlock on each other.
   */
  deleteReserved(job: DatabaseJob): Promise<void> {
    this.letGo(job);
    if (!this.pendingDeletes) {
      this.pendingDeletes = { ids: [], done: [] };
      // After the batch under way, if any: what arrives meanwhile joins this one.
      const previous = this.flushing ?? Promise.resolve();
      this.flushing = previous.then(() => new Promise<void>((resolve) => setImmediate(resolve))).then(() => this.flushDeletes());
    }
    const batch = this.pendingDeletes;
    batch.ids.push(job.id);
    return new Promise((resolve, reject) => batch.done.push({ resolve, reject }));
  }

  private async flushDeletes(): Promise<void> {
    const batch = this.takePendingDeletes();
    // A reserve took these deletes into its own transaction.
    if (batch) await this.commitDeletes(batch);
  }

  private takePendingDeletes(): DeleteBatch | undefined {
    const batch = this.pendingDeletes;
    this.pendingDeletes = undefined;
    return batch;
  }

  private async commitDeletes(batch: DeleteBatch): Promise<void> {
    try {
      await this.deleteThroughOutage(batch.ids);
      for (const { resolve } of batch.done) resolve();
    } catch (error) {
      for (const { reject } of batch.done) reject(error);
    }
  }

  /**
   * Deletes the rows, tried again while the server is unreachable (a growing pause between
   * tries), until it answers: a finished job whose delete is lost would run again once its
   * reservation ran out. By id alone, as Laravel's deleteReserved: by then another reserve may
   * have taken the row (its reservation ran out during the outage), and the job is done all the
   * same. Deleting a row twice (a commit whose answer was lost) deletes nothing the second time.
   * Given up when the queue closes or the worker stops (interruptWait): the job then stays
   * reserved and comes back after retry_after, as before.
   */
  private async deleteThroughOutage(ids: string[]): Promise<void> {
    const waiting = this.outageWait.signal;
    let counted = false;
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          return await this.transaction((tx) => this.deleteRows(tx, ids));
        } catch (error) {
          // After the wait was ended, one last try: its error then stands.
          if (!isConnectionError(error) || this.closed || waiting.aborted) throw error;
        }
        if (!counted) this.deletesInOutage++;
        counted = true;
        await abortableSleep(outagePause(attempt), waiting);
      }
    } finally {
      if (counted) this.deletesInOutage--;
    }
  }

  /** Deletes a reserve took in but could not commit: in their own transaction, after the batch under way, as close() expects. */
  private flushAlone(batch: DeleteBatch): void {
    const previous = this.flushing ?? Promise.resolve();
    this.flushing = previous.then(() => this.commitDeletes(batch));
  }

  /** Laravel's deleteReserved for many rows: each locked (in id order, so two workers' batches cannot deadlock), then deleted. */
  private async deleteRows(tx: Queryable, ids: string[]): Promise<void> {
    const sorted = [...new Set(ids)].sort(byId);
    await this.lockRows(tx, sorted);
    await tx.query(`delete from ${this.quotedTable} where id in (${marks(sorted)})`, sorted.map(idParam));
  }

  /**
   * `select … for update` of the rows, where the database has row locks (Laravel's lockForUpdate;
   * nothing on SQLite). One row needs no lock of its own: the delete takes that same lock, and
   * the order of locks only matters between several.
   */
  private async lockRows(tx: Queryable, ids: string[]): Promise<void> {
    if (this.db.dialect === 'sqlite' || ids.length < 2) return;
    await tx.query(`select id from ${this.quotedTable} where id in (${marks(ids)}) order by id asc for update`, ids.map(idParam));
  }

  /**
   * Laravel's deleteAndRelease: in one transaction the row is locked and deleted, and a new row
   * inserted with the same payload and attempts, due after `delay` seconds. Resolves to the new row's id.
   */
  async release(job: DatabaseJob, delay = 0): Promise<string> {
    this.letGo(job);
    return this.reinsert(job, delay, job.record.attempts);
  }

  /**
   * Undoes a reservation without spending its attempt: as release, but the new row's attempts
   * are the row's before this reserve. A new row rather than the old one unreserved: it goes to
   * the back of the queue (a Node worker that cannot run it does not meet it again first, as on
   * Redis, where a job given back waits in `:delayed` and then joins the list's tail), and PHP's
   * workers see exactly what they see after a release of their own.
   */
  async giveBack(job: DatabaseJob, delay = 0): Promise<string> {
    this.letGo(job);
    return this.reinsert(job, delay, Math.max(0, job.record.attempts - 1));
  }

  private reinsert(job: DatabaseJob, delay: number, attempts: number): Promise<string> {
    return this.transaction(async (tx) => {
      await this.lockRows(tx, [job.id]);
      await tx.query(`delete from ${this.quotedTable} where id = ?`, [idParam(job.id)]);
      return this.pushToDatabase(tx, job.queue, job.raw, delay, attempts);
    });
  }

  /**
   * reserved_at = now for the rows of these jobs that are still this worker's reservation (the
   * same id, its attempts not counted again by another worker, still reserved), so no worker,
   * PHP or Node, takes a job while it runs. The jobs given are the ones this worker holds from now on.
   */
  async renew(jobs: Iterable<DatabaseJob>): Promise<void> {
    const held = new Map<string, DatabaseJob>();
    for (const job of jobs) held.set(job.id, job);
    this.held = held;
    if (this.retryAfter === null || held.size === 0) return;
    const byAttempts = new Map<number, DatabaseJob[]>();
    for (const job of held.values()) {
      const same = byAttempts.get(job.record.attempts) ?? [];
      same.push(job);
      byAttempts.set(job.record.attempts, same);
    }
    const now = this.now();
    for (const [attempts, group] of byAttempts) {
      const ids = group.map((job) => job.id).sort(byId);
      await this.db.query(
        `update ${this.quotedTable} set reserved_at = ? where reserved_at is not null and attempts = ? and id in (${marks(ids)})`,
        [now, attempts, ...ids.map(idParam)],
      );
      for (const job of group) job.record.reservedAt = now;
    }
  }

  /** The job is no longer this worker's: deleted, released or given back. */
  private letGo(job: DatabaseJob): void {
    if (this.held.get(job.id) === job) this.held.delete(job.id);
  }

  /** The database queue keeps delayed and reserved jobs in their rows: a pop finds them due by itself. */
  async migrate(): Promise<void> {}

  // ---- reading ----

  /** Every row of the queue (Laravel's size: reserved and delayed ones too). */
  async size(queue?: string): Promise<number> {
    return this.count('', [], queue);
  }

  /** Rows due and not reserved (Laravel 12's pendingSize). */
  async readySize(queue?: string): Promise<number> {
    return this.count(' and reserved_at is null and available_at <= ?', [this.now()], queue);
  }

  /** Rows not reserved and not yet due (Laravel 12's delayedSize). */
  async delayedSize(queue?: string): Promise<number> {
    return this.count(' and reserved_at is null and available_at > ?', [this.now()], queue);
  }

  /** Rows reserved, whether or not their reservation ran out (Laravel 12's reservedSize). */
  async reservedSize(queue?: string): Promise<number> {
    return this.count(' and reserved_at is not null', [], queue);
  }

  private async count(where: string, params: unknown[], queue?: string): Promise<number> {
    const { rows } = await this.db.query<{ n: unknown }>(`select count(*) as n from ${this.quotedTable} where queue = ?${where}`, [
      this.queueName(queue),
      ...params,
    ]);
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * The queue's rows per class and state (see Queue.countByClass), read in pages of 500 by id,
   * without a lock: reserved (reserved_at set), delayed (available later than now), else ready.
   */
  async countByClass(queue?: string, takes?: ReadonlySet<string>): Promise<ClassCount[]> {
    const name = this.queueName(queue);
    const tally = new ClassTally(takes);
    const now = this.now();
    for (let after: number | string = -1; ;) {
      const { rows } = await this.db.query<{ id: unknown; payload: unknown; reserved_at: unknown; available_at: unknown }>(
        `select id, payload, reserved_at, available_at from ${this.quotedTable} where queue = ? and id > ? order by id asc limit 500`,
        [name, after],
      );
      for (const row of rows) {
        const state = row.reserved_at !== null ? 'reserved' : Number(row.available_at) > now ? 'delayed' : 'ready';
        tally.add(String(row.payload), state);
      }
      if (rows.length < 500) break;
      after = idParam(String(rows[rows.length - 1]!.id));
    }
    return tally.result();
  }

  /**
   * The job with this row id or payload uuid, if the queue holds it. A uuid is looked for in the
   * payload's text as json_encode writes it, then confirmed on the parsed envelope: an operator's
   * lookup, which reads the table through (Laravel keeps no index of payloads).
   */
  async find(idOrUuid: string, queue?: string): Promise<QueuedJob | undefined> {
    const name = this.queueName(queue);
    if (/^[0-9]{1,19}$/.test(idOrUuid)) {
      const { rows } = await this.db.query(`select * from ${this.quotedTable} where queue = ? and id = ?`, [name, idParam(idOrUuid)]);
      if (rows[0]) return this.queued(toRecord(rows[0]));
    }
    const needle = `%${likeEscaped(`"uuid":${encodeString(idOrUuid, false)}`)}%`;
    const { rows } = await this.db.query(
      `select * from ${this.quotedTable} where queue = ? and payload like ? escape '!' order by id asc`,
      [name, needle],
    );
    const found = rows.map(toRecord).find((record) => uuidOf(record.payload) === idOrUuid);
    return found && this.queued(found);
  }

  private queued(record: JobRecord): QueuedJob {
    const job: QueuedJob = { state: 'ready', queue: record.queue, payload: record.payload, id: record.id, attempts: record.attempts };
    if (record.reservedAt !== null) {
      job.state = 'reserved';
      if (this.retryAfter !== null) job.until = record.reservedAt + this.retryAfter;
    } else if (record.availableAt > this.now()) {
      job.state = 'delayed';
      job.until = record.availableAt;
    }
    return job;
  }

  /** Deletes every row of the queue, reserved ones too, as Laravel's clear; returns how many went. */
  async clear(queue?: string): Promise<number> {
    return (await this.db.query(`delete from ${this.quotedTable} where queue = ?`, [this.queueName(queue)])).affected;
  }

  // ---- the rest of the contract ----

  availableAt(delay: number | Date): number {
    return delay instanceof Date ? Math.floor(delay.getTime() / 1000) : this.now() + Math.floor(delay);
  }

  /** Ends a `waitFor` poll now (the pop in it returns empty), and the waits of deletes for a server that does not answer. */
  interruptWait(): void {
    this.waiting?.abort();
    this.waiting = undefined;
    // Deletes waiting out an outage make one last try: a worker told to stop does not sit it out.
    this.outageWait.abort();
    this.outageWait = new AbortController();
  }

  /** Ends any wait and, when this queue opened its database (DatabaseQueue.open), closes it once pending deletes are done. */
  async close(): Promise<void> {
    this.closed = true;
    this.interruptWait();
    await this.flushing;
    if (this.options.ownsDatabase) await this.db.close();
  }

  private queueName(queue: string | undefined): string {
    return queue || this.defaultQueue;
  }

  /** A transaction, run again when the database chose it as a deadlock's (or a serialization's) victim and rolled it back. */
  private async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction(work);
      } catch (error) {
        if (attempt >= CONCURRENCY_TRIES || !isConcurrencyError(error)) throw error;
      }
    }
  }
}

/**
 * The lock Laravel's DatabaseQueue::getLockForPopping picks for a server: SKIP LOCKED on MySQL
 * 8.0.1+, MariaDB 10.6+ (a version that says "MariaDB", read after any "5.5.5-" and before the
 * next "-"), PostgreSQL 9.5+ and (Laravel 9+) Vitess 19+; plain FOR UPDATE on other servers.
 */
export function lockForPopping(dialect: 'mysql' | 'pgsql', version: string, laravel?: LaravelProfile): PopLock {
  let engine: string = dialect;
  let compared = version;
  if (version.includes('MariaDB')) {
    engine = 'mariadb';
    compared = before(after(version, '5.5.5-'), '-');
  } else if (
    laravel !== undefined &&
    !['5.8', '6', '7', '8'].includes(laravel) &&
    (version.includes('vitess') || version.includes('PlanetScale'))
  ) {
    engine = 'vitess';
    compared = before(version, '-');
  }
  const since: Record<string, string> = { mysql: '8.0.1', mariadb: '10.6.0', pgsql: '9.5', vitess: '19.0' };
  const threshold = since[engine];
  return threshold !== undefined && phpVersionCompare(compared, threshold) >= 0 ? 'for update skip locked' : 'for update';
}

/** Str::after: the text after the first `search`, or all of it. */
const after = (text: string, search: string) => (text.includes(search) ? text.slice(text.indexOf(search) + search.length) : text);
/** Str::before: the text before the first `search`, or all of it. */
const before = (text: string, search: string) => (text.includes(search) ? text.slice(0, text.indexOf(search)) : text);

/**
 * PHP's version_compare (-1, 0 or 1), which Laravel uses on server version strings such as
 * "15.20 (Debian 15.20-0+deb12u1)": `-`, `_`, `+` and other non-alphanumerics separate parts,
 * as does every change between digits and letters; numbers compare as numbers; words by PHP's
 * order dev < alpha = a < beta = b < RC = rc < a number < pl = p (any other word first).
 */
export function phpVersionCompare(a: string, b: string): -1 | 0 | 1 {
  const left = canonicalVersion(a).split('.');
  const right = canonicalVersion(b).split('.');
  const shared = Math.min(left.length, right.length);
  for (let i = 0; i < shared; i++) {
    const order = comparePart(left[i]!, right[i]!);
    if (order !== 0) return order;
  }
  if (left.length > shared) return isDigit(left[shared]![0]) ? 1 : phpVersionCompare(left.slice(shared).join('.'), '#N#');
  if (right.length > shared) return isDigit(right[shared]![0]) ? -1 : phpVersionCompare('#N#', right.slice(shared).join('.'));
  return 0;
}

function comparePart(x: string, y: string): -1 | 0 | 1 {
  if (isDigit(x[0]) && isDigit(y[0])) return Math.sign(leadingNumber(x) - leadingNumber(y)) as -1 | 0 | 1;
  if (!isDigit(x[0]) && !isDigit(y[0])) return compareForms(x, y);
  return isDigit(x[0]) ? compareForms('#N#', y) : compareForms(x, '#N#');
}

const FORMS: [string, number][] = [
  ['dev', 0],
  ['alpha', 1],
  ['a', 1],
  ['beta', 2],
  ['b', 2],
  ['RC', 3],
  ['rc', 3],
  ['#', 4],
  ['pl', 5],
  ['p', 5],
];

function compareForms(x: string, y: string): -1 | 0 | 1 {
  const rank = (form: string) => FORMS.find(([prefix]) => form.startsWith(prefix))?.[1] ?? -1;
  return Math.sign(rank(x) - rank(y)) as -1 | 0 | 1;
}

function canonicalVersion(version: string): string {
  if (version === '') return version;
  let out = version[0]!;
  let last = version[0]!;
  for (const char of version.slice(1)) {
    const separated = out.endsWith('.');
    if (char === '-' || char === '_' || char === '+') {
      if (!separated) out += '.';
    } else if ((isNonDigit(last) && isDigit(char)) || (isDigit(last) && isNonDigit(char))) {
      if (!separated) out += '.';
      out += char;
    } else if (!/[A-Za-z0-9]/.test(char)) {
      if (!separated) out += '.';
    } else {
      out += char;
    }
    last = char;
  }
  return out;
}

const isDigit = (char: string | undefined) => char !== undefined && char >= '0' && char <= '9';
const isNonDigit = (char: string) => !isDigit(char) && char !== '.';
const leadingNumber = (part: string) => Number(/^[0-9]*/.exec(part)![0] || 0);

/** A row as the three drivers give it (PostgreSQL's bigint id as text), in one shape. */
function toRecord(row: Record<string, unknown>): JobRecord {
  return {
    id: String(row.id),
    queue: String(row.queue),
    payload: Buffer.isBuffer(row.payload) ? row.payload.toString('utf8') : String(row.payload),
    attempts: Number(row.attempts),
    reservedAt: row.reserved_at === null || row.reserved_at === undefined ? null : Number(row.reserved_at),
    availableAt: Number(row.available_at),
    createdAt: Number(row.created_at),
  };
}

/** A row id as a statement parameter: a number while it is exactly one, else its text. */
function idParam(idOrRecord: string | JobRecord): number | string {
  const id = typeof idOrRecord === 'string' ? idOrRecord : idOrRecord.id;
  const n = Number(id);
  return Number.isSafeInteger(n) ? n : id;
}

const marks = (items: readonly unknown[]) => items.map(() => '?').join(', ');
const byId = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);

/** Payloads in insert-sized groups: at most BULK_ROWS rows and about BULK_BYTES of payload each. */
function* chunks(payloads: string[]): Generator<string[]> {
  let chunk: string[] = [];
  let bytes = 0;
  for (const payload of payloads) {
    if (chunk.length > 0 && (chunk.length >= BULK_ROWS || bytes + payload.length > BULK_BYTES)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(payload);
    bytes += payload.length;
  }
  if (chunk.length > 0) yield chunk;
}

/** A LIKE pattern's literal text, `!` escaping its wildcards (an escape character every dialect reads alike). */
const likeEscaped = (text: string) => text.replace(/[!%_]/g, (char) => `!${char}`);

/** The envelope's own uuid, or undefined when the payload is not a JSON object with one. */
function uuidOf(payload: string): string | undefined {
  try {
    const uuid = (JSON.parse(payload) as { uuid?: unknown } | null)?.uuid;
    return typeof uuid === 'string' ? uuid : undefined;
  } catch {
    return undefined;
  }
}

/** A deadlock or serialization failure: the database rolled the transaction back, and it may run again. */
function isConcurrencyError(error: unknown): boolean {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  // MySQL/MariaDB: ER_LOCK_DEADLOCK (1213); PostgreSQL: serialization_failure, deadlock_detected.
  return errno === 1213 || code === 'ER_LOCK_DEADLOCK' || code === '40001' || code === '40P01';
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}
