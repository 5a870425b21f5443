/**
 * The worker: Laravel's `queue:work` loop and rules, running Node handlers.
 *
 * Each loop tries the queues in order and runs what it reserves. A job's attempts, tries,
 * retryUntil, maxExceptions, backoff and timeout are judged as Laravel 8's Worker judges
 * them, so a job behaves the same whichever side runs it. A job that cannot be decoded, or
 * has no handler, is never dropped: given back for the PHP workers the queue is shared with (the
 * default), or failed with the reason when the queue is Node's alone (`share: false`).
 */
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { toJS, type PhpValue } from '../php/index.js';
import { commandOf, plainJson, type DecodedPayload, type Encrypter, type JobView } from '../laravel/index.js';
import { isBookkeepingError, type RedisJob, type RedisQueue } from '../redis/index.js';
import { PauseWatch, type QueueCache } from './cache.js';
import { MiddlewareNotices } from './middleware.js';
import { WITHOUT_SHAPES_LINE, unanswerableLine, unanswerableMethods } from './methods.js';
import {
  MaxAttemptsExceededError,
  NoHandlerError,
  TimeoutExceededError,
  UndecodableJobError,
  describeError,
  exceptionText,
  manualFailure,
} from './errors.js';
import type { FailedJobProvider } from './FailedJobProvider.js';
import { argsOf, handlerNames, jobName, releaseDelay, type Handler, type HandlerJob, type HandlerMap } from './handlers.js';
import { defaultWorkerOptions, workerOptionsProblem, type WorkerOptions } from './WorkerOptions.js';
import { liveHeapMb, unwatchLiveHeap, watchLiveHeap } from './memory.js';
import { ConnectionWatch, type WorkerHealth } from './health.js';
import { handlerKeysProblem, nearestHandlerKey } from './handlerKeys.js';
import { startLine, type StartConnection } from './startLine.js';
import { alreadyExceedsMaxAttempts, attemptsUsedUp, backoffFor, timeoutOf } from './rules.js';
import { CallQueuedHandler } from './CallQueuedHandler.js';
import type { ShapesFile } from '../shapes/shape.js';
import type { UniqueLockStore } from './locks/index.js';
import type { DatabaseBatchRepository } from './BatchRepository.js';
import { WorkerTelemetry, type JobOutcome, type JobSpan } from '../telemetry/jobs.js';
import { Watchdog, renewalFor, type BlockedJob } from './watchdog.js';
import type { TelemetryOptions } from '../telemetry/options.js';

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
  /** Restart signals and maxExceptions counts, shared with Laravel's workers. */
  cache?: QueueCache;
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

/** What a handler's job can do, as the worker does it. */
interface JobActions {
  release(seconds: number): Promise<void>;
  fail(error: unknown): Promise<void>;
  delete(): Promise<void>;
  cache: QueueCache | undefined;
  locks?: UniqueLockStore;
}

/**
 * What a handler is given. A class, not an object literal with getters, which V8 would give
 * a shape of its own per job. The plain JavaScript copies are made when a handler first reads
 * them: many never do.
 */
class JobContext implements HandlerJob {
  readonly attempts: number;
  readonly uuid: string | undefined;
  readonly id: string;
  readonly queue: string;
  readonly #command: PhpValue | undefined;
  readonly #state: JobState;
  readonly #actions: JobActions;
  #plain: Record<string, unknown> | undefined;
  #args: unknown[] | undefined;
  #payload: Record<string, unknown> | undefined;

  constructor(
    readonly name: string,
    state: JobState,
    readonly decoded: DecodedPayload,
    readonly view: JobView,
    command: PhpValue | undefined,
    actions: JobActions,
  ) {
    const job = state.job;
    this.attempts = job.attempts();
    this.uuid = job.uuid;
    this.id = job.id;
    this.queue = job.queue;
    this.#command = command;
    this.#state = state;
    this.#actions = actions;
  }

