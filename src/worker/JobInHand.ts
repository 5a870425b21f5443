/**
 * A job in the worker's hands: the one record the loop keeps of it from its reserve to its end
 * (what became of it, whether its reservation is still renewed, its timeout's signal), and what
 * its handler is given of it (JobContext). The record is also what recorders hear it as.
 */
import { toJS, type PhpValue } from '../php/index.js';
import { plainJson, type DecodedPayload, type JobView } from '../laravel/index.js';
import type { ReservedJob } from '../queue/contract.js';
import type { QueueCache } from './cache.js';
import type { UniqueLockStore } from './locks/index.js';
import { argsOf, releaseDelay, type HandlerJob } from './handlers.js';
import type { JobRecord, WorkerEvent } from './types.js';

export class JobInHand implements JobRecord {
  /** performance.now() when the worker took it up. */
  readonly startedAt = performance.now();
  /** The name its events give it: the envelope's displayName until its payload is read, then its class. */
  name: string;
  /** The payload and command, once read: what the bookkeeping and the failed() hook are given. */
  payload: DecodedPayload | undefined;
  command: PhpValue | undefined;
  released = false;
  deleted = false;
  failed = false;
  /** A failure was recorded: the job did not fail quietly for having been deleted first. */
  failedRecorded = false;
  /** Its failure could not be recorded: it stays reserved, to come back after retry_after. */
  kept = false;
  /**
   * The handler ran past its timeout, or the worker's stop deadline passed: the job is no longer
   * this handler's (it may be failed, or taken by another worker after retry_after), so what the
   * handler does to it later is ignored.
   */
  abandoned = false;
  /**
   * Its reservation is renewed while it is in hand; no longer once it is not this worker's to
   * keep (timed out, left at a stop deadline, its failure not recorded): it then comes back after retry_after.
   */
  renewed = true;
  /** Made only when the handler asks for its signal; most never do. */
  #controller: AbortController | undefined;
  #expiredWith: Error | undefined;

  constructor(readonly job: ReservedJob) {
    this.name = displayNameOf(job);
  }

  get finished(): boolean {
    return this.released || this.deleted || this.failed || this.abandoned;
  }

  /** The payload is read: the job is known by its class from now on. */
  read(payload: DecodedPayload, command: PhpValue | undefined, name: string): void {
    this.payload = payload;
    this.command = command;
    this.name = name;
  }

  /** The fields every event about this job carries. */
  fields(): { job: string; id: string; uuid: string | undefined; queue: string; attempts: number } {
    const job = this.job;
    return { job: this.name, id: job.id, uuid: job.uuid, queue: job.queue, attempts: job.attempts() };
  }

  /** Milliseconds since the worker took it up. */
  elapsed(): number {
    return performance.now() - this.startedAt;
  }

  signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#expiredWith) this.#controller.abort(this.#expiredWith);
    }
    return this.#controller.signal;
  }

  /** Its time is up: its signal aborts with `error`, now or when first asked for. */
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

/** The job's name for the log when its command is not read: the envelope's displayName. */
export function displayNameOf(job: ReservedJob): string {
  const name = job.fields.displayName;
  return typeof name === 'string' ? name : '(unnamed job)';
}

/** What a handler's job can do, as the worker does it. */
export interface JobActions {
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
export class JobContext implements HandlerJob {
  readonly attempts: number;
  readonly uuid: string | undefined;
  readonly id: string;
  readonly queue: string;
  readonly #command: PhpValue | undefined;
  readonly #inHand: JobInHand;
  readonly #actions: JobActions;
  #plain: Record<string, unknown> | undefined;
  #args: unknown[] | undefined;
  #payload: Record<string, unknown> | undefined;

  constructor(
    /** The handler key it was found under. */
    readonly name: string,
    inHand: JobInHand,
    readonly decoded: DecodedPayload,
    readonly view: JobView,
    command: PhpValue | undefined,
    actions: JobActions,
  ) {
    const job = inHand.job;
    this.attempts = job.attempts();
    this.uuid = job.uuid;
    this.id = job.id;
    this.queue = job.queue;
    this.#command = command;
    this.#inHand = inHand;
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
    return this.#inHand.signal();
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

function toRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
}
