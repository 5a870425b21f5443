/**
 * Horizon's records of what a Node worker does, as a recorder of its runs (WorkerRecorder): the
 * worker tells it what became of each job, and it writes what Horizon's listeners write for the
 * same moment of a PHP worker (JobReserved, JobReleased, JobDeleted, JobFailed), those of one
 * turn of the event loop in one round trip. The worker never waits for these writes: they go out
 * behind its own steps, on one connection in the order they were made (so a job's records land
 * in the order of its events, across its attempts), and the run's end waits for the last of them.
 *
 * The runtime is the worker's own, from the moment it took the job up; Horizon's PHP worker
 * times from its JobReserved event, a moment later than the reserve too.
 */
import { RedisJob } from '../redis/RedisJob.js';
import { exceptionText } from '../worker/errors.js';
import type { JobRecord, RecorderFactory, WorkerEvent, WorkerRecorder } from '../worker/types.js';
import type { HorizonRecorder } from './HorizonRecorder.js';
import { horizonFactsOfJob, horizonIdOf, type HorizonFacts } from './payload.js';
import { commandOf, decodePayload } from '../laravel/payload.js';
import type { Encrypter } from '../laravel/encrypter.js';
import { PhpObject, deref, toJS } from '../php/index.js';
import type { HandlerMap } from '../worker/handlers.js';
import { ownHandler } from '../worker/runJob.js';

/** What else a worker's run starts and stops with its Horizon records (the supervisor on the dashboard). */
export interface HorizonRunHooks {
  /** At the run's start, before the first job. */
  start?: () => Promise<void>;
  /** At the run's end, after the last record was written. */
  stop?: () => Promise<void>;
}

/** How a worker's Horizon records are written beside the recorder's own. */
export interface HorizonRecordOptions {
  /**
   * The queue's steps write the records of its own moves and deletes (reserved, released, given
   * back, migrated, completed: a RedisQueue given `horizon`), so this recorder writes only
   * failures (the failing delete's records and the failure's), which follow the queue's delete.
   */
  queueRecords?: boolean;
}

/** Horizon's records as a recorder of a worker's runs; `hooks` start and stop with each run. */
export function horizonWorkerRecorder(
  horizon: HorizonRecorder,
  hooks: HorizonRunHooks = {},
  options: HorizonRecordOptions = {},
): RecorderFactory {
  return async ({ warn }) => {
    try {
      await hooks.start?.();
    } catch (error) {
      warn(`not shown on Horizon's dashboard as a supervisor: ${(error as Error)?.message ?? String(error)}`);
    }
    return new HorizonWorkerRecorder(horizon, warn, hooks, options.queueRecords ?? false);
  };
}

class HorizonWorkerRecorder implements WorkerRecorder {
  /** Writes still on their way, for close(). */
  private readonly inFlight = new Set<Promise<void>>();
  /** A write failed and was said: the next failures are not, until one succeeds again. */
  private failing = false;
  /** The last write handed to write(): the records of one batch share its promise, watched once. */
  private last: Promise<unknown> | undefined;

  constructor(
    private readonly horizon: HorizonRecorder,
    private readonly warn: (reason: string) => void,
    private readonly hooks: HorizonRunHooks,
    /** The queue's steps wrote (and write) the records of its moves and completions: see HorizonRecordOptions. */
    private readonly queueRecords: boolean,
  ) {
    // The queue's deletes write their records beside them: a failure of those is said as ours.
    if (queueRecords) horizon.onRecordError((error) => this.failed(error));
  }

  processing(record: JobRecord): void {
    if (this.queueRecords) return;
    const job = record.job;
    // Not timed by the recorder: the worker gives each job's runtime, from when it took it up.
    this.write(this.horizon.reserved(job.queue, reservedOf(job), idOf(record), { timed: false }));
  }

  outcome(record: JobRecord, event: WorkerEvent, cause?: unknown): void {
    const job = record.job;
    const queue = job.queue;
    // A failure is recorded whatever event ends the job (a timeout's too): deleted as failing, then failed, as Laravel's fail() does.
    if (record.failedRecorded) {
      const reserved = reservedOf(job);
      const facts = factsOf(record);
      // Both made now, in this order: they go out together, the delete first.
      const exception = exceptionText(cause ?? event.error ?? 'the job failed');
      this.write(this.horizon.deleted(queue, reserved, { failing: true, facts, runtimeMs: runtimeOf(record) }));
      this.write(this.horizon.failed(queue, reserved, exception, { facts }));
      return;
    }
    switch (event.event) {
      case 'processed':
      case 'deleted': {
        // Only a job the queue removed is complete: one left reserved at a stop's deadline comes
        // back. A queue that records writes the completion in its delete's step.
        if (!record.deleted || this.queueRecords) return;
        const runtimeMs = runtimeOf(record);
        this.write(this.horizon.deleted(queue, reservedOf(job), { facts: factsOf(record), runtimeMs }));
        return;
      }
      case 'released':
        if (!this.queueRecords) this.write(this.horizon.released(queue, reservedOf(job), idOf(record)));
        return;
      case 'given-back':
        // Back on the queue as it was pushed, its attempt not spent.
        if (!this.queueRecords) this.write(this.horizon.released(queue, job.raw, idOf(record)));
        return;
      default:
        // Timed out (or its end not reached): still reserved, it comes back through a migration.
        return;
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.inFlight);
    try {
      await this.hooks.stop?.();
    } catch (error) {
      this.warn(`left on Horizon's dashboard until its record expires: ${(error as Error)?.message ?? String(error)}`);
    }
  }

