/**
 * Job batches (`Bus::batch`), kept in Laravel's `job_batches` table as its
 * DatabaseBatchRepository keeps them (8.x): a batched job run by Node counts in its batch as one
 * run by PHP does, so the batch finishes whichever side ran its jobs.
 *
 * Table: `job_batches (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids,
 * options, cancelled_at, created_at, finished_at)`, times as UNIX integers, `failed_job_ids` a
 * JSON list of uuids, `options` PHP-serialized (base64 on PostgreSQL) holding `allowFailures`
 * and the then/catch/finally callbacks (PHP closures, which only PHP can run).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { databaseConfig, type Database, type DatabaseConfig, type Dialect } from '../database/index.js';
import { TableStore } from './tables.js';
import { PhpArray, PhpObject, deref, serialize, unserialize, type PhpValue } from '../php/index.js';
import { redactUrl } from '../connect/redact.js';

/** Laravel's UpdatedBatchJobCounts. */
export interface BatchCounts {
  pendingJobs: number;
  failedJobs: number;
}

/** What the worker needs of a batch's options: whether failures are allowed, and which callbacks it has. */
export interface BatchOptions {
  allowFailures: boolean;
  then: number;
  catch: number;
  finally: number;
  /** 10.x+ `progress`: run after each job that succeeds. */
  progress: number;
  /** 12.x `failure`: run after each job that fails. */
  failure: number;
  /**
   * One of the then/finally callbacks as signed with the app's key (laravel/serializable-closure's
   * Signed: the serialized closure and its HMAC), where the app signs them: what tells whether a
   * key given to Node is the app's before Node signs a closure PHP must accept.
   */
  signedCallback?: { serializable: string; hash: string };
}

export interface BatchRow extends BatchCounts {
  id: string;
  name: string;
  totalJobs: number;
  failedJobIds: string[];
  options: BatchOptions;
  createdAt: number;
  cancelledAt: number | null;
  finishedAt: number | null;
}

/** Laravel's UpdatedBatchJobCounts::allJobsHaveRanExactlyOnce(). */
export const allJobsHaveRanExactlyOnce = (counts: BatchCounts): boolean => counts.pendingJobs - counts.failedJobs === 0;

export class DatabaseBatchRepository extends TableStore {
  /** `table` is Laravel's `queue.batching.table`. */
  constructor(db: Database | DatabaseConfig, table = 'job_batches') {
    super(db, table);
  }

  /** A repository on a database URL (as `--failed-db` takes one). */
  static fromUrl(url: string, table = 'job_batches'): DatabaseBatchRepository {
    return new DatabaseBatchRepository(databaseConfig(url), table);
  }

  /** The batch's row; undefined when it is not there, or the table is not (a --batch-db that is not the app's). */
  async find(batchId: string): Promise<BatchRow | undefined> {
    let row: Record<string, unknown> | undefined;
    try {
      [row] = (await this.db.query(`select * from ${this.tableName} where ${this.columns(['id'])} = ? limit 1`, [batchId])).rows;
    } catch (error) {
      if (await this.hasTable().catch(() => true)) throw error;
      return undefined;
    }
    return row ? batchOfRow(row, this.db.dialect) : undefined;
  }

  /** Where batches are looked up, for a line a person reads: `table job_batches in mysql://app:***@db/app`. */
  get where(): string {
    return `table ${this.table} in ${this.config ? databaseOf(this.config) : `the ${this.db.dialect} database given`}`;
  }

  /**
   * Laravel's store(): a new batch's row, its counts 0, failed_job_ids '[]', its options
   * serialized as DatabaseBatchRepository::serialize writes them (base64 on PostgreSQL).
   */
  async store(batch: { id: string; name: string; options: PhpArray }, now = unixNow()): Promise<void> {
    const serialized = Buffer.from(serialize(batch.options));
    const options = this.db.dialect === 'pgsql' ? serialized.toString('base64') : serialized.toString('utf8');
    const names = [
      'id',
      'name',
      'total_jobs',
      'pending_jobs',
      'failed_jobs',
      'failed_job_ids',
      'options',
      'created_at',
      'cancelled_at',
      'finished_at',
    ];
    await this.db.query(`insert into ${this.tableName} (${this.columns(names)}) values (${names.map(() => '?').join(', ')})`, [
      batch.id,
      batch.name,
      0,
      0,
      0,
      '[]',
      options,
      now,
      null,
      null,
    ]);
  }

