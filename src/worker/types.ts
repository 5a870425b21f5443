/**
 * The worker's public types: its events, logger, counters, dependencies and how it stops, and
 * what a recorder (OpenTelemetry's, Horizon's) hears of the jobs it runs. Re-exported from
 * Worker.ts and the package, as they always were.
 */
import type { DecodedPayload, Encrypter } from '../laravel/index.js';
import type { ReservedJob } from '../queue/contract.js';
import type { ShapesFile } from '../shapes/shape.js';
import type { TelemetryOptions } from '../internal/telemetry-options.js';
import type { WorkerCache } from './cache.js';
import type { FailedJobProvider } from './FailedJobProvider.js';
import type { UniqueLockStore } from './locks/index.js';
import type { DatabaseBatchRepository } from './BatchRepository.js';
import type { StartConnection } from './startLine.js';
import type { WorkerOptions } from './WorkerOptions.js';

export interface WorkerEvent {
  event:
    | 'processing'
    | 'processed'
    | 'failed'
    | 'released'
    | 'deleted'
    | 'given-back'
    | 'timed-out'
    | 'blocked'
    | 'stopping'
    | 'error'
    | 'warning'
    | 'reconnected';
  job?: string;
  id?: string;
  uuid?: string;
  queue?: string;
  attempts?: number;
  durationMs?: number;
  error?: string;
  reason?: string;
  /** More than the reason says: why a stop came (the heap for `memory`, what a deadline left). */
  detail?: string;
}

/**
 * Where the worker's lines go instead of standard output: pino's shape (and bunyan's, winston's
 * child loggers' with an adapter), `(fields, message)`. Errors are under `err`, as pino's
 * serializers expect.
 */
export interface WorkerLogger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

/** A failed job, for `onFailed`: what a failed_jobs row holds. */
export interface FailedJobInfo {
  connection: string;
  queue: string;
  id: string;
  uuid: string | undefined;
  /** The payload as it was reserved. */
  payload: string;
  /** The exception as Laravel writes it into failed_jobs. */
  exception: string;
}

/** Counters readable at any time (`worker.stats()`). */
export interface WorkerCounts {
  processed: number;
  failed: number;
  released: number;
  /** Given back to the queue for PHP workers (`share`). */
  givenBack: number;
  /** Ran past their timeout. */
  timedOut: number;
  errors: number;
}

export interface WorkerStats extends WorkerCounts {
  /** Jobs reserved and not yet finished. */
  inFlight: number;
  running: boolean;
  /** Every Redis connection the worker uses is ready (see health()). */
  connected: boolean;
  /** Connection errors its Redis clients reported, every retry counted; each outage is also one of `errors`. */
  connectionErrors: number;
  perQueue: Record<string, WorkerCounts>;
}

export interface WorkerDependencies {
  /**
   * Where failed jobs are recorded (Laravel's failed_jobs table). Required unless the caller says
   * where failures go otherwise: `onFailed`, or `false` for "nowhere but the events" (never by
   * leaving it out: a library worker must not lose failed jobs silently).
   */
  failer?: FailedJobProvider | false;
  /**
   * Called with each failed job, after the failer recorded it, or as the record itself when
   * there is no failer: a throw then keeps the job reserved, as a failer that cannot write does.
   */
  onFailed?: (job: FailedJobInfo, error: unknown) => void | Promise<void>;
  /** Where the worker's lines go (pino-compatible); nothing is printed without one. */
  logger?: WorkerLogger;
  /** Redis trouble (a reserve, a renewal, a delete or release that did not reach it), the Error itself. */
  onError?: (error: Error) => void;
  /**
   * Restart signals, maxExceptions counts and pause switches, shared with Laravel's workers:
   * QueueCache in the Redis store, DatabaseQueueCache in the database store's `cache` table.
   */
  cache?: WorkerCache;
  /**
   * Laravel 12.54+'s rule: a job whose reserve threw (DatabaseReserveError) is failed rather
   * than left to block the queue. Off: the reserve is tried again, as 8.83–12.53 do.
   */
  failReserveErrors?: boolean;
  /**
   * The app's Laravel version, where known (vendor/composer/installed.json beside the .env,
   * `--laravel`, the shapes file): the words of the failures its worker records.
   */
  laravel?: string;
  /** True when `laravel` is only the version given (--laravel), not read from the app: what a job's payload shows outranks it (laravelOfJob.ts). */
  laravelGiven?: boolean;
  /** Decrypts ShouldBeEncrypted commands (Laravel's APP_KEY). */
  encrypter?: Encrypter;
  /**
   * The app's class shapes (`lqb shapes`): a chain's next link keeps its declared tries, backoff
   * and encryption; which classes are ShouldBeUnique (and UntilProcessing), their uniqueId and
   * the app's Laravel version, for their locks' keys.
   */
  shapes?: ShapesFile;
  /**
   * Where unique jobs' locks live (Laravel's default cache store: RedisLockStore on its lock
   * connection, or DatabaseLockStore on `cache_locks`); without it no lock is released.
   */
  locks?: UniqueLockStore;
  /** Why no `locks` were given: the app's cache store keeps them out of reach (said once at start). */
  unreachableLocks?: string;
  /** Laravel's job_batches table: batched jobs record their success and failure there. */
  batches?: DatabaseBatchRepository;
  /** One call per event; the CLI prints them. */
  log?: (event: WorkerEvent) => void;
  /**
   * OpenTelemetry: spans and metrics go to the application's global providers when
   * `@opentelemetry/api` is installed, or to the providers given here; `false` turns them off.
   */
  telemetry?: TelemetryOptions | false;
  /**
   * More listeners for each run's job events, beside OpenTelemetry's (e.g. Horizon's records):
   * each opened at run(), told what becomes of every job, closed at the run's end.
   */
  recorders?: RecorderFactory[];
  /** Where the worker reads, for the line it says at start (connect() and lqb give it). */
  connection?: StartConnection;
  /** UNIX seconds. */
  now?: () => number;
}