  /** A record not written: said once, until a write succeeds again. */
  private failed(error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.warn(`Horizon's record of a job was not written: ${(error as Error)?.message ?? String(error)}`);
  }

  /** A write on its way: a failure is said once (until one succeeds again), never the job's. */
  private write(sent: Promise<unknown>): void {
    if (sent === this.last) return;
    this.last = sent;
    const written = sent.then(
      () => {
        this.failing = false;
      },
      (error: unknown) => this.failed(error),
    );
    this.inFlight.add(written);
    void written.finally(() => this.inFlight.delete(written));
  }
}

/** A Horizon record's id: Horizon's JobPayload::id() of the job. */
function idOf(record: JobRecord): string {
  return horizonIdOf(record.job);
}

/**
 * The payload as reserved (attempts counted), as Horizon's events carry it: the bytes Redis sent,
 * handed back as they are (no round of UTF-8 decoding and encoding per record); the pushed one
 * for a driver that keeps no such copy.
 */
function reservedOf(job: JobRecord['job']): string | Buffer {
  return job instanceof RedisJob ? job.reservedBytes : job.raw;
}

/** What Horizon reads from the job's payload (see horizonFactsOfJob). */
function factsOf(record: JobRecord): HorizonFacts {
  return horizonFactsOfJob(record.job, record.payload?.envelope);
}

function runtimeOf(record: JobRecord): number {
  return performance.now() - record.startedAt;
}

/** What a worker pushes itself: a chain's next link. */
interface PushingQueue {
  readonly defaultQueue: string;
  pushRaw(payload: string, queue?: string): Promise<string | void>;
  laterRaw(delay: number | Date, payload: string, queue?: string): Promise<string | void>;
}

/** What a worker has for the links it pushes: its handlers (their `tags`) and the key to read an encrypted link with. */
export interface PushOptions {
  /** The worker's handlers: a link's class with a handler defining `tags` is tagged by it, as Horizon calls the job's tags(). */
  handlers?: HandlerMap;
  encrypter?: Encrypter;
}

/**
 * The pushes a worker makes itself (a chain's next link) as Horizon's queue makes them: laid out
 * by `prepare` and recorded pending once pushed. Its tags are Horizon's Tags::for of the link:
 * its handler's `tags(job)` when the worker has a handler for its class that defines one (as
 * `dispatch` takes a handler's or option's `tags`), else the tags of the models it holds. A
 * payload `prepare` cannot read is pushed as it is; a record not written leaves the push as it
 * was. A `tags` function that throws, or gives what is not a list of strings, fails the push, as
 * a throwing tags() fails the push in Horizon's queue.
 */
export function recordPushes(queue: PushingQueue, horizon: HorizonRecorder, options: PushOptions = {}): void {
  const push = queue.pushRaw.bind(queue);
  const later = queue.laterRaw.bind(queue);
  const prepared = async (payload: string): Promise<string> => {
    const command = commandIn(payload, options.encrypter);
    const tags = command && options.handlers ? await handlerTags(options.handlers, command) : undefined;
    try {
      return horizon.prepare(payload, { ...(command ? { command } : {}), ...(tags ? { tags } : {}) });
    } catch {
      return payload;
    }
  };
  const recorded = (payload: string, name: string | undefined) =>
    horizon.pushed(name ?? queue.defaultQueue, payload).catch(() => undefined);
  queue.pushRaw = async (payload, name) => {
    const laidOut = await prepared(payload);
    const id = await push(laidOut, name);
    await recorded(laidOut, name);
    return id;
  };
  queue.laterRaw = async (delay, payload, name) => {
    const laidOut = await prepared(payload);
    const id = await later(delay, laidOut, name);
    await recorded(laidOut, name);
    return id;
  };
}

/** The link's command, decrypted when it is encrypted and the worker has the key; undefined when it cannot be read. */
function commandIn(payload: string, encrypter: Encrypter | undefined): PhpObject | undefined {
  try {
    const decoded = decodePayload(payload);
    if (decoded.encrypted && !encrypter) return undefined;
    const command = commandOf(decoded, encrypter).command;
    const object = command === undefined ? undefined : deref(command);
    return object instanceof PhpObject ? object : undefined;
  } catch {
    return undefined;
  }
}

/** The tags the worker's handler for the command's class gives (its `tags(job)`), or undefined when it has none to give. */
async function handlerTags(handlers: HandlerMap, command: PhpObject): Promise<string[] | undefined> {
  const tags = ownHandler(handlers, command.className)?.tags;
  if (!tags) return undefined;
  const given = await tags({ name: command.className, command: toJS(command) as Record<string, unknown> });
  if (!Array.isArray(given) || !given.every((tag) => typeof tag === 'string'))
    throw new TypeError(`the tags function of ${command.className}'s handler gave ${JSON.stringify(given)}, not a list of strings`);
  return given;
}
