/**
 * What Laravel's worker keeps in its cache, where Laravel's `database` cache store keeps it (the
 * default store of a Laravel 11+ app: `CACHE_STORE=database`): rows of the `cache` table
 * (`key`, `value`, `expiration`), the key being the cache prefix followed directly by the name
 * (DatabaseStore puts no separator between them), the value PHP-serialized, the expiration a
 * UNIX time (`forever` is ten years on). The same names as on Redis (see cache.ts): the restart
 * signal, `job-exceptions:{uuid}` for maxExceptions, and `queue:pause`'s switches.
 */
import { PhpFloat, deref, serialize, unserialize, type PhpValue } from '../php/index.js';
import type { Database, DatabaseConfig, Queryable } from '../database/index.js';
import { TableStore } from './tables.js';
import { ALL_PAUSED_KEY, RESTART_KEY, pausedKey, phpTruthyValue, type WorkerCache } from './cache.js';

/** DatabaseStore::forever: ten years, in seconds. */
const FOREVER = 315_360_000;
/** Laravel keeps a job's exception count a day. */
const EXCEPTION_COUNT_SECONDS = 86_400;

export class DatabaseQueueCache extends TableStore implements WorkerCache {
  constructor(
    db: Database | DatabaseConfig,
    /** Laravel's `cache.stores.database.table`. */
    table = 'cache',
    /** Laravel's `cache.prefix`: `laravel_cache` in 8–10's config, `laravel_cache_` from 11. */
    readonly prefix = 'laravel_cache',
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
  ) {
    super(db, table);
  }

  /** The row's key: DatabaseStore's prefix and the name, nothing between. */
  key(name: string): string {
    return this.prefix + name;
  }

  async lastRestart(): Promise<number | null> {
    const value = await this.get(RESTART_KEY);
    if (value === undefined) return null;
    const time = Number(value instanceof PhpFloat ? value.value : value);
    return Number.isFinite(time) ? time : null;
  }

  /** `queue:restart`: the time, stored forever (an int, serialized as DatabaseStore stores every value). */
  async signalRestart(now = this.now()): Promise<number> {
    await this.put(RESTART_KEY, now, FOREVER);
    return now;
  }

  /**
   * One more exception for a job, as Laravel's worker counts it: a 0 put for a day when there is
   * no count, then DatabaseStore::increment (the row read FOR UPDATE and written in one transaction).
   */
  async countException(uuid: string): Promise<number> {
    const name = `job-exceptions:${uuid}`;
    if (!phpTruthyValue(await this.get(name))) await this.put(name, 0, EXCEPTION_COUNT_SECONDS);
    return this.increment(name);
  }

  async forgetExceptions(uuid: string): Promise<void> {
    await this.forget(`job-exceptions:${uuid}`);
  }

  /** `queue:pause` (12.40+): PHP's true, forever, or for `seconds` (pauseFor). */
  async pause(connection: string, queue: string, seconds?: number): Promise<void> {
    await this.put(pausedKey(connection, queue), true, seconds === undefined ? FOREVER : Math.max(1, Math.ceil(seconds)));
  }

  async resume(connection: string, queue: string): Promise<void> {
    await this.forget(pausedKey(connection, queue));
  }

  async pauseAll(paused: boolean): Promise<void> {
    if (paused) await this.put(ALL_PAUSED_KEY, true, FOREVER);
    else await this.forget(ALL_PAUSED_KEY);
  }

  /** Which of these queues are paused, as Laravel's worker reads the switches: one select for all of them. */
  async pausedQueues(connection: string, queues: readonly string[]): Promise<Set<string>> {
    const names = [ALL_PAUSED_KEY, ...queues.map((queue) => pausedKey(connection, queue))];
    const rows = await this.rows(names.map((name) => this.key(name)));
    const on = (name: string) => {
      const row = rows.get(this.key(name));
      return row !== undefined && phpTruthyValue(this.read(row));
    };
    if (on(ALL_PAUSED_KEY)) return new Set(queues);
    return new Set(queues.filter((queue) => on(pausedKey(connection, queue))));
  }