  get command(): Record<string, unknown> {
    const view = this.view;
    return (this.#plain ??=
      view.kind === 'string' ? toRecord(view.data) : this.#command === undefined ? {} : toRecord(toJS(this.#command)));
  }

  get args(): unknown[] {
    return (this.#args ??= argsOf(this.view));
  }

  get payload(): Record<string, unknown> {
    return (this.#payload ??= plainJson(this.decoded.envelope) as Record<string, unknown>);
  }

  get signal(): AbortSignal {
    return this.#state.signal();
  }

  get cache(): QueueCache | undefined {
    return this.#actions.cache;
  }

  get locks(): UniqueLockStore | undefined {
    return this.#actions.locks;
  }

  // Own functions rather than methods, so `const { release } = job` still works.
  readonly release = async (seconds: number = 0): Promise<void> => this.#actions.release(releaseDelay(seconds));
  readonly fail = (error?: unknown): Promise<void> => this.#actions.fail(error);
  readonly delete = (): Promise<void> => this.#actions.delete();
}

/** How one reserved job is being handled. */
class JobState {
  released = false;
  deleted = false;
  failed = false;
  /** A failure was recorded: the job did not fail quietly for having been deleted first. */
  failedRecorded = false;
  /** Its failure could not be recorded: it stays reserved, to come back after retry_after. */
  kept = false;
  /**
   * The handler ran past its timeout: the job is no longer this handler's (it may be failed, or
   * taken by another worker after retry_after), so what the handler does to it later is ignored.
   */
  abandoned = false;
  /** The payload and command, once read: what CallQueuedHandler's failed() is given. */
  read: { payload: DecodedPayload; command: PhpValue | undefined } | undefined;
  /** Its OpenTelemetry span, when telemetry is on. */
  span: JobSpan | undefined;
  /** Made only when the handler asks for its signal; most never do. */
  #controller: AbortController | undefined;
  #expiredWith: Error | undefined;
  constructor(readonly job: RedisJob) {}
  get finished(): boolean {
    return this.released || this.deleted || this.failed || this.abandoned;
  }
  signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#expiredWith) this.#controller.abort(this.#expiredWith);
    }
    return this.#controller.signal;
  }
  expire(error: Error): void {
    this.#expiredWith = error;
    this.#controller?.abort(error);
  }
  /**
   * What the log says became of the job: failed only when a failure was recorded, released
   * only when it was put back; else `otherwise` (a handler that deleted its job and then
   * threw has neither failed nor released it).
   */
  outcome(otherwise: 'processed' | 'deleted'): WorkerEvent['event'] {
    return this.failedRecorded ? 'failed' : this.kept ? 'error' : this.released ? 'released' : otherwise;
  }
}

/** How long a stopping worker still waits for Redis to answer what it was asked. */
const STOP_GRACE_MS = 1000;

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

// The listeners' types, beside EventEmitter's untyped ones.
export interface Worker {
  on<Name extends keyof WorkerEventMap>(name: Name, listener: (...args: WorkerEventMap[Name]) => void): this;
  once<Name extends keyof WorkerEventMap>(name: Name, listener: (...args: WorkerEventMap[Name]) => void): this;
  off<Name extends keyof WorkerEventMap>(name: Name, listener: (...args: WorkerEventMap[Name]) => void): this;
}

/**
 * Events: `processing`, `processed`, `released`, `deleted`, `failed`, `given-back`, `timed-out`,
 * `blocked`, `stopping`, `warning`, each with the WorkerEvent and the Error itself when there is one;
 * `error` as Node's convention has it, `(error, event)`, emitted only while someone listens
 * (an unheard `error` would otherwise end the process), else to the logger.
 */
export class Worker extends EventEmitter {
  readonly options: WorkerOptions;
  private readonly now: () => number;
  private readonly logEvent: (event: WorkerEvent) => void;
  private shouldQuit = false;
  /** What stop() asked the run to report. */
  private stopAs: 'stopped' | 'signal' = 'stopped';
  /** The run in progress, if one is: a second one at once is refused. */
  private running: Promise<StopReason> | undefined;
  /** Ends the wait for the jobs in hand when stop()'s deadline passes. */
  private deadline: { passed: boolean; promise: Promise<void>; timer: NodeJS.Timeout } | undefined;
  /** The state of each job in hand, so a deadline can leave them to come back. */
  private readonly states = new Map<RedisJob, JobState>();
  private readonly counts: WorkerCounts = emptyCounts();
  private readonly perQueue = new Map<string, WorkerCounts>();
  private paused = false;
  private jobsProcessed = 0;
  /** When the restart signal was last read from the cache. */
  private restartCheckedAt = 0;
  /** Jobs reserved and not yet finished. */
  private inFlight = 0;
  /**
   * One promise for "a job in hand finished", shared by whoever waits, and renewed once it
   * settles. Racing every job's own promise instead would hang a reaction on each of them per
   * wait, which a busy worker pays for in garbage.
   */
  private jobFinished: { promise: Promise<void>; resolve: () => void } | undefined;
  /** A reserve sent before the jobs of the last one ran, and how many jobs it asked for. */
  private ahead: { count: number; jobs: Promise<RedisJob[]> } | undefined;
  /** Wakes the loop early (a signal, a finished job) instead of sleeping out `--sleep`. */
  private wake: (() => void) | undefined;
  /**
   * The waits on Redis in progress, each ended by stop(). One entry per wait, removed when it
   * settles: a single promise that every wait hangs a reaction on would keep one per loop, for
   * the life of the worker.
   */
  private readonly stopWaiters = new Set<() => void>();
  /** Jobs whose handlers are running: their reservations are renewed until they finish. */
  private readonly inHand = new Set<RedisJob>();
  /** Classes whose PHP job middleware the log has named already. */
  private readonly middlewareNotices = new MiddlewareNotices();
  /** queue:pause's switches (12.40+), read at most once a second. */
  private pauses: PauseWatch | undefined;
  /** CallQueuedHandler's duties around the handler: the chain, unique locks, batches. */
  private readonly handler: CallQueuedHandler;
  /** With `share`: classes whose lock Node could not release, given back for PHP (see methods.ts). */
  private refused = new Map<string, string>();
  /** Spans and metrics, while running with OpenTelemetry present. */
  private telemetry: WorkerTelemetry | undefined;
  /** Whether Redis answers, for health() and the outage lines. */
  private readonly connectionWatch: ConnectionWatch;
  /** The thread that holds the timeout when a handler blocks the event loop, while running. */
  private watchdog: Watchdog | undefined;

  constructor(
    readonly queue: RedisQueue,
    readonly handlers: HandlerMap,
    options: Partial<WorkerOptions> = {},
    private readonly deps: WorkerDependencies = {},
  ) {
    super();
    const problem = workerOptionsProblem(options);
    if (problem) throw new WorkerUsageError(problem);
    // An option given as undefined keeps its default, as an option not given does.
    this.options = { ...defaultWorkerOptions, ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) };
    if (this.options.queues.length === 0)
      throw new WorkerUsageError('queues: [] names no queue to take jobs from: give at least one queue name');
    const keyProblem = handlerKeysProblem(Object.keys(handlers));
    if (keyProblem) throw new WorkerUsageError(keyProblem);
    if (deps.failer === undefined && deps.onFailed === undefined) {
      throw new WorkerUsageError(
        'a worker needs to know where failed jobs go: give a failer (a FailedJobProvider, e.g. DatabaseUuidFailedJobProvider), an onFailed callback, or failer: false to keep them only in the events',
      );
    }
    this.now = deps.now ?? (() => Math.floor(Date.now() / 1000));
    this.logEvent = deps.log ?? (() => undefined);
    this.handler = new CallQueuedHandler(
      queue,
      this.options,
      deps,
      (event) => this.log(event),
      (className) => ownHandler(this.handlers, className),
    );
    const clients = deps.cache && deps.cache.client !== queue.client ? [queue.client, deps.cache.client] : [queue.client];
    this.connectionWatch = new ConnectionWatch(clients, {
      down: (error) => this.log({ event: 'error', error: error.message }, error),
      up: (downMs) => this.log({ event: 'reconnected', reason: `Redis answers again, after ${(downMs / 1000).toFixed(1)} s` }),
    });
  }

  /** What the worker says at start: where it reads, what, and what becomes of a job with no Node handler. */
  startLine(): string {
    return startLine({
      queues: this.options.queues,
      handlers: Object.keys(this.handlers),
      share: this.options.share,
      ...(this.deps.connection ? { connection: this.deps.connection } : {}),
    });
  }

  /**
   * For a service's health check: whether Redis answers, when a reserve last got its answer, the
   * jobs in hand, and the error counts. A worker stuck on an outage shows `connected: false` and
   * a `lastPoll` that no longer moves.
   */
  health(): WorkerHealth {
    const watch = this.connectionWatch;
    return {
      connected: watch.connected,
      lastPoll: watch.lastPoll === undefined ? null : new Date(watch.lastPoll),
      jobsInHand: this.inFlight,
      running: this.running !== undefined,
      errors: this.counts.errors,
      connectionErrors: watch.connectionErrors,
      downSince: watch.downSince === undefined ? null : new Date(watch.downSince),
    };
  }

  /** Counters since the worker was made: processed, failed, released, in flight, and per queue. */
  stats(): WorkerStats {
    const perQueue: Record<string, WorkerCounts> = {};
    for (const [name, counts] of this.perQueue) perQueue[name] = { ...counts };
    return {
      ...this.counts,
      inFlight: this.inFlight,
      running: this.running !== undefined,
      connected: this.connectionWatch.connected,
      connectionErrors: this.connectionWatch.connectionErrors,
      perQueue,
    };
  }