/** Why the loop ended, and the exit status Laravel's worker would use. */
export interface StopReason {
  status: number;
  reason: 'once' | 'empty' | 'signal' | 'stopped' | 'restart' | 'max-jobs' | 'max-time' | 'memory' | 'refused';
  /** Jobs still running when stop()'s deadline passed: left reserved, they come back after retry_after. */
  leftReserved?: number;
  /** Said when there is more to say than the reason (what stop()'s deadline left behind). */
  detail?: string;
}

/** How to stop: `timeout` (ms) is the deadline for the jobs in hand; `reason` what the run reports (`stopped`). */
export interface StopOptions {
  timeout?: number;
  reason?: 'stopped' | 'signal';
}

/** The worker was used in a way it cannot be: a second run() at once, queues: [], no failer. */
export class WorkerUsageError extends Error {
  override name = 'WorkerUsageError';
}

/** What each of the worker's events gives its listeners. */
export interface WorkerEventMap {
  processing: [event: WorkerEvent];
  processed: [event: WorkerEvent];
  released: [event: WorkerEvent, error?: Error];
  deleted: [event: WorkerEvent, error?: Error];
  failed: [event: WorkerEvent, error?: Error];
  'given-back': [event: WorkerEvent];
  'timed-out': [event: WorkerEvent, error?: Error];
  /** A handler blocked the event loop past its timeout (said once the loop turns again; see watchdog.ts). */
  blocked: [event: WorkerEvent];
  stopping: [event: WorkerEvent];
  reconnected: [event: WorkerEvent];
  warning: [event: WorkerEvent];
  error: [error: Error, event: WorkerEvent];
}

/**
 * Where an `error` event comes from, said where it is raised (never read back from its text):
 * `queue` and `connection` are the queue's store failing the worker (a reserve, a renewal, a
 * delete or release that did not reach it; a connection gone), what `onError` hears; `failer`
 * a failure that could not be recorded; `hook` a handler's failed() hook; `bookkeeping` the
 * application's state around a job (unique locks, batches); `worker` the worker's own set-up.
 */
export type ErrorSource = 'queue' | 'connection' | 'failer' | 'hook' | 'bookkeeping' | 'worker';

/** A job in hand as the worker tells its recorders of it: the reserved job, its payload once read, and when it was taken up. */
export interface JobRecord {
  readonly job: ReservedJob;
  /** The name its events give it: the job's class once read, else the envelope's displayName. */
  readonly name: string;
  /** The decoded payload, once read; undefined for a job failed or given back unread. */
  readonly payload: DecodedPayload | undefined;
  /** performance.now() when the worker took it up: a recorder's runtime is measured from here. */
  readonly startedAt: number;
  /** The queue has removed it (it ran, or it failed): a record of its completion may be written. */
  readonly deleted: boolean;
  /** Its failure was recorded (failed_jobs, onFailed), whatever event says its end (a timeout's too). */
  readonly failedRecorded: boolean;
}

/**
 * Hears a run's job events, as Laravel's JobProcessing/JobProcessed/JobFailed listeners do:
 * OpenTelemetry's spans and metrics (src/telemetry/jobs.ts), Horizon's records. It is told,
 * never asked; a recorder that throws costs a warning, never a job.
 */
export interface WorkerRecorder {
  /** The job is taken up (its `processing` event). */
  processing?(record: JobRecord, event: WorkerEvent): void;
  /** What became of the job: processed, deleted, released, failed, given back, timed out, or an error that kept it. */
  outcome?(record: JobRecord, event: WorkerEvent, cause?: unknown): void;
  /** The job left the worker's hands: its run is over, whatever became of it. */
  finished?(record: JobRecord): void;
  /** An `error` event, with where it came from. */
  error?(event: WorkerEvent, source: ErrorSource, cause?: unknown): void;
  /** Runs the job's handler, so that the recorder's context (a span) is the active one for what the handler does. */
  around?<T>(record: JobRecord, handler: () => T): T;
  /** The run is over: the run ends once what it returns settles (a recorder's writes still on their way). */
  close?(): void | Promise<void>;
}

/** What a recorder is opened with, at the start of a run. */
export interface RecorderContext {
  /** The queue connection's name, as Laravel's config names it. */
  connectionName: string;
  /** The worker's dependencies, as given (`telemetry` among them). */
  deps: WorkerDependencies;
  /** The jobs in hand now, per queue. */
  jobsInHand: () => Record<string, number>;
  /** The worker's options (its queues, its concurrency), for a recorder that says what the worker is. */
  options?: Readonly<WorkerOptions>;
  /** Says a warning as the worker's own (a recorder that cannot open). */
  warn: (reason: string) => void;
}

/** Opens a recorder for a run; undefined when there is nothing to record (turned off, or its library absent). */
export type RecorderFactory = (context: RecorderContext) => Promise<WorkerRecorder | undefined>;
