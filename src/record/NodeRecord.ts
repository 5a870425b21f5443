/**
 * What a Node worker keeps of the jobs it ran, and where: Laravel's Redis queue forgets a job once
 * it is done, and Horizon keeps its metrics only where Horizon runs, so a Node worker keeps a
 * small, bounded record of its own for the dashboard (recorder.ts writes it, view.ts reads it).
 * It lives beside the queue: in the queue's Redis under the app's prefix (the queue's client
 * carries it) for a Redis connection, in the jobs table's database for a database connection.
 *
 * Redis, every key under `lqb:` so that one pattern finds them all and none meets Laravel's,
 * Horizon's or the cache's names:
 *
 * - `lqb:minute:<M>`, a hash per minute, M the UNIX second the minute starts at (readable as a
 *   time in redis-cli). A field per (queue, job class, outcome, measure), its name the JSON
 *   array `[queue, class, "completed"|"failed", "jobs"|"ms"]` (any queue or class name is
 *   one field, split back unambiguously): HINCRBY of the jobs counted and of their runtime in
 *   whole ms. EXPIREAT the minute's end plus `keepSeconds` (24 h): a minute is a key of its own
 *   so that Redis drops it whole when its time is up, and a reader walks the minutes it wants by
 *   name, with no index to keep in step and no SCAN of the app's keyspace.
 * - `lqb:completed`, a list of the latest completed jobs, newest first, each a JSON object
 *   (CompletedJob): LPUSH then LTRIM to `recent` (1,000), so it is bounded whatever the rate;
 *   EXPIRE `keepSeconds`, so a Redis no Node worker writes to any more forgets it too.
 * - `lqb:workers`, a hash of the Node workers running: field the worker's id, value its
 *   heartbeat as a JSON object (WorkerHeartbeat), written at every flush, HDEL'd at the run's
 *   end. A worker that died without its end is left behind: readers ignore a heartbeat older
 *   than three of its intervals, and the next worker to start deletes such fields. EXPIRE
 *   `keepSeconds` on the whole hash, refreshed at each flush.
 *
 * A worker writes all of it in one MULTI every `flushEvery` seconds (5) and at its run's end,
 * never per job. On a Redis Cluster the keys hash to different slots, so each key's commands go
 * in a MULTI of their own, all sent at once.
 *
 * A database (tables made by the first worker to write, `create table if not exists`; a reader
 * never makes them), one transaction per flush:
 *
 * - `lqb_minutes (minute, queue, class, outcome, jobs, runtime_ms)`, keyed by the first four, the
 *   counts added on conflict; rows older than `keepSeconds` deleted once a minute.
 * - `lqb_completed (id, uuid, name, class, queue, connection, runtime_ms, finished_at)`, the
 *   newest rows by id kept, the older than the last `recent` deleted at each flush.
 * - `lqb_workers (id, last_poll, every, heartbeat)`, one row per worker running, `heartbeat`
 *   the JSON object Redis keeps (so a field added later needs no new column), beside the two a
 *   statement deletes gone workers by.
 */

/** The key (or table) names: under `lqb:` on Redis, `lqb_` in a database. */
export const RECORD_KEYS = {
  /** The minute hash of the minute starting at `minute` (UNIX seconds). */
  minute: (minute: number) => `lqb:minute:${minute}`,
  completed: 'lqb:completed',
  workers: 'lqb:workers',
} as const;

export const RECORD_TABLES = {
  minutes: 'lqb_minutes',
  completed: 'lqb_completed',
  workers: 'lqb_workers',
} as const;

/** The pattern every key of the record matches (a test's "nothing else was left" filters these). */
export const RECORD_KEY_PATTERN = /lqb:(minute:\d+|completed|workers)$/;

/** How a job ended, as the record counts it: the queue removed it after it ran, or its failure was recorded. */
export type RecordOutcome = 'completed' | 'failed';

/** What one field of a minute hash counts: the jobs, or their runtime in ms. */
export type RecordMeasure = 'jobs' | 'ms';

/** A minute hash's field: `[queue, class, outcome, measure]` as JSON. */
export function minuteField(queue: string, className: string, outcome: RecordOutcome, measure: RecordMeasure): string {
  return JSON.stringify([queue, className, outcome, measure]);
}

/** A minute hash's field read back; undefined for one that is not the record's. */
export function readMinuteField(
  field: string,
): { queue: string; className: string; outcome: RecordOutcome; measure: RecordMeasure } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(field);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) return undefined;
  const [queue, className, outcome, measure] = parsed as unknown[];
  if (typeof queue !== 'string' || typeof className !== 'string') return undefined;
  if (outcome !== 'completed' && outcome !== 'failed') return undefined;
  if (measure !== 'jobs' && measure !== 'ms') return undefined;
  return { queue, className, outcome, measure };
}

/** One minute of one class on one queue: the jobs that completed and failed in it, and their runtime. */
export interface MinuteRow {
  /** The minute's start, UNIX seconds. */
  minute: number;
  queue: string;
  className: string;
  completed: number;
  failed: number;
  /** Of the completed and failed jobs together, whole ms. */
  runtimeMs: number;
}