  /** Laravel's incrementTotalJobs: total and pending + amount, finished_at cleared. */
  async incrementTotalJobs(batchId: string, amount: number): Promise<void> {
    const [total, pending, finished, id] = ['total_jobs', 'pending_jobs', 'finished_at', 'id'].map((name) => this.columns([name]));
    await this.db.query(
      `update ${this.tableName} set ${total} = ${total} + ?, ${pending} = ${pending} + ?, ${finished} = null where ${id} = ?`,
      [amount, amount, batchId],
    );
  }

  /** Laravel's delete(): the batch's row gone (a dispatch whose jobs were not pushed). */
  async delete(batchId: string): Promise<void> {
    await this.db.query(`delete from ${this.tableName} where ${this.columns(['id'])} = ?`, [batchId]);
  }

  /** Laravel's decrementPendingJobs: pending − 1, the uuid out of failed_job_ids; undefined when the batch is gone. */
  decrementPendingJobs(batchId: string, jobId: string): Promise<BatchCounts | undefined> {
    return this.updateAtomicValues(batchId, (row) => ({
      pending_jobs: Number(row.pending_jobs) - 1,
      failed_jobs: Number(row.failed_jobs),
      failed_job_ids: phpJson(failedIds(row).filter((id) => id !== jobId)),
    }));
  }

  /**
   * decrementPendingJobs, unless its counts would finish the batch as `finishes` says: then the
   * job's success is left for another job of the batch to record (a stand-in PHP runs, which
   * finishes the batch there): pending stays, the uuid still leaves failed_job_ids. Decided on
   * the row as locked, so no other worker's success can slip between the look and the write.
   */
  async decrementPendingJobsUnlessFinishing(
    batchId: string,
    jobId: string,
    finishes: (counts: BatchCounts) => boolean,
  ): Promise<{ counts: BatchCounts; handedOver: boolean } | undefined> {
    let handedOver = false;
    const counts = await this.updateAtomicValues(batchId, (row) => {
      const decremented = { pendingJobs: Number(row.pending_jobs) - 1, failedJobs: Number(row.failed_jobs) };
      handedOver = finishes(decremented);
      return {
        pending_jobs: handedOver ? Number(row.pending_jobs) : decremented.pendingJobs,
        failed_jobs: decremented.failedJobs,
        failed_job_ids: phpJson(failedIds(row).filter((id) => id !== jobId)),
      };
    });
    return counts && { counts, handedOver };
  }

  /** Laravel's incrementFailedJobs: failed + 1, the uuid added to failed_job_ids (once). */
  incrementFailedJobs(batchId: string, jobId: string): Promise<BatchCounts | undefined> {
    return this.updateAtomicValues(batchId, (row) => {
      const ids = failedIds(row);
      return {
        pending_jobs: Number(row.pending_jobs),
        failed_jobs: Number(row.failed_jobs) + 1,
        failed_job_ids: phpJson(ids.includes(jobId) ? ids : [...ids, jobId]),
      };
    });
  }

  async markAsFinished(batchId: string, now = unixNow()): Promise<void> {
    await this.db.query(`update ${this.tableName} set ${this.columns(['finished_at'])} = ? where ${this.columns(['id'])} = ?`, [
      now,
      batchId,
    ]);
  }

  async cancel(batchId: string, now = unixNow()): Promise<void> {
    await this.db.query(
      `update ${this.tableName} set ${this.columns(['cancelled_at'])} = ?, ${this.columns(['finished_at'])} = ? where ${this.columns(['id'])} = ?`,
      [now, now, batchId],
    );
  }

  /**
   * Laravel's updateAtomicValues: the row read FOR UPDATE and written back in one transaction.
   * SQLite has no row locks (Laravel's grammar writes none): its writers take turns on the
   * file, and one that finds it busy tries again.
   */
  private async updateAtomicValues(
    batchId: string,
    update: (row: Record<string, unknown>) => Record<string, unknown>,
  ): Promise<BatchCounts | undefined> {
    const sqlite = this.db.dialect === 'sqlite';
    const where = `where ${this.columns(['id'])} = ?`;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.db.transaction(async (tx) => {
          const [row] = (await tx.query(`select * from ${this.tableName} ${where} limit 1${sqlite ? '' : ' for update'}`, [batchId])).rows;
          if (!row) return undefined;
          const values = update(row);
          const names = Object.keys(values);
          await tx.query(`update ${this.tableName} set ${names.map((name) => `${this.columns([name])} = ?`).join(', ')} ${where}`, [
            ...names.map((name) => values[name]),
            batchId,
          ]);
          return { pendingJobs: Number(values.pending_jobs), failedJobs: Number(values.failed_jobs) };
        });
      } catch (error) {
        if (!sqlite || attempt >= 100 || !/SQLITE_BUSY|database is locked/i.test(String((error as Error).message ?? error))) throw error;
        await sleep(5 + Math.random() * 20);
      }
    }
  }
}

