/**
 * The record read back, for the dashboard: the minutes' counts, the latest completed jobs, the
 * Node workers running. The same answers from Redis (the queue's client, the app's prefix on it)
 * and from a database-only app's database, where a table no worker has made yet reads as empty
 * (a reader never makes one).
 */
import type { CompletedJob, MinuteRow, WorkerHeartbeat } from './NodeRecord.js';
import { recordStore, type RecordSource, type RecordStore } from './store.js';

/** The most minutes one call reads back (31 days): a Redis reader walks them by name, one key each. */
const MOST_MINUTES = 31 * 24 * 60;

export interface NodeRecordView {
  /**
   * One row per minute, queue and class from the minute `sinceUnix` falls in to now, in order of
   * minute, queue and class; minutes with nothing in them have no row. At most the last 31 days.
   */
  minutes(sinceUnix: number): Promise<MinuteRow[]>;
  /** The latest completed jobs, newest first, `limit` of them from `offset`, and how many are kept. */
  recent(offset: number, limit: number): Promise<{ total: number; jobs: CompletedJob[] }>;
  /** The Node workers running now: heartbeats no older than three of their intervals, oldest run first. */
  workers(): Promise<WorkerHeartbeat[]>;
}

/** A reader of the record in `source`; `now` is UNIX seconds (a test's clock). */
export function nodeRecordView(source: RecordSource, now: () => number = () => Date.now() / 1000): NodeRecordView {
  return new StoreView(recordStore(source), now);
}

class StoreView implements NodeRecordView {
  constructor(
    private readonly store: RecordStore,
    private readonly now: () => number,
  ) {}

  async minutes(sinceUnix: number): Promise<MinuteRow[]> {
    const until = this.now();
    return this.store.minutes(Math.max(sinceUnix, until - MOST_MINUTES * 60), until);
  }

  async recent(offset: number, limit: number): Promise<{ total: number; jobs: CompletedJob[] }> {
    if (!Number.isInteger(offset) || offset < 0) throw new RangeError(`recent: offset must be a whole number 0 or more, not ${offset}`);
    if (!Number.isInteger(limit) || limit < 0) throw new RangeError(`recent: limit must be a whole number 0 or more, not ${limit}`);
    return this.store.recent(offset, limit);
  }

  async workers(): Promise<WorkerHeartbeat[]> {
    return this.store.workers(this.now());
  }
}
