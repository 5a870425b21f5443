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
  /**
   * The name its events give it: the envelope's displayName until its payload is read, then its
   * class. The displayName is looked up when first asked for: it parses the reserved copy, which
   * a job whose payload reads (most) never needs.
   */
  #name: string | undefined;
  /** The payload and command, once read: what the bookkeeping and the failed() hook are given. */
  payload: DecodedPayload | undefined;
  command: PhpValue | undefined;
  released = false;
  deleted = false;
  /**
   * It ran, and its delete is on its way (deleted says so once the queue took it): a reserve
   * answered meanwhile may hand back a copy of it (see finishedCopies.ts).
   */
  deleting = false;
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
  /**
   * Its handler has returned within its timeout: only its bookkeeping and delete are left, a
   * round trip or two to the queue. Its slot counts as free when the worker decides how many to
   * reserve next, so the next jobs are on their way while these are deleted (concurrency bounds
   * the handlers running at once, not the deletes awaiting their answer).
   */
  settling = false;
  /** @internal Its place among the worker's jobs in hand (see Worker's `inHand`), or -1. */
  slot = -1;
  /** Made only when the handler asks for its signal; most never do. */
  #controller: AbortController | undefined;
  #expiredWith: Error | undefined;

  constructor(readonly job: ReservedJob) {}

  get name(): string {
    return (this.#name ??= displayNameOf(this.job));
  }

  set name(name: string) {
    this.#name = name;
  }

  get finished(): boolean {
    return this.released || this.deleted || this.failed || this.abandoned;
  }

  /** The payload is read: the job is known by its class from now on. */
  read(payload: DecodedPayload, command: PhpValue | undefined, name: string): void {
    this.payload = payload;
    this.command = command;
    this.#name = name;
  }

  /** The fields every event about this job carries. */
  fields(): { job: string; id: string; uuid: string | undefined; queue: string; attempts: number } {
    const job = this.job;
    return { job: this.name, id: job.id, uuid: job.uuid, queue: job.queue, attempts: job.attempts() };
  }

  /**
   * An event about this job with the fields every one carries, in the order fields() gives
   * them, and its duration when `timed`: made as one literal (no spread of fields() into it).
   */
  event(event: WorkerEvent['event'], timed = false): WorkerEvent {
    const job = this.job;
    const said: WorkerEvent = { event, job: this.name, id: job.id, uuid: job.uuid, queue: job.queue, attempts: job.attempts() };
    if (timed) said.durationMs = this.elapsed();
    return said;
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

/**
 * What a handler's job can do, as the worker does it: one object for every job of a worker
 * (the job it acts on is passed), so a job costs no closures of its own.
 */
export interface JobActions {
  release(inHand: JobInHand, seconds: number): Promise<void>;
  fail(inHand: JobInHand, error: unknown, context: HandlerJob): Promise<void>;
  delete(inHand: JobInHand): Promise<void>;
  readonly cache: QueueCache | undefined;
  readonly locks: UniqueLockStore | undefined;
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
  #release: ((seconds?: number) => Promise<void>) | undefined;
  #fail: ((error?: unknown) => Promise<void>) | undefined;
  #delete: (() => Promise<void>) | undefined;

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

  // Functions bound to this job when first read, so `const { release } = job` still works;
  // most handlers never touch them, and a job made with three closures costs every job.
  get release(): (seconds?: number) => Promise<void> {
    return (this.#release ??= async (seconds: number = 0): Promise<void> => this.#actions.release(this.#inHand, releaseDelay(seconds)));
  }

  get fail(): (error?: unknown) => Promise<void> {
    return (this.#fail ??= (error?: unknown): Promise<void> => this.#actions.fail(this.#inHand, error, this));
  }

  get delete(): () => Promise<void> {
    return (this.#delete ??= (): Promise<void> => this.#actions.delete(this.#inHand));
  }
}

function toRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
}
