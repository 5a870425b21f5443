/**
 * Where everything the worker says goes, in one place: the `log` callback (lqb's lines), the
 * listeners (with the Error itself), the logger, the counters, `onError`, and the run's recorders
 * (OpenTelemetry's, Horizon's), which hear what becomes of each job instead of being called from
 * inside the worker. An `error` event is said with its source (see ErrorSource): `onError` hears
 * the queue's trouble because it is said to be the queue's, not because of how its text begins.
 */
import type { EventEmitter } from 'node:events';
import { describeError } from './errors.js';
import type {
  ErrorSource,
  JobRecord,
  RecorderContext,
  RecorderFactory,
  WorkerCounts,
  WorkerDependencies,
  WorkerEvent,
  WorkerRecorder,
} from './types.js';

/** Sources whose errors are the queue's store failing the worker: what `onError` is for. */
const QUEUE_TROUBLE: ReadonlySet<ErrorSource> = new Set(['queue', 'connection']);

export class WorkerEvents {
  readonly counts: WorkerCounts = emptyCounts();
  readonly perQueue = new Map<string, WorkerCounts>();
  /** The recorders of the run in progress. */
  private recorders: WorkerRecorder[] = [];

  constructor(
    private readonly emitter: EventEmitter,
    private readonly deps: WorkerDependencies,
  ) {}

  /** Opens the run's recorders; one that fails to open is left out (its factory says why). */
  async open(factories: readonly RecorderFactory[], context: RecorderContext): Promise<void> {
    const opened = await Promise.all(factories.map((open) => open(context).catch(() => undefined)));
    this.recorders = opened.filter((recorder): recorder is WorkerRecorder => recorder !== undefined);
  }

  /** Closes the run's recorders, waiting for those that finish their writes (a close that rejects is theirs to say). */
  async close(): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const recorder of this.recorders.splice(0)) {
      this.tell(() => {
        const closed = recorder.close?.();
        if (closed) closing.push(closed.catch(() => undefined));
      });
    }
    await Promise.all(closing);
  }

  /**
   * One event: to the counters, the `log` callback, the listeners, the logger; an `error` to its
   * recorders too, and to `onError` when its source is the queue's. `cause` is the Error the
   * event's `error` text describes.
   */
  say(event: WorkerEvent, cause?: unknown, source: ErrorSource = 'worker'): void {
    this.count(event);
    if (event.event === 'error') for (const recorder of this.recorders) this.tell(() => recorder.error?.(event, source, cause));
    this.deps.log?.(event);
    const error = cause instanceof Error ? cause : event.error !== undefined ? new Error(event.error) : undefined;
    const logger = this.deps.logger;
    if (event.event === 'error') {
      if (error && this.deps.onError && QUEUE_TROUBLE.has(source)) this.deps.onError(error);
      if (this.emitter.listenerCount('error') > 0) this.emitter.emit('error', error ?? new Error(event.reason ?? 'worker error'), event);
      logger?.error({ ...event, ...(error ? { err: error } : {}) }, lineOf(event));
      return;
    }
    this.emitter.emit(event.event, event, error);
    if (!logger) return;
    const fields = { ...event, ...(error ? { err: error } : {}) };
    if (event.event === 'failed' || event.event === 'timed-out' || event.event === 'blocked' || event.event === 'warning')
      logger.warn(fields, lineOf(event));
    else if (event.event === 'processing') logger.debug(fields, lineOf(event));
    else logger.info(fields, lineOf(event));
  }

  /** A job is taken up: its recorders hear it first (a span starts), then the `processing` event is said. */
  processing(record: JobRecord, event: WorkerEvent): void {
    for (const recorder of this.recorders) {
      this.tell(
        () => recorder.processing?.(record, event),
        (error) => ({ event: 'warning', job: event.job, reason: `no record of this job: a recorder threw ${describeError(error)}` }),
      );
    }
    this.say(event);
  }

  /** What became of a job: its recorders hear it with the job, then the event is said. */
  outcome(record: JobRecord, event: WorkerEvent, cause?: unknown, source: ErrorSource = 'worker'): void {
    for (const recorder of this.recorders) this.tell(() => recorder.outcome?.(record, event, cause));
    this.say(event, cause, source);
  }

  /** A job left the worker's hands. */
  finished(record: JobRecord): void {
    // The job is done whatever a recorder's exporter makes of it.
    for (const recorder of this.recorders) this.tell(() => recorder.finished?.(record));
  }

  /** Whether a recorder wraps handlers (around): without one, a handler is called as it is. */
  get hasAround(): boolean {
    return this.recorders.some((recorder) => recorder.around !== undefined);
  }

  /** Runs a job's handler inside each recorder's context (a span's, so the handler's own spans are its children). */
  around<T>(record: JobRecord, handler: () => T): T {
    let run = handler;
    for (const recorder of this.recorders) {
      if (!recorder.around) continue;
      const inner = run;
      run = () => recorder.around!(record, inner);
    }
    return run();
  }

  /** Jobs counted per queue, for stats(). */
  perQueueCounts(): Record<string, WorkerCounts> {
    const perQueue: Record<string, WorkerCounts> = {};
    for (const [name, counts] of this.perQueue) perQueue[name] = { ...counts };
    return perQueue;
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

  /** Tells a recorder something: what it throws is said as a warning (when `warning` says how), never the job's end. */
  private tell(call: () => void, warning?: (error: unknown) => WorkerEvent): void {
    try {
      call();
    } catch (error) {
      if (warning) this.say(warning(error));
    }
  }
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

/** The event as one line: what happened, to which job, and why. */
export function lineOf(event: WorkerEvent): string {
  const why = event.reason ?? event.error;
  return [event.event, event.job, event.detail ? `${why}: ${event.detail}` : why]
    .filter((part) => part !== undefined && part !== '')
    .join(' ');
}
