/**
 * What the recorder hands a store at each flush, and what a store does with the record: written
 * by a worker (write, prune), read by the dashboard (minutes, recent, workers). RedisRecord and
 * DatabaseRecord are the two; each knows its own layout both ways (NodeRecord.ts describes them).
 */
import type { Database } from '../database/index.js';
import type { RedisClient } from '../redis/scripts.js';
import { DatabaseRecord } from './DatabaseRecord.js';
import type { CompletedJob, MinuteRow, RecordOptions, RecordOutcome, WorkerHeartbeat } from './NodeRecord.js';
import { RedisRecord } from './RedisRecord.js';

/** The jobs of one class on one queue that ended one way in one minute, since the last flush. */
export interface MinuteCount {
  /** The minute's start, UNIX seconds. */
  minute: number;
  queue: string;
  className: string;
  outcome: RecordOutcome;
  jobs: number;
  /** Their runtime, ms (a fraction; a store rounds it). */
  ms: number;
}

/** One flush's writes. */
export interface RecordBatch {
  minutes: MinuteCount[];
  /** The jobs completed since the last flush, oldest first. */
  completed: CompletedJob[];
  /** The worker as it is now. */
  heartbeat: WorkerHeartbeat;
  /** The run is over: its heartbeat is removed rather than written. */
  ended: boolean;
  /** UNIX seconds. */
  now: number;
  options: Required<RecordOptions>;
}

export interface RecordStore {
  /** One flush, in one round trip (one transaction on a database). */
  write(batch: RecordBatch): Promise<void>;
  /** Removes the heartbeats of workers gone without saying so (see isLive), at `now` (UNIX seconds). */
  prune(now: number): Promise<void>;
  /** The rows of the minutes from `since` to `until` (UNIX seconds), by minute, queue and class. */
  minutes(since: number, until: number): Promise<MinuteRow[]>;
  /** The latest completed jobs, newest first, from `offset`; and how many are kept in all. */
  recent(offset: number, limit: number): Promise<{ total: number; jobs: CompletedJob[] }>;
  /** The heartbeats of the workers running at `now` (UNIX seconds). */
  workers(now: number): Promise<WorkerHeartbeat[]>;
}

/** Where the record lives: beside the queue, in its Redis (the queue's client, the app's prefix on it) or its database. */
export type RecordSource = { redis: RedisClient } | { database: Database };

/** The store of a source. */
export function recordStore(source: RecordSource): RecordStore {
  return 'redis' in source ? new RedisRecord(source.redis) : new DatabaseRecord(source.database);
}