/**
 * A job_batches row as the repository reads it (Laravel's DatabaseBatchRepository::toBatch): on
 * `dialect`, as the options column is base64 on PostgreSQL only. Exported for the dashboard,
 * which pages through rows the repository never looks up one by one.
 */
export function batchOfRow(row: Record<string, unknown>, dialect: Dialect): BatchRow {
  const nullable = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return {
    id: String(row.id),
    name: String(row.name),
    totalJobs: Number(row.total_jobs),
    pendingJobs: Number(row.pending_jobs),
    failedJobs: Number(row.failed_jobs),
    failedJobIds: failedIds(row),
    options: optionsOf(row.options, dialect),
    createdAt: Number(row.created_at),
    cancelledAt: nullable(row.cancelled_at),
    finishedAt: nullable(row.finished_at),
  };
}

/** The options column as DatabaseBatchRepository::unserialize reads it (base64 on PostgreSQL). */
function optionsOf(column: unknown, dialect: Dialect): BatchOptions {
  const text = column instanceof Uint8Array ? Buffer.from(column) : String(column ?? '');
  const postgres = dialect === 'pgsql';
  const base64 = postgres && typeof text === 'string' && !text.includes(':') && !text.includes(';');
  const options = deref(unserialize(base64 ? Buffer.from(text, 'base64') : text));
  const count = (name: string) => {
    if (!(options instanceof PhpArray)) return 0;
    const value = deref(options.get(name) ?? null);
    return value instanceof PhpArray ? value.size : 0;
  };
  return {
    allowFailures: options instanceof PhpArray && deref(options.get('allowFailures') ?? null) === true,
    then: count('then'),
    catch: count('catch'),
    finally: count('finally'),
    progress: count('progress'),
    failure: count('failure'),
    ...signedCallbackOf(options),
  };
}

const SIGNED_CLOSURE = 'Laravel\\SerializableClosure\\Serializers\\Signed';

/** The first then or finally callback in Signed form, as BatchOptions.signedCallback holds it; {} where there is none. */
function signedCallbackOf(options: PhpValue): Pick<BatchOptions, 'signedCallback'> {
  if (!(options instanceof PhpArray)) return {};
  for (const name of ['then', 'finally']) {
    const callbacks = deref(options.get(name) ?? null);
    if (!(callbacks instanceof PhpArray)) continue;
    for (const callback of callbacks.values) {
      const wrapper = deref(callback);
      const signed = wrapper instanceof PhpObject ? deref(wrapper.get('serializable') ?? null) : null;
      if (!(signed instanceof PhpObject) || signed.className !== SIGNED_CLOSURE) continue;
      const [serializable, hash] = [deref(signed.get('serializable') ?? null), deref(signed.get('hash') ?? null)];
      if (typeof serializable === 'string' && typeof hash === 'string') return { signedCallback: { serializable, hash } };
    }
  }
  return {};
}

/** A database as a URL with no password in it, from the config it was opened with. */
export function databaseOf(config: DatabaseConfig): string {
  if (config.dialect === 'sqlite') return config.filename === ':memory:' ? 'sqlite::memory:' : `sqlite://${config.filename}`;
  return redactUrl(config.url);
}

function failedIds(row: Record<string, unknown>): string[] {
  const parsed = JSON.parse(String(row.failed_job_ids ?? '[]')) as unknown;
  return Array.isArray(parsed) ? parsed.map(String) : Object.values(parsed as Record<string, unknown>).map(String);
}

/** json_encode of a list of uuids, as PHP writes it (slashes escaped; uuids have none). */
function phpJson(ids: string[]): string {
  return JSON.stringify(ids).replace(/\//g, '\\/');
}

function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}
