/**
 * Laravel's `job_batches` table as the dashboard's Batches view reads it: a page at a time, newest
 * first, each batch with what Laravel's Batch says of itself (processedJobs(), progress()). Cancel
 * is Batch::cancel() and retry is queue:retry-batch. One batch is looked up and cancelled by the
 * worker's own DatabaseBatchRepository, on the same database, so a row reads the same wherever it
 * is read. Like FailedJobsView it never creates the table (a dashboard only looks): no table
 * reads as no batches.
 */
import type { Database, DatabaseConfig } from '../database/index.js';
import { batchOfRow, DatabaseBatchRepository, type BatchRow } from '../worker/BatchRepository.js';
import { TableStore } from '../worker/tables.js';

/** A batch as the view shows it: Laravel's Batch::toArray() but the options, times in UNIX seconds. */
export interface BatchSummary {
  id: string;
  name: string;
  totalJobs: number;
  pendingJobs: number;
  processedJobs: number;
  failedJobs: number;
  failedJobIds: string[];
  /** 0 to 100. */
  progress: number;
  cancelledAt: number | null;
  createdAt: number;
  finishedAt: number | null;
  allowFailures: boolean;
}

/** What retryFailed did with each of the batch's failed_job_ids. */
export interface BatchRetry {
  retried: string[];
  /** Ids whose failed_jobs record was not there (forgotten, or already retried). */
  missing: string[];
}

export class BatchesView extends TableStore {
  readonly #repository: DatabaseBatchRepository;
  /** `table` is Laravel's `queue.batching.table`. */
  constructor(db: Database | DatabaseConfig, table = 'job_batches') {
    super(db, table);
    // On the database this view holds: one pool, closed once with the view.
    this.#repository = new DatabaseBatchRepository(this.db, table);
  }

  /** Newest first (created_at, then id: Laravel's ids are ordered uuids), `limit` from `offset`. */
  async page(offset: number, limit: number): Promise<{ total: number; batches: BatchSummary[] }> {
    if (!(await this.tableThere())) return { total: 0, batches: [] };
    const [createdAt, id] = [this.columns(['created_at']), this.columns(['id'])];
    const [{ rows: counted }, { rows }] = await Promise.all([
      this.db.query(`select count(*) as n from ${this.tableName}`),
      this.db.query(
        `select * from ${this.tableName} order by ${createdAt} desc, ${id} desc limit ${Math.floor(limit)} offset ${Math.floor(offset)}`,
      ),
    ]);
    return { total: Number(counted[0]?.n ?? 0), batches: rows.map((row) => summaryOf(batchOfRow(row, this.db.dialect))) };
  }

  /** One batch; undefined when it is not there, or the table is not. */
  async find(id: string): Promise<BatchSummary | undefined> {
    const batch = await this.#repository.find(id);
    return batch && summaryOf(batch);
  }

  /**
   * Laravel's Batch::cancel(): cancelled_at and finished_at now, so a job of the batch that asks
   * `$this->batch()->cancelled()` skips its work. A batch already cancelled is left as it is:
   * Laravel would move both times to now, and the first cancel is the one its jobs went by. The
   * batch after; undefined when there is none.
   */
  async cancel(id: string): Promise<BatchSummary | undefined> {
    const batch = await this.#repository.find(id);
    if (!batch || batch.cancelledAt !== null) return batch && summaryOf(batch);
    await this.#repository.cancel(id);
    return this.find(id);
  }

  /**
   * Laravel's queue:retry-batch: queue:retry of each of the batch's failed_job_ids in turn, here
   * by `retryOne` (the caller's retry of one failed job; false when its record is not there, which
   * queue:retry reports and goes past). Undefined when there is no such batch, which the command
   * refuses (8.x and 12.x alike). One with no failed jobs, which it refuses too, retries nothing:
   * both lists come back empty, for the caller to say so.
   */
  async retryFailed(id: string, retryOne: (uuid: string) => Promise<boolean>): Promise<BatchRetry | undefined> {
    const batch = await this.#repository.find(id);
    if (!batch) return undefined;
    const outcome: BatchRetry = { retried: [], missing: [] };
    // One after another, as the command calls queue:retry: the lists keep failed_job_ids' order.
    for (const uuid of batch.failedJobIds) {
      const retried = await retryOne(uuid);
      (retried ? outcome.retried : outcome.missing).push(uuid);
    }
    return outcome;
  }
}

function summaryOf(batch: BatchRow): BatchSummary {
  return {
    id: batch.id,
    name: batch.name,
    totalJobs: batch.totalJobs,
    pendingJobs: batch.pendingJobs,
    processedJobs: processedJobs(batch),
    failedJobs: batch.failedJobs,
    failedJobIds: batch.failedJobIds,
    progress: progress(batch),
    cancelledAt: batch.cancelledAt,
    createdAt: batch.createdAt,
    finishedAt: batch.finishedAt,
    allowFailures: batch.options.allowFailures,
  };
}

type Counts = Pick<BatchRow, 'totalJobs' | 'pendingJobs'>;

/** Laravel's Batch::processedJobs(): a failed job is still pending, so it is not counted. */
export const processedJobs = (batch: Counts): number => batch.totalJobs - batch.pendingJobs;

/** Laravel's Batch::progress(): the share processed, in whole percent (0 for an empty batch). */
export const progress = (batch: Counts): number => (batch.totalJobs > 0 ? phpRound((processedJobs(batch) / batch.totalJobs) * 100) : 0);

/**
 * PHP's round($value) (8.x): pre-rounded to 15 significant digits, then half away from zero. So
 * 29 of 200, 14.499999999999998 as a double, is 15 as Laravel says, where Math.round says 14
 * (phpRound2 in src/horizon/clock.ts is the same rule at two decimals).
 */
function phpRound(value: number): number {
  const pre = Number(value.toPrecision(15));
  return pre < 0 ? -Math.round(-pre) : Math.round(pre);
}