/** Rows in order of minute, then queue, then class (by code unit, as every store sorts alike). */
export function byQueueAndClass(a: MinuteRow, b: MinuteRow): number {
  return a.minute - b.minute || compare(a.queue, b.queue) || compare(a.className, b.className);
}

export const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A job that completed on a Node worker, as the latest ones are kept. */
export interface CompletedJob {
  uuid: string | null;
  /** The name its events gave it (a display name, else its class). */
  name: string;
  /** The job's command class (`data.commandName`), else its name. */
  className: string;
  queue: string;
  /** The queue connection's name, as failed_jobs would record it. */
  connection: string;
  runtimeMs: number;
  /** UNIX seconds, to the ms. */
  finishedAt: number;
}

/** A Node worker running, as it last said. */
export interface WorkerHeartbeat {
  /** `host:pid:random`, one per run. */
  id: string;
  host: string;
  pid: number;
  connection: string;
  queues: string[];
  concurrency: number;
  /** Jobs in its hands when it last said. */
  inHand: number;
  /** UNIX seconds its run started. */
  since: number;
  /** UNIX seconds of its last heartbeat. */
  lastPoll: number;
  /** Seconds between its heartbeats: one older than three of them is taken for gone. */
  every: number;
  /**
   * The job classes its handlers are for (a listener's class for `Class@method`), when it said
   * them: the classes a Node worker runs (the others, sharing the queue, it leaves to PHP).
   */
  classes?: string[];
}

/** How many of its intervals a heartbeat may be late before the worker is taken for gone. */
export const HEARTBEATS_MISSED = 3;

/** Whether a heartbeat is recent enough, at `now` (UNIX seconds), to show its worker as running. */
export function isLive(heartbeat: WorkerHeartbeat, now: number): boolean {
  return heartbeat.lastPoll >= now - HEARTBEATS_MISSED * heartbeat.every;
}

/** A heartbeat read back from its JSON; undefined for what is not one. */
export function readHeartbeat(text: string): WorkerHeartbeat | undefined {
  const beat = objectOf(text) as Partial<WorkerHeartbeat> | undefined;
  if (typeof beat?.id !== 'string' || typeof beat.lastPoll !== 'number' || typeof beat.every !== 'number') return undefined;
  return beat as WorkerHeartbeat;
}

/** A completed job read back from its JSON; undefined for what is not one. */
export function readCompletedJob(text: string): CompletedJob | undefined {
  const job = objectOf(text) as Partial<CompletedJob> | undefined;
  if (typeof job?.queue !== 'string' || typeof job.className !== 'string' || typeof job.finishedAt !== 'number') return undefined;
  return job as CompletedJob;
}

/** A JSON object's value; undefined for text that is not one. */
function objectOf(text: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** What a worker keeps, and how often it writes. */
export interface RecordOptions {
  /** Seconds the per-minute counts (and the latest jobs, once no worker writes) are kept: 86,400 (24 h). */
  keepSeconds?: number;
  /** How many of the latest completed jobs are kept: 1,000 (0 keeps none). */
  recent?: number;
  /** Seconds between writes (and heartbeats): 5. */
  flushEvery?: number;
}

export const RECORD_DEFAULTS: Required<RecordOptions> = { keepSeconds: 86_400, recent: 1_000, flushEvery: 5 };

/** What is wrong with a worker's `record` option (false, or RecordOptions), naming the field; undefined when nothing is. */
export function recordOptionsProblem(record: unknown): string | undefined {
  if (record === undefined || record === false) return undefined;
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    return `record must be false or { keepSeconds, recent, flushEvery }, not ${JSON.stringify(record)}`;
  const known = Object.keys(RECORD_DEFAULTS);
  for (const name of Object.keys(record))
    if (!known.includes(name)) return `unknown record option ${JSON.stringify(name)}; the options are ${known.join(', ')}`;
  const { keepSeconds, recent, flushEvery } = record as RecordOptions;
  if (keepSeconds !== undefined && !(Number.isInteger(keepSeconds) && keepSeconds >= 60))
    return `record.keepSeconds must be whole seconds, 60 or more, not ${JSON.stringify(keepSeconds)}`;
  if (recent !== undefined && !(Number.isInteger(recent) && recent >= 0))
    return `record.recent must be a whole number, 0 or more, not ${JSON.stringify(recent)}`;
  if (flushEvery !== undefined && !(typeof flushEvery === 'number' && Number.isFinite(flushEvery) && flushEvery > 0))
    return `record.flushEvery must be seconds, more than 0, not ${JSON.stringify(flushEvery)}`;
  const keep = keepSeconds ?? RECORD_DEFAULTS.keepSeconds;
  const every = flushEvery ?? RECORD_DEFAULTS.flushEvery;
  if (keep < HEARTBEATS_MISSED * every)
    return `record.keepSeconds (${keep}) must be at least ${HEARTBEATS_MISSED} times record.flushEvery (${every}): a heartbeat would expire before it is late`;
  return undefined;
}

/** The options with their defaults; throws a TypeError naming the field when one is wrong. */
export function resolveRecordOptions(record: RecordOptions = {}): Required<RecordOptions> {
  const problem = recordOptionsProblem(record);
  if (problem) throw new TypeError(problem);
  return { ...RECORD_DEFAULTS, ...record };
}