  /**
   * One event: to the `log` callback (the CLI's lines), the listeners (with the Error itself),
   * the logger, and the counters. `cause` is the Error the event's `error` text describes.
   */
  private log(event: WorkerEvent, cause?: unknown): void {
    this.count(event);
    if (event.event === 'error') this.telemetry?.error(event.queue);
    this.logEvent(event);
    const error = cause instanceof Error ? cause : event.error !== undefined ? new Error(event.error) : undefined;
    const logger = this.deps.logger;
    if (event.event === 'error') {
      if (error && this.deps.onError && isRedisTrouble(event)) this.deps.onError(error);
      if (this.listenerCount('error') > 0) this.emit('error', error ?? new Error(event.reason ?? 'worker error'), event);
      logger?.error({ ...event, ...(error ? { err: error } : {}) }, lineOf(event));
      return;
    }
    this.emit(event.event, event, error);
    if (!logger) return;
    const fields = { ...event, ...(error ? { err: error } : {}) };
    if (event.event === 'failed' || event.event === 'timed-out' || event.event === 'blocked' || event.event === 'warning')
      logger.warn(fields, lineOf(event));
    else if (event.event === 'processing') logger.debug(fields, lineOf(event));
    else logger.info(fields, lineOf(event));
  }

  private count(event: WorkerEvent): void {
    const key = COUNTED[event.event];
    if (!key) return;
    this.counts[key]++;
    if (event.queue === undefined) return;
    let counts = this.perQueue.get(event.queue);
    if (!counts) this.perQueue.set(event.queue, (counts = emptyCounts()));
    counts[key]++;
  }

  /**
   * Stop after the jobs in hand; resolves with what run() resolves (at once when not running).
   * Promptly, whatever Redis's state: a wait for a job (BLPOP) or for a connection that is gone
   * gives way at once. With `timeout` (ms), jobs still running past it are left reserved (their
   * reservations no longer renewed, their signals aborted): they come back after retry_after,
   * and the reason says how many. The CLI's SIGTERM passes `reason: 'signal'`.
   */
  stop(options: StopOptions = {}): Promise<StopReason> {
    const running = this.running;
    if (!running) return Promise.resolve({ status: 0, reason: options.reason ?? 'stopped' });
    if (!this.shouldQuit) this.stopAs = options.reason ?? 'stopped';
    this.shouldQuit = true;
    if (options.timeout !== undefined && !this.deadline) {
      let pass!: () => void;
      const promise = new Promise<void>((resolve) => (pass = resolve));
      const timer = setTimeout(
        () => {
          deadline.passed = true;
          pass();
        },
        Math.max(0, options.timeout),
      );
      const deadline = { passed: false, promise, timer };
      this.deadline = deadline;
    }
    for (const release of this.stopWaiters) release();
    this.queue.interruptWait();
    this.wake?.();
    // A loop waiting for a busy slot to free looks at the stop conditions now, so a deadline
    // is counted from here and not from whenever a job in hand ends.
    this.jobFinished?.resolve();
    this.jobFinished = undefined;
    return running;
  }

  /** Stop taking jobs until resumed (SIGUSR2); jobs in hand go on. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.wake?.();
  }

  /**
   * Runs until a stop condition; resolves with the reason and exit status. One run at a time:
   * a second while one is going rejects. A finished worker may run again, counting --max-jobs
   * and --max-time afresh (its stats() go on counting).
   */
  run(): Promise<StopReason> {
    if (this.running)
      return Promise.reject(
        new WorkerUsageError('this worker is running already: one run() at a time (await stop() before running it again)'),
      );
    this.shouldQuit = false;
    this.stopAs = 'stopped';
    this.jobsProcessed = 0;
    this.restartCheckedAt = 0;
    const running = this.runOnce().finally(() => {
      this.running = undefined;
      clearTimeout(this.deadline?.timer);
      this.deadline = undefined;
    });
    this.running = running;
    return running;
  }

  private async runOnce(): Promise<StopReason> {
    this.deps.logger?.info(
      { event: 'starting', queues: this.options.queues, share: this.options.share, ...(this.deps.connection ?? {}) },
      this.startLine(),
    );
    this.connectionWatch.start();
    const signals = this.options.handleSignals ? this.handleSignals() : undefined;
    this.warnOfShortRetryAfter();
    const refused = this.refuseUnanswerable();
    if (refused) return refused;
    this.telemetry = await WorkerTelemetry.open(this.deps.telemetry, this.options.connectionName, () => this.inFlightPerQueue()).catch(
      (error: unknown) => {
        // A broken @opentelemetry/api install costs the spans, never the jobs.
        this.log({ event: 'warning', reason: `running without OpenTelemetry: @opentelemetry/api did not load (${describeError(error)})` });
        return undefined;
      },
    );
    const renewing = this.renewReservations();
    if (this.options.memory > 0) watchLiveHeap();
    if (this.options.watchdog) {
      this.watchdog = new Watchdog(
        {
          exitOnBlock: this.options.exitOnBlock,
          onBlocked: (job) => this.reportBlocked(job),
          onError: (error) =>
            this.log({
              event: 'warning',
              reason: `the watchdog thread failed, so a handler that blocks the event loop outruns its timeout: ${describeError(error)}`,
            }),
          renewal: renewalFor(this.queue),
        },
        Math.max(1, this.options.concurrency),
      );
    }
    try {
      const stop = await this.loop();
      this.log({ event: 'stopping', reason: stop.reason, ...(stop.detail ? { detail: stop.detail } : {}) });
      return stop;
    } finally {
      signals?.();
      this.connectionWatch.stop();
      clearInterval(renewing);
      await this.watchdog?.close();
      this.watchdog = undefined;
      if (this.options.memory > 0) unwatchLiveHeap();
      this.telemetry?.close();
      this.telemetry = undefined;
    }
  }