  /** DatabaseStore::get: the value, or undefined when there is none or it has expired (an expired row is deleted, as Laravel does). */
  async get(name: string): Promise<PhpValue | undefined> {
    const row = (await this.rows([this.key(name)])).get(this.key(name));
    if (row === undefined) return undefined;
    if (this.now() >= Number(row.expiration)) {
      await this.forget(name);
      return undefined;
    }
    return this.read(row);
  }

  /** DatabaseStore::put: insert the row, or update it when the key is there. */
  async put(name: string, value: PhpValue, seconds: number): Promise<void> {
    const [key, valueColumn, expiration] = [this.columns(['key']), this.columns(['value']), this.columns(['expiration'])];
    const row = [this.key(name), this.write(value), this.now() + seconds];
    try {
      await this.db.query(`insert into ${this.tableName} (${key}, ${valueColumn}, ${expiration}) values (?, ?, ?)`, row);
    } catch {
      await this.db.query(`update ${this.tableName} set ${valueColumn} = ?, ${expiration} = ? where ${key} = ?`, [row[1], row[2], row[0]]);
    }
  }

  async forget(name: string): Promise<void> {
    await this.db.query(`delete from ${this.tableName} where ${this.columns(['key'])} = ?`, [this.key(name)]);
  }

  /**
   * DatabaseStore::increment: in one transaction, the row read FOR UPDATE (SQLite's transaction
   * holds the write lock from its start instead), its value plus one written back. A missing row
   * or a value that is not numeric counts as 0 here, where Laravel returns false: the worker
   * puts the row first, so only a row deleted in between meets this.
   */
  private async increment(name: string): Promise<number> {
    const key = this.key(name);
    return this.db.transaction(async (tx) => {
      const lock = tx.dialect === 'sqlite' ? '' : ' for update';
      const { rows } = await tx.query<CacheRow>(`select * from ${this.tableName} where ${this.columns(['key'])} = ?${lock}`, [key]);
      const current = rows[0] === undefined ? 0 : Number(toNumber(this.read(rows[0])));
      const next = (Number.isFinite(current) ? Math.trunc(current) : 0) + 1;
      if (rows[0] === undefined) return next;
      await this.updateValue(tx, key, next);
      return next;
    });
  }

  private async updateValue(tx: Queryable, key: string, value: number): Promise<void> {
    await tx.query(`update ${this.tableName} set ${this.columns(['value'])} = ? where ${this.columns(['key'])} = ?`, [
      this.write(value),
      key,
    ]);
  }

  /** The rows of these keys, by key. */
  private async rows(keys: string[]): Promise<Map<string, CacheRow>> {
    const { rows } = await this.db.query<CacheRow>(
      `select * from ${this.tableName} where ${this.columns(['key'])} in (${keys.map(() => '?').join(', ')})`,
      keys,
    );
    return new Map(rows.map((row) => [String(row.key), row]));
  }

  /**
   * A value as DatabaseStore writes it: PHP-serialized; on PostgreSQL (and SQLite from 11) a
   * serialization holding a NUL byte goes base64-encoded. The worker's values (ints, true) never hold one.
   */
  private write(value: PhpValue): string {
    return Buffer.from(serialize(value)).toString('utf8');
  }

  /** A stored value read back: base64 first where DatabaseStore wrote it so (no ':' nor ';' in it). */
  private read(row: CacheRow): PhpValue | undefined {
    const text = Buffer.isBuffer(row.value) ? row.value.toString('utf8') : String(row.value);
    try {
      return deref(unserialize(this.db.dialect !== 'mysql' && !/[:;]/.test(text) ? Buffer.from(text, 'base64') : text));
    } catch {
      return undefined;
    }
  }
}

interface CacheRow {
  key: unknown;
  value: unknown;
  expiration: unknown;
}

/** `(int) $value` for the values a count can hold. */
function toNumber(value: PhpValue | undefined): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof PhpFloat) return value.value;
  if (typeof value === 'string') return Number.parseInt(value, 10) || 0;
  if (value === true) return 1;
  return 0;
}