  /**
   * `handleSignals`: SIGTERM and SIGINT stop the worker as lqb's do (the jobs in hand finish),
   * instead of killing the process mid-job. Returns what removes the listeners.
   */
  private handleSignals(): () => void {
    const stop = () => void this.stop({ reason: 'signal' });
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    return () => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
    };
  }

  /** The watchdog saw a handler block the event loop past its timeout: said now the loop turns again. */
  private reportBlocked(job: BlockedJob): void {
    const blocked = `${(job.blockedMs / 1000).toFixed(1)} s`;
    const what =
      job.others === 0
        ? `blocked the event loop for ${blocked}, past its timeout of ${job.timeout} s`
        : `was past its timeout of ${job.timeout} s while the event loop was blocked for ${blocked}, by it or by one of the ${job.others} other job${job.others === 1 ? '' : 's'} in hand`;
    const reason = `${what}: it is treated as timed out (exitOnBlock would have ended the process)`;
    this.log({ event: 'blocked', job: job.job, id: job.id, uuid: job.uuid, queue: job.queue, attempts: job.attempts, reason });
  }

  /** Jobs in hand per queue, for the in-flight metric. */
  private inFlightPerQueue(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const job of this.states.keys()) counts[job.queue] = (counts[job.queue] ?? 0) + 1;
    return counts;
  }

  /**
   * Laravel's docs warn that a job running past retry_after is run again. Reservations renewed
   * while handlers run close that hole for jobs in this worker's hands; a timeout at or past
   * retry_after still says something about the deployment worth a line at start.
   */
  private warnOfShortRetryAfter(): void {
    const retryAfter = this.queue.retryAfter;
    const timeout = this.options.timeout;
    if (retryAfter === null || (timeout > 0 && timeout < retryAfter)) return;
    const limit = timeout > 0 ? `${timeout} s` : 'no limit';
    this.log({
      event: 'warning',
      reason: `--timeout (${limit}) is not below --retry-after (${retryAfter} s): a job that outlives a worker killed mid-job runs again while the first may still be at work; keep --timeout a few seconds below --retry-after`,
    });
  }

  /**
   * Classes whose unique lock Node could not release (methods.ts), named at start: without
   * `share` the run ends before taking any job, status 2; with it their jobs are given back.
   * Without shapes the worker cannot tell which they are, and says so once.
   */
  private refuseUnanswerable(): StopReason | undefined {
    if (!this.deps.locks) {
      if (this.deps.unreachableLocks)
        this.log({ event: 'warning', reason: `${this.deps.unreachableLocks}; this worker releases no unique job's lock` });
      return undefined;
    }
    if (!this.deps.shapes) {
      this.log({ event: 'warning', reason: WITHOUT_SHAPES_LINE });
      return undefined;
    }
    const found = unanswerableMethods(this.handlers, this.deps.shapes);
    this.refused = new Map(found.map((refusal) => [refusal.className, unanswerableLine(refusal, true)]));
    for (const refusal of found) this.log({ event: 'error', job: refusal.className, error: unanswerableLine(refusal, this.options.share) });
    return found.length > 0 && !this.options.share
      ? {
          status: 2,
          reason: 'refused',
          detail: `${found.length} handled class${found.length > 1 ? 'es' : ''} whose unique lock Node could not release`,
        }
      : undefined;
  }

  /**
   * Renews the reservations of running jobs every third of retry_after (at least every 100
   * ms), so a job still running is never taken by another worker, or by this one.
   */
  private renewReservations(): NodeJS.Timeout | undefined {
    const retryAfter = this.queue.retryAfter;
    if (retryAfter === null || retryAfter <= 0) return undefined;
    const timer = setInterval(() => void this.renew(this.inHand), Math.max(100, (retryAfter * 1000) / 3));
    timer.unref();
    return timer;
  }

  private async renew(jobs: Iterable<RedisJob>): Promise<void> {
    try {
      await this.queue.renew(jobs);
    } catch (error) {
      this.log({ event: 'error', error: `could not renew reservations: ${describeError(error)}` }, error);
    }
  }

  /**
   * A wait on Redis that ends with `fallback` a moment after the worker is told to stop: a
   * Redis that answers (the usual case) still finishes what it was asked, one that is gone
   * does not hold the worker.
   */
  private untilStopped<T, F>(waiting: Promise<T>, fallback: F): Promise<T | F> {
    const grace = () => sleep(STOP_GRACE_MS, fallback, { ref: false });
    if (this.shouldQuit) return Promise.race([waiting, grace()]);
    let release!: () => void;
    const stopped = new Promise<F>((resolve) => (release = () => resolve(grace())));
    this.stopWaiters.add(release);
    return Promise.race([waiting, stopped]).finally(() => this.stopWaiters.delete(release));
  }

  private async loop(): Promise<StopReason> {
    const startedAt = Date.now();
    const lastRestart = this.deps.cache ? await this.untilStopped(this.deps.cache.lastRestart(), null) : null;
    const concurrency = Math.max(1, this.options.concurrency);
    // With room for more than one job, each reserve asks for at most half the slots, so the
    // next one can be on its way while this process reads and runs the last.
    const chunk = Math.ceil(concurrency / 2);
    for (;;) {
      const stop = await this.stopReason(startedAt, lastRestart);
      if (stop) {
        // Jobs reserved ahead are in hand: they run before the worker stops.
        this.start(await this.takeAhead());
        const left = await this.drainUntilDeadline();
        if (left === 0) return stop;
        return {
          ...stop,
          leftReserved: left,
          detail: `${left} job${left === 1 ? '' : 's'} still running when stop()'s deadline passed ${left === 1 ? 'is' : 'are'} left reserved: ${left === 1 ? 'it comes' : 'they come'} back after retry_after`,
        };
      }
      if (this.paused) {
        this.start(await this.takeAhead());
        await this.nap(this.options.sleep);
        continue;
      }
      // Take what was reserved ahead, or reserve as many as there are free slots, in one
      // round trip (one job for --once and --max-jobs' last ones).
      const wanted = this.ahead ? this.ahead.count : this.options.once ? 1 : this.freeSlots(concurrency);
      const jobs = this.ahead ? await this.takeAhead() : wanted > 0 ? await this.nextJobs(Math.min(wanted, chunk)) : [];
      if (jobs.length > 0) {
        const free = this.options.once ? 0 : Math.min(this.freeSlots(concurrency) - jobs.length, chunk);
        if (free > 0) this.ahead = { count: free, jobs: this.nextJobs(free) };
        this.start(jobs);
        if (this.options.once) {
          await this.drain();
          return { status: 0, reason: 'once' };
        }
        if (this.options.rest > 0) await this.nap(this.options.rest);
        continue;
      }
      if (wanted <= 0) {
        // Every slot is busy (or --max-jobs is spoken for): wait for one to finish. With none
        // in hand there is nothing to wait for: the stop conditions decide on the next turn.
        if (this.inFlight > 0) await this.oneFinished();
        continue;
      }
      if (this.inFlight > 0) {
        // Nothing to take, but work in hand: wait for some of it rather than poll.
        await this.napUnlessOneFinishes(this.options.sleep);
        continue;
      }
      if (this.options.stopWhenEmpty || this.options.once) return { status: 0, reason: this.options.once ? 'once' : 'empty' };
      await this.nap(this.options.sleep);
    }
  }

  /** Slots neither running a job nor spoken for by --max-jobs. */
  private freeSlots(concurrency: number): number {
    const free = concurrency - this.inFlight;
    return this.options.maxJobs > 0 ? Math.min(free, this.options.maxJobs - this.jobsProcessed - this.inFlight) : free;
  }

  /** The jobs of the reserve sent ahead, if one was. */
  private async takeAhead(): Promise<RedisJob[]> {
    const ahead = this.ahead;
    if (!ahead) return [];
    const jobs = await ahead.jobs;
    this.ahead = undefined;
    return jobs;
  }

  /** Runs reserved jobs, each in a slot of its own, their reservations renewed from now on. */
  private start(jobs: RedisJob[]): void {
    if (jobs.length === 0) return;
    for (const job of jobs) this.inHand.add(job);
    // A reservation scored in whole seconds runs out up to a second early: with a retry_after
    // under two seconds that can be before the first renewal (a third of it later), so these
    // are renewed at once. Longer ones wait for the timer; most jobs are done by then.
    const retryAfter = this.queue.retryAfter;
    if (retryAfter !== null && retryAfter > 0 && retryAfter < 2) void this.renew(jobs);
    for (const job of jobs) {
      this.inFlight++;
      // A job whose delete or release could not reach Redis stays reserved and comes back
      // after retry_after; say so, and keep the worker alive.
      this.process(job)
        .catch((error: unknown) => {
          this.states.get(job)?.span?.outcome('error', error);
          this.log({ event: 'error', job: job.id, queue: job.queue, error: `could not finish the job: ${describeError(error)}` }, error);
        })
        .finally(() => {
          try {
            this.states.get(job)?.span?.end();
          } catch {
            // The job is done whatever its span's exporter makes of it.
          }
          this.inHand.delete(job);
          this.states.delete(job);
          this.inFlight--;
          this.jobsProcessed++;
          this.jobFinished?.resolve();
          this.jobFinished = undefined;
        });
    }
  }

  /** A job's `processing` event, which starts its span when telemetry is on. */
  private processing(
    state: JobState,
    event: WorkerEvent & { job: string; id: string; queue: string; attempts: number },
    started: number,
  ): void {
    try {
      // The envelope, for a trace context the producer wrote into it: as read, else as reserved.
      const envelope = this.telemetry && (state.read?.payload.envelope ?? (state.job.unreadableByRedis ? undefined : state.job.fields));
      if (this.telemetry)
        state.span = this.telemetry.start(
          { name: event.job, queue: event.queue, id: event.id, uuid: event.uuid, attempts: event.attempts },
          started,
          envelope as Record<string, unknown> | undefined,
        );
    } catch (error) {
      // OpenTelemetry's SDKs do not throw; a provider that does costs the job its span, not its run.
      this.log({ event: 'warning', job: event.job, reason: `no span for this job: the tracer threw ${describeError(error)}` });
    }
    this.log(event);
  }

  /** An event that says what became of a job: its span hears it too. */
  private jobLog(state: JobState, event: WorkerEvent, cause?: unknown): void {
    state.span?.outcome(event.event as JobOutcome, cause);
    this.log(event, cause);
  }

  /** Up to `count` jobs from the first queue that has any, in the order the queues were given. */
  private async nextJobs(count: number): Promise<RedisJob[]> {
    // As Laravel 12.40+'s worker, a paused queue is skipped when reserving.
    if (this.deps.cache) this.pauses ??= new PauseWatch(this.deps.cache, this.options.connectionName, this.options.queues);
    const paused = this.pauses ? await this.untilStopped(this.pauses.paused(), new Set<string>()) : undefined;
    for (const name of this.options.queues) {
      if (this.shouldQuit) return [];
      if (paused?.has(name)) continue;
      try {
        const popping = this.queue.popMany(name, count);
        const jobs = await this.untilStopped(popping, undefined);
        if (jobs !== undefined) this.connectionWatch.polled();
        if (jobs === undefined) {
          // Told to stop while Redis had not answered (it may be gone): jobs it reserves after
          // all are given back as they were pushed, or come back after retry_after.
          popping.then((late) => Promise.all(late.map((job) => job.giveBack()))).catch(() => undefined);
          return [];
        }
        if (jobs.length > 0) return jobs;
      } catch (error) {
        // Redis went away or refused: say so, pause, and try again; never lose the loop. A
        // wait cut short by stop() is no error.
        if (this.shouldQuit) return [];
        this.log({ event: 'error', queue: name, error: describeError(error) }, error);
        await this.nap(1);
        return [];
      }
    }
    return [];
  }

  private async stopReason(startedAt: number, lastRestart: number | null): Promise<StopReason | undefined> {
    if (this.shouldQuit) return { status: 0, reason: this.stopAs };
    if (this.options.maxJobs > 0 && this.jobsProcessed >= this.options.maxJobs) return { status: 0, reason: 'max-jobs' };
    if (this.options.maxTime > 0 && Date.now() - startedAt >= this.options.maxTime * 1000) return { status: 0, reason: 'max-time' };
    if (this.memoryExceeded())
      return {
        status: 12,
        reason: 'memory',
        detail: `the JS heap live after the last full collection holds ${Math.round(liveHeapMb())} MB, at or past the memory limit of ${this.options.memory} MB`,
      };
    // Laravel asks its cache after every job; one round trip per loop would cost a busy worker a
    // good part of its throughput, so the signal is read at most once a second.
    if (this.deps.cache && Date.now() - this.restartCheckedAt >= 1000) {
      this.restartCheckedAt = Date.now();
      const restart = await this.untilStopped(
        this.deps.cache.lastRestart().catch(() => lastRestart),
        lastRestart,
      );
      if (this.shouldQuit) return { status: 0, reason: this.stopAs };
      if (restart !== lastRestart) return { status: 0, reason: 'restart' };
    }
    return undefined;
  }

  /**
   * Laravel's memoryExceeded compares memory_get_usage(): what PHP holds for the script's live
   * values, not the process's size. The JS heap live after the last full collection is that here
   * (see memory.ts); the RSS also holds V8's code, Node's buffers and whatever an embedding
   * service keeps, and would stop an idle worker at half its limit. 0 is no limit.
   */
  private memoryExceeded(): boolean {
    return this.options.memory > 0 && liveHeapMb() >= this.options.memory;
  }

  private async drain(): Promise<void> {
    while (this.inFlight > 0) await this.oneFinished();
  }

  /**
   * Waits for the jobs in hand, up to stop()'s deadline if it set one; then leaves those still
   * running reserved (no longer renewed, their signals aborted, what their handlers do later
   * ignored) and says how many.
   */
  private async drainUntilDeadline(): Promise<number> {
    while (this.inFlight > 0 && !this.deadline?.passed) {
      await (this.deadline ? Promise.race([this.oneFinished(), this.deadline.promise]) : this.oneFinished());
    }
    if (this.inFlight === 0) return 0;
    const left = this.states.size;
    const error = new Error(
      'the worker stopped at its deadline with this job still running: it is left reserved and comes back after retry_after',
    );
    for (const [job, state] of this.states) {
      state.expire(error);
      state.abandoned = true;
      this.inHand.delete(job);
    }
    return left;
  }

  /** Resolves when any job in hand finishes. */
  private oneFinished(): Promise<void> {
    if (!this.jobFinished) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      this.jobFinished = { promise, resolve };
    }
    return this.jobFinished.promise;
  }

  /** Sleeps `seconds`, or less when a job in hand finishes; no timer outlives the wait. */
  private async napUnlessOneFinishes(seconds: number): Promise<void> {
    const finished = this.oneFinished().then(() => this.wake?.());
    await Promise.race([finished, this.nap(seconds)]);
    this.wake?.();
  }

  private async nap(seconds: number): Promise<void> {
    if (seconds <= 0 || this.shouldQuit) return;
    const controller = new AbortController();
    this.wake = () => controller.abort();
    await sleep(seconds * 1000, undefined, { signal: controller.signal }).catch(() => undefined);
    this.wake = undefined;
  }

  /** Runs one reserved job to its end: done, released, given back or failed. */
  async process(job: RedisJob): Promise<void> {
    const started = performance.now();
    const state = new JobState(job);
    this.states.set(job, state);
    // Judged before the command is read: a job Redis could not count, or one out of attempts,
    // is failed without decoding a command that may be what killed the last worker.
    const early = this.failsBeforeReading(job);
    if (early) return this.failUnread(state, early, started);
    let read: { payload: DecodedPayload; view: JobView; command: PhpValue | undefined } | undefined;
    let unreadable: unknown;
    try {
      const payload = job.payload;
      if (typeof payload.envelope.attempts !== 'number')
        throw new Error('the payload has no numeric "attempts" (Laravel’s own pop fails on it)');
      read = { payload, ...commandOf(payload, this.deps.encrypter) };
    } catch (error) {
      unreadable = error;
    }
    // Read after decoding: attempts, id and uuid then come from the decoded payload.
    const base = { id: job.id, uuid: job.uuid, queue: job.queue, attempts: job.attempts() };
    if (!read) {
      // Shared with PHP workers: what Node cannot read (an encrypted command and no APP_KEY here)
      // a PHP worker may, and one that cannot fails it by its own rules.
      if (this.options.share)
        return this.giveBackUnread(state, `the job cannot be read here, left for a PHP worker: ${describeError(unreadable)}`, started);
      // A payload that does not decode cannot run: fail it with the reason.
      return this.failUnread(
        state,
        new UndecodableJobError(`the job cannot be read: ${describeError(unreadable)}`, { cause: unreadable }),
        started,
      );
    }
    const { payload, view, command } = read;
    if (alreadyExceedsMaxAttempts(payload.envelope, job.attempts(), this.now(), this.options)) {
      return this.failUnread(state, new MaxAttemptsExceededError(jobName(payload)), started);
    }
    state.read = { payload, command };
    const name = jobName(payload);
    this.processing(state, { event: 'processing', job: name, ...base }, started);
    const finish = (event: WorkerEvent['event'], error?: unknown) =>
      this.jobLog(
        state,
        {
          event,
          job: name,
          ...base,
          durationMs: performance.now() - started,
          ...(error !== undefined ? { error: describeError(error) } : {}),
        },
        error,
      );

    const found = this.findHandler(payload, view);
    const context = found && this.context(state, found.name, payload, view, command);
    const middleware = found && this.middlewareNotices.check(view, found.handler, this.deps.shapes);
    if (middleware) this.log({ event: 'warning', job: name, reason: middleware });
    try {
      if (!found || !context) {
        const nearest = nearestHandlerKey(handlerNames(payload, view)[0] ?? name, Object.keys(this.handlers));
        const near = nearest === undefined ? '' : ` (the nearest handler key is ${JSON.stringify(nearest)})`;
        if (this.options.share) {
          await job.giveBack(this.options.shareDelay);
          return this.jobLog(state, {
            event: 'given-back',
            job: name,
            ...base,
            durationMs: performance.now() - started,
            reason: `no Node handler, left for a PHP worker${near}`,
          });
        }
        const missing = `no handler for ${handlerNames(payload, view).join(' or ')} in the handlers module${near}`;
        // A closure's body is PHP: say so first, rather than only ask for a handler of Laravel's wrapper.
        throw new NoHandlerError(view.kind === 'closure' ? `${name}: ${view.reason} (${missing})` : missing);
      }
      const forPhp = this.refused.get(found.name) ?? (await this.handler.phpShouldRun(payload, command));
      if (forPhp) {
        await job.giveBack(this.options.shareDelay);
        return this.jobLog(state, { event: 'given-back', job: name, ...base, reason: forPhp });
      }
      await this.handler.beforeRunning(payload, command);
      const timedOut = await this.runHandler(state, found.handler, context, payload);
      if (timedOut) return finish('timed-out', timedOut);
      // As Laravel's CallQueuedHandler: a unique job not released frees its lock; a job that
      // neither failed nor was released pushes the next link of its chain, even when it deleted
      // itself; then it is deleted if it was not.
      if (!state.abandoned) await this.handler.afterRunning(payload, command, state.released);
      if (!state.failed && !state.released && !state.abandoned) {
        await this.handler.dispatchNextInChain(payload, command);
        await this.handler.recordSuccessfulBatchJob(payload, command);
        if (!state.deleted) {
          await job.delete();
          state.deleted = true;
        }
      }
      finish(state.outcome('processed'));
    } catch (error) {
      // Redis refused the delete of a job that ran (busy past the retries): no exception of the
      // job's, so it is not failed; it stays reserved and comes back after retry_after.
      if (isBookkeepingError(error)) throw error;
      await this.handleException(state, payload, name, context, error);
      finish(state.outcome('deleted'), error);
    }
  }

  /**
   * Why a job must fail before its command is read, if it must: Redis reserved it as it was
   * pushed (its attempts never rise, so it would loop for ever), or this attempt is one too many
   * (Laravel's markJobAsFailedIfAlreadyExceedsMaxAttempts), judged from the envelope alone.
   */
  private failsBeforeReading(job: RedisJob): Error | undefined {
    const unreadable = job.unreadable();
    if (unreadable !== undefined) return new UndecodableJobError(`the job cannot be read: ${unreadable}`);
    // A first attempt has killed no worker yet: it is judged once read, which spares every
    // job's first run a second parse of its envelope.
    if (job.firstAttempt) return undefined;
    // The pushed envelope, which the payload is then decoded from; the reserved copy when it does not read.
    if (alreadyExceedsMaxAttempts(job.envelope ?? job.fields, job.attempts(), this.now(), this.options))
      return new MaxAttemptsExceededError(displayNameOf(job));
    return undefined;
  }

  /**
   * Fails a job from its envelope alone: recorded and deleted first, so a command that cannot
   * be read (or kills the process reading it) cannot take the job down with it; then, when the
   * command does read and has a handler, its failed() hook.
   */
  private async failUnread(state: JobState, error: Error, started: number): Promise<void> {
    const job = state.job;
    const name = error instanceof UndecodableJobError ? '(undecodable)' : displayNameOf(job);
    const base = { id: job.id, uuid: job.uuid, queue: job.queue, attempts: job.attempts() };
    this.processing(state, { event: 'processing', job: name, ...base }, started);
    if (error instanceof MaxAttemptsExceededError) {
      const reason = await this.phpShouldFailUnread(job);
      if (reason) {
        await job.giveBack(this.options.shareDelay);
        return this.jobLog(state, {
          event: 'given-back',
          job: name,
          ...base,
          reason: `out of attempts, left for a PHP worker to fail: ${reason}`,
        });
      }
    }
    await this.recordFailure(state, error, name);
    if (state.failedRecorded && error instanceof MaxAttemptsExceededError) await this.failedHookOfUnread(state, error);
    this.jobLog(
      state,
      { event: state.outcome('deleted'), job: name, ...base, durationMs: performance.now() - started, error: error.message },
      error,
    );
  }

  /** Gives a job back as it was pushed, its command unread, for a PHP worker sharing the queue. */
  private async giveBackUnread(state: JobState, reason: string, started: number): Promise<void> {
    const job = state.job;
    const base = { job: displayNameOf(job), id: job.id, uuid: job.uuid, queue: job.queue, attempts: job.attempts() };
    this.processing(state, { event: 'processing', ...base }, started);
    await job.giveBack(this.options.shareDelay);
    this.jobLog(state, { event: 'given-back', ...base, reason });
  }

  /** With --share, why a job out of attempts is PHP's to fail (see CallQueuedHandler.phpShouldFail), if it is. */
  private async phpShouldFailUnread(job: RedisJob): Promise<string | undefined> {
    if (!this.options.share) return undefined;
    try {
      const payload = job.payload;
      return await this.handler.phpShouldFail(payload, commandOf(payload, this.deps.encrypter).command);
    } catch {
      return undefined;
    }
  }

  /** The failed() hook of a job failed before it was read, when its command reads after all. */
  private async failedHookOfUnread(state: JobState, error: Error): Promise<void> {
    try {
      const payload = state.job.payload;
      const { view, command } = commandOf(payload, this.deps.encrypter);
      await this.handler.failed(payload, command);
      const found = this.findHandler(payload, view);
      if (found) await this.runFailedHook(this.context(state, found.name, payload, view, command), error);
    } catch {
      // Its command does not read: there is no hook to run, and the failure is recorded.
    }
  }

  /**
   * The handler for a job, among the module's own names only: a job of class `constructor` or
   * `toString` must not find Object.prototype's functions and be reported done.
   */
  private findHandler(payload: DecodedPayload, view: JobView): { name: string; handler: Handler } | undefined {
    for (const name of handlerNames(payload, view)) {
      const handler = ownHandler(this.handlers, name);
      if (handler) return { name, handler };
    }
    return undefined;
  }

  /**
   * Runs the handler with the job's timeout. Resolves to the timeout error when it ran out,
   * having failed the job if Laravel would (failOnTimeout, or its last attempt); otherwise the
   * job stays reserved and comes back after retry_after, as with Laravel.
   */
  private async runHandler(state: JobState, handler: Handler, context: HandlerJob, payload: DecodedPayload): Promise<Error | undefined> {
    const seconds = this.timeoutFor(payload);
    const span = state.span;
    const run = span ? () => span.run(() => handler(context)) : () => handler(context);
    const job = state.job;
    // The reservation goes too, so the thread can renew it while a handler blocks the loop.
    const watch = (deadline: number) =>
      this.watchdog?.watch(
        deadline,
        { job: jobName(payload), id: job.id, uuid: job.uuid, queue: job.queue, attempts: job.attempts(), timeout: seconds },
        { key: `${this.queue.key(job.queue)}:reserved`, member: job.reservedBytes },
      );
    if (seconds <= 0) {
      // No timeout to hold, but a reservation to keep: the worker renews it while the handler
      // runs, so the thread must too while the handler blocks the loop (no deadline: never reported).
      const watched = watch(Infinity);
      try {
        await run();
      } finally {
        if (watched !== undefined) this.watchdog?.unwatch(watched);
      }
      return undefined;
    }
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), seconds * 1000);
    });
    const deadline = performance.now() + seconds * 1000;
    const watched = watch(deadline);
    // A handler that blocked the event loop past its timeout settles before the timer can fire:
    // it ran too long all the same (Laravel's alarm would have ended it), whether it then
    // returned or threw, so it is a timeout and not a success.
    const settle = (running: Promise<unknown>) =>
      running.then(
        () => (performance.now() < deadline ? ('done' as const) : ('late' as const)),
        (error: unknown) => {
          if (performance.now() < deadline) throw error;
          return 'late' as const;
        },
      );
    try {
      let settled: Promise<'done' | 'late'>;
      try {
        settled = settle(Promise.resolve(run()));
      } catch (error) {
        // A handler that is no async function may throw as it is called.
        settled = settle(Promise.reject(error));
      }
      const outcome = await Promise.race([settled, expired]);
      if (outcome === 'done') return undefined;
    } finally {
      clearTimeout(timer);
      if (watched !== undefined) this.watchdog?.unwatch(watched);
    }
    const name = jobName(payload);
    const error = new TimeoutExceededError(name, seconds);
    const failNow = !state.finished;
    state.expire(error);
    // No longer this handler's: its reservation runs out after retry_after, as with Laravel.
    this.inHand.delete(state.job);
    const lastAttempt = this.attemptsUsedUp(state.job, payload);
    // As Laravel 8's timeout handler: fail on the last attempt, count the timeout toward
    // maxExceptions (failing when reached), fail on failOnTimeout; each failure is recorded as
    // a MaxAttemptsExceededException ("…or run too long"), the only kind 8.x has for it.
    // The timeout is counted even when the job is not failed now.
    const exceptionsUsedUp = await this.exceptionsUsedUp(payload);
    if (failNow && (lastAttempt || exceptionsUsedUp || payload.envelope.failOnTimeout === true)) {
      await this.fail(state, new MaxAttemptsExceededError(name), name, context);
    }
    state.abandoned = true;
    return error;
  }

  private context(state: JobState, name: string, payload: DecodedPayload, view: JobView, command: PhpValue | undefined): HandlerJob {
    const job = state.job;
    const context: HandlerJob = new JobContext(name, state, payload, view, command, {
      release: async (seconds) => {
        if (state.finished) return;
        state.released = true;
        await job.release(seconds);
      },
      fail: async (error) => {
        if (state.abandoned) return;
        await this.fail(state, manualFailure(error), jobName(payload), context);
      },
      delete: async () => {
        if (state.finished) return;
        state.deleted = true;
        await job.delete();
      },
      cache: this.deps.cache,
      ...(this.deps.locks ? { locks: this.deps.locks } : {}),
    });
    return context;
  }

  /** Laravel's markJobAsFailedIfWillExceedMaxAttempts, for this reserved job. */
  private attemptsUsedUp(job: RedisJob, payload: DecodedPayload): boolean {
    return attemptsUsedUp(payload.envelope, job.attempts(), this.now(), this.options);
  }

  /** Laravel's handleJobException: fail when out of attempts or exceptions, else release with backoff. */
  private async handleException(
    state: JobState,
    payload: DecodedPayload,
    name: string,
    context: HandlerJob | undefined,
    error: unknown,
  ): Promise<void> {
    const job = state.job;
    // Left reserved at stop()'s deadline: no longer this worker's to release or fail.
    if (state.abandoned) return;
    try {
      if (!state.failed && !(error instanceof NoHandlerError) && state.read && this.attemptsUsedUp(job, payload)) {
        // Shared with PHP workers: a failure whose bookkeeping runs PHP closures is left to them.
        const reason = await this.handler.phpShouldFail(state.read.payload, state.read.command);
        if (reason) {
          state.released = true;
          await job.release(0);
          this.jobLog(state, {
            event: 'given-back',
            job: name,
            id: job.id,
            uuid: job.uuid,
            queue: job.queue,
            attempts: job.attempts(),
            reason: `out of attempts, left for a PHP worker to fail: ${reason}`,
          });
          return;
        }
      }
      if (!state.failed) {
        if (this.attemptsUsedUp(job, payload) || error instanceof NoHandlerError) {
          await this.fail(state, error, name, context);
        }
        // Laravel counts the exception even when the job has just failed for its attempts (the
        // count outlives it: a retried job keeps its uuid); failing it again does nothing.
        if (await this.exceptionsUsedUp(payload)) await this.fail(state, error, name, context);
      }
    } finally {
      if (!state.finished) {
        state.released = true;
        await job.release(backoffFor(payload.envelope, job.attempts(), this.options));
      }
    }
  }

  /** maxExceptions, counted per uuid in the cache Laravel's workers use. */
  private async exceptionsUsedUp(payload: DecodedPayload): Promise<boolean> {
    const maxExceptions = payload.envelope.maxExceptions;
    const uuid = payload.envelope.uuid;
    if (!this.deps.cache || typeof maxExceptions !== 'number' || typeof uuid !== 'string') return false;
    if ((await this.deps.cache.countException(uuid)) < maxExceptions) return false;
    await this.deps.cache.forgetExceptions(uuid);
    return true;
  }

  /**
   * Fails a job: recorded where Laravel looks, out of `:reserved`, then its handler's `failed`
   * hook with the error (as Laravel calls the job's failed() on every way to failure).
   */
  private async fail(state: JobState, error: unknown, name: string, context: HandlerJob | undefined): Promise<void> {
    if (state.failed || state.deleted) {
      state.failed = true;
      return;
    }
    await this.recordFailure(state, error, name);
    if (!state.failedRecorded) return;
    if (state.read) await this.handler.failed(state.read.payload, state.read.command);
    if (context) await this.runFailedHook(context, error);
  }

  /**
   * The record first, then the delete: a worker killed between the two leaves the job reserved,
   * to come back after retry_after and be failed again, and the uuid's unique key makes that
   * second record a no-op. A record that cannot be written keeps the job reserved for the same
   * reason, and says so.
   */
  private async recordFailure(state: JobState, error: unknown, name: string): Promise<void> {
    const job = state.job;
    state.failed = true;
    try {
      const exception = exceptionText(error);
      if (this.deps.failer) await this.deps.failer.log(this.options.connectionName, job.queue, job.raw, exception);
      if (this.deps.onFailed)
        await this.deps.onFailed(
          { connection: this.options.connectionName, queue: job.queue, id: job.id, uuid: job.uuid, payload: job.raw, exception },
          error,
        );
    } catch (recordError) {
      state.kept = true;
      this.inHand.delete(job);
      this.log(
        {
          event: 'error',
          job: name,
          id: job.id,
          uuid: job.uuid,
          queue: job.queue,
          error: `could not record the failure, so the job stays reserved and comes back after retry_after: ${describeError(recordError)}`,
        },
        recordError,
      );
      return;
    }
    state.failedRecorded = true;
    state.deleted = true;
    await job.delete();
  }

  /**
   * The handler's `failed(job, error)` hook, bounded by the job's timeout as its handler is: a
   * hook that never settles must not hold a slot, or the worker's exit, for ever.
   */
  private async runFailedHook(context: HandlerJob, error: unknown): Promise<void> {
    const hook = ownHandler(this.handlers, context.name)?.failed;
    if (typeof hook !== 'function') return;
    const seconds = this.timeoutFor(context.decoded);
    let timer: NodeJS.Timeout | undefined;
    try {
      const outcome = await Promise.race([
        Promise.resolve(hook(context, error)).then(() => 'done' as const),
        new Promise<'timeout'>((resolve) => {
          if (seconds > 0) timer = setTimeout(resolve, seconds * 1000, 'timeout');
        }),
      ]);
      if (outcome === 'timeout')
        this.log({
          event: 'error',
          job: context.name,
          id: context.id,
          uuid: context.uuid,
          error: `failed() hook did not finish within ${seconds} seconds; the failure is recorded`,
        });
    } catch (hookError) {
      this.log(
        {
          event: 'error',
          job: context.name,
          id: context.id,
          uuid: context.uuid,
          error: `failed() hook threw: ${describeError(hookError)}`,
        },
        hookError,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  private timeoutFor(payload: DecodedPayload): number {
    return timeoutOf(payload.envelope, this.options);
  }
}

function toRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
}

/** A handler the module itself defines under `name`, never one inherited from Object.prototype. */
function ownHandler(handlers: HandlerMap, name: string): Handler | undefined {
  if (!Object.hasOwn(handlers, name)) return undefined;
  const handler = handlers[name];
  return typeof handler === 'function' ? handler : undefined;
}

/** The job's name for the log when its command is not read: the envelope's displayName. */
function displayNameOf(job: RedisJob): string {
  const name = job.fields.displayName;
  return typeof name === 'string' ? name : '(unnamed job)';
}

const emptyCounts = (): WorkerCounts => ({ processed: 0, failed: 0, released: 0, givenBack: 0, timedOut: 0, errors: 0 });

/** Which counter an event adds to. */
const COUNTED: Partial<Record<WorkerEvent['event'], keyof WorkerCounts>> = {
  processed: 'processed',
  deleted: 'processed',
  failed: 'failed',
  released: 'released',
  'given-back': 'givenBack',
  'timed-out': 'timedOut',
  error: 'errors',
};

/** An error event about Redis rather than a job's own code (a reserve, a renewal, a delete or release). */
function isRedisTrouble(event: WorkerEvent): boolean {
  const text = event.error ?? '';
  return event.job === undefined || text.startsWith('could not finish the job') || text.startsWith('could not renew');
}

/** The event as one line: what happened, to which job, and why. */
function lineOf(event: WorkerEvent): string {
  const why = event.reason ?? event.error;
  return [event.event, event.job, event.detail ? `${why}: ${event.detail}` : why]
    .filter((part) => part !== undefined && part !== '')
    .join(' ');
}
