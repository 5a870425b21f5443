/**
 * `runJob(handlers, payload, options)`: one payload run by the worker's own code — the same
 * Worker and JobRunner `lqb work` runs (decoding, APP_KEY's encryption, the handler's methods,
 * middleware, the failed() hook, the chain's next link, the batch's counters) — over a queue
 * holding that one job in memory, with no Redis and no database server: unique locks in memory,
 * job_batches in an in-memory SQLite. It says what became of the job, what was pushed meanwhile,
 * and the other effects a test asserts on, as Laravel 11's withFakeQueueInteractions() does.
 */
import { appEncrypter } from '../connect/appKey.js';
import { envFileOf, resolveFromEnv } from '../connect/settings.js';
import { databaseConfig, openDatabase } from '../database/index.js';
import { decodePayload, type DecodedPayload, type JsonObject } from '../laravel/index.js';
import { readEnvelope } from '../laravel/payload.js';
import type { DeleteEnding, Queue, QueuedJob, ReservedFields, ReservedJob } from '../queue/contract.js';
import { rawFields } from '../queue/fields.js';
import { readShapes } from '../shapes/read.js';
import type { ShapesFile } from '../shapes/shape.js';
import { DatabaseBatchRepository } from '../worker/BatchRepository.js';
import type { HandlerJob, HandlerMap } from '../worker/handlers.js';
import { Worker } from '../worker/Worker.js';
import { hiddenUniqueContext } from '../worker/locks/uniqueContext.js';
import type { WorkerEvent } from '../worker/types.js';
import { describePushed, MemoryLocks, RecordingQueue, type FakeDispatch } from './fakeQueue.js';

/** What became of the job, in the words of Laravel's worker events. */
export type JobOutcome = 'completed' | 'released' | 'failed' | 'timed-out' | 'deleted' | 'given-back';

export interface RunJobOptions {
  /** A Laravel app's .env (APP_KEY, the queue name), read as connect() reads it. */
  env?: string;
  /** APP_KEY (base64:…), for a ShouldBeEncrypted command; else the .env's. */
  key?: string;
  cipher?: string;
  /** The app's class shapes (`lqb shapes`), or the file holding them. */
  shapes?: ShapesFile | string;
  /** The Laravel version the payload was made by, when the payload cannot show it. */
  laravel?: string;
  /** The queue the job was reserved from (the payload's own is not written in it); else the connection's default. */
  queue?: string;
  /** This attempt's number, as the queue counts it once reserved (1: the first run). */
  attempts?: number;
  /** The worker's --tries, --timeout (seconds; 0 no limit), --backoff as `lqb work` takes them. */
  tries?: number;
  timeout?: number;
  backoff?: number[];
  /** The app's default cache store (`cache.default`), where its unique locks are: for a payload that does not name one. */
  cacheStore?: string;
  /** Share on (the default): a job with no handler is given back for PHP; off: it fails. */
  share?: boolean;
  /**
   * The job's batch, when the payload is in one: its job_batches row before the run (the
   * counts of a batch of one job, pending, unless given).
   */
  batch?: Partial<BatchCounts>;
  /** UNIX seconds, for a payload's retryUntil and a release's due time. */
  now?: () => number;
}

/** A batch's counters, as job_batches holds them. */
export interface BatchCounts {
  totalJobs: number;
  pendingJobs: number;
  failedJobs: number;
  failedJobIds: string[];
  cancelledAt: number | null;
  finishedAt: number | null;
}

export interface RunJobResult {
  outcome: JobOutcome;
  /** Seconds before a released (or given back) job runs again. */
  delay?: number;
  /** The failure: its message, and the exception as failed_jobs would hold it. */
  error?: { message: string; exception: string };
  /** What was pushed while the job ran (its chain's next link included), as fakeQueue records it. */
  dispatched: FakeDispatch[];
  /** Whether the handler's failed() hook ran. */
  failedHookRan: boolean;
  /** The unique locks released (their keys), as Laravel's CallQueuedHandler releases a ShouldBeUnique job's. */
  locksReleased: string[];
  /** The batch's counters after the run, when the payload is in a batch. */
  batch?: BatchCounts;
  /** Every event the worker said, in order. */
  events: WorkerEvent[];
}

/**
 * Runs `payload` (the JSON a queue holds) with `handlers` (a handlers module's map) as one
 * reserve of `lqb work` would, and says what happened.
 */
export async function runJob(handlers: HandlerMap, payload: string, options: RunJobOptions = {}): Promise<RunJobResult> {
  const fromFile = envFileOf(options);
  const settings = resolveFromEnv(options, fromFile);
  const encrypter = appEncrypter(settings, { key: 'key', cipher: 'cipher' });
  const shapes = typeof options.shapes === 'string' ? readShapes(options.shapes) : options.shapes;
  const queueName = options.queue ?? settings.defaultQueue;
  const queue = new OneJobQueue(queueName, payload, options.attempts ?? 1);
  // The locks are kept in memory, standing for the store the payload names (11.39+), else the one given.
  const decoded = decodedOrUndefined(payload);
  const locks = new MemoryLocks((decoded && hiddenUniqueContext(decoded).store) ?? options.cacheStore ?? 'redis');
  const released: string[] = [];
  locks.onRelease = (key) => released.push(key);
  const batchId = decoded?.batchId ?? null;
  const batches = batchId === null ? undefined : await batchStore(batchId, options.batch ?? {});
  const seen: Watched = { deleted: false, failedHookRan: false };
  const events: WorkerEvent[] = [];
  let failure: RunJobResult['error'];
  try {
    const worker = new Worker(
      queue,
      watchHandlers(handlers, seen),
      {
        queues: [queueName],
        once: true,
        concurrency: 1,
        sleep: 0,
        memory: 0,
        handleSignals: false,
        ...(options.tries !== undefined ? { tries: options.tries } : {}),
        ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
        ...(options.backoff !== undefined ? { backoff: options.backoff } : {}),
        ...(options.share !== undefined ? { share: options.share } : {}),
      },
      {
        failer: false,
        onFailed: (job) => {
          failure = { message: job.exception.split('\n')[0] ?? '', exception: job.exception };
        },
        locks,
        ...(batches ? { batches: batches.repository } : {}),
        ...(encrypter ? { encrypter } : {}),
        ...(shapes ? { shapes } : {}),
        ...(options.laravel !== undefined ? { laravel: options.laravel, laravelGiven: true } : {}),
        ...(options.now ? { now: options.now } : {}),
        log: (event) => void events.push(event),
      },
    );
    await worker.run();
    const ended = queue.ended;
    const outcome = outcomeOf(events, ended, seen);
    return {
      outcome,
      ...(ended?.delay !== undefined ? { delay: ended.delay } : {}),
      ...(failure ? { error: failure } : {}),
      dispatched: queue.pushed.map(describePushed),
      failedHookRan: seen.failedHookRan,
      locksReleased: released,
      ...(batches ? { batch: await batches.counts() } : {}),
      events,
    };
  } finally {
    await batches?.close();
  }
}

/** The job's end, from the worker's events (a time-out first: it is what failed or released the job) and the queue's record of it. */
function outcomeOf(events: WorkerEvent[], ended: Ended | undefined, seen: Watched): JobOutcome {
  const said = new Set(events.map((event) => event.event));
  if (said.has('timed-out')) return 'timed-out';
  if (said.has('failed')) return 'failed';
  if (ended?.how === 'given-back' || said.has('given-back')) return 'given-back';
  if (ended?.how === 'released' || said.has('released')) return 'released';
  if (seen.deleted || said.has('deleted')) return 'deleted';
  return 'completed';
}

/** What the handlers did that the worker's events do not tell apart: a delete() of their own, a failed() hook run. */
interface Watched {
  deleted: boolean;
  failedHookRan: boolean;
}

/**
 * The handlers as given, each watched: its job's delete() noted (the worker says "processed" for
 * a job its handler deleted, as Laravel's does), and its failed() hook noted when it runs.
 */
function watchHandlers(handlers: HandlerMap, seen: Watched): HandlerMap {
  const watched: HandlerMap = {};
  for (const [key, handler] of Object.entries(handlers)) {
    if (typeof handler !== 'function') {
      watched[key] = handler;
      continue;
    }
    const job = (given: HandlerJob): HandlerJob =>
      new Proxy(given, {
        // Read off the job itself (its getters reach private fields), not through the proxy.
        get(target, property) {
          if (property !== 'delete') return Reflect.get(target, property, target) as unknown;
          return () => {
            seen.deleted = true;
            return target.delete();
          };
        },
      });
    const failed = handler.failed;
    // The function keeps its methods (uniqueId, backoff, …) beside its call.
    watched[key] = Object.assign((given: HandlerJob) => handler(job(given)), handler, {
      ...(typeof failed === 'function'
        ? {
            failed: (...args: Parameters<typeof failed>) => {
              seen.failedHookRan = true;
              return failed.apply(handler, args);
            },
          }
        : {}),
    });
  }
  return watched;
}

/** The payload decoded, once, for what runJob reads off it before the worker does (its lock's store, its batch); undefined when it does not decode (the worker says why). */
function decodedOrUndefined(payload: string): DecodedPayload | undefined {
  try {
    return decodePayload(payload);
  } catch {
    return undefined;
  }
}

/** Laravel's job_batches table as its migration makes it on SQLite (`php artisan queue:batches-table`). */
export const JOB_BATCHES_TABLE =
  'create table job_batches (id varchar not null primary key, name varchar not null, total_jobs integer not null, pending_jobs integer not null, failed_jobs integer not null, failed_job_ids text not null, options text, cancelled_at integer, created_at integer not null, finished_at integer)';

/** Laravel's job_batches table, as its migration makes it, in an in-memory SQLite holding the batch's row. */
async function batchStore(id: string, given: Partial<BatchCounts>) {
  const db = openDatabase(databaseConfig(':memory:'));
  await db.query(JOB_BATCHES_TABLE);
  const now = Math.floor(Date.now() / 1000);
  await db.query(
    'insert into job_batches (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, cancelled_at, created_at, finished_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [
      id,
      '',
      given.totalJobs ?? 1,
      given.pendingJobs ?? given.totalJobs ?? 1,
      given.failedJobs ?? 0,
      JSON.stringify(given.failedJobIds ?? []),
      'a:0:{}',
      given.cancelledAt ?? null,
      now,
      given.finishedAt ?? null,
    ],
  );
  return {
    repository: new DatabaseBatchRepository(db),
    counts: async (): Promise<BatchCounts> => {
      const [row] = (await db.query<Record<string, unknown>>('select * from job_batches where id = ?', [id])).rows;
      const number = (value: unknown) => (value === null || value === undefined ? null : Number(value));
      return {
        totalJobs: Number(row?.total_jobs),
        pendingJobs: Number(row?.pending_jobs),
        failedJobs: Number(row?.failed_jobs),
        failedJobIds: JSON.parse(String(row?.failed_job_ids ?? '[]')) as string[],
        cancelledAt: number(row?.cancelled_at),
        finishedAt: number(row?.finished_at),
      };
    },
    close: () => db.close(),
  };
}

/** How the job left the queue: deleted (done or failed), released, or given back; with its delay. */
interface Ended {
  how: 'deleted' | 'released' | 'given-back';
  delay?: number;
  failing?: boolean;
}

/** The job as the queue handed it over: its payload, its attempt counted, its end recorded. */
class OneJob implements ReservedJob {
  #decoded: DecodedPayload | undefined;
  #envelope: JsonObject | null | undefined;
  #fields: ReservedFields | undefined;

  constructor(
    private readonly owner: OneJobQueue,
    readonly queue: string,
    readonly raw: string,
    private readonly attempt: number,
  ) {}

  get id(): string {
    const id = this.fields.id;
    return typeof id === 'string' || typeof id === 'number' ? String(id) : '1';
  }

  get uuid(): string | undefined {
    const uuid = this.fields.uuid;
    return typeof uuid === 'string' ? uuid : undefined;
  }

  get payload(): DecodedPayload {
    return (this.#decoded ??= decodePayload(this.raw, this.envelope));
  }

  get envelope(): JsonObject | undefined {
    if (this.#envelope === undefined) this.#envelope = this.#decoded?.envelope ?? readEnvelope(this.raw);
    return this.#envelope ?? undefined;
  }

  /** The envelope's fields, the attempt as the queue counts it once reserved. */
  get fields(): ReservedFields {
    return (this.#fields ??= { ...rawFields(this.raw), attempts: this.attempt });
  }

  get firstAttempt(): boolean {
    return this.attempt <= 1;
  }

  attempts(): number {
    return this.attempt;
  }

  unreadable(): string | undefined {
    return undefined;
  }

  async delete(ending?: DeleteEnding): Promise<void> {
    this.owner.end({ how: 'deleted', ...(ending?.failing ? { failing: true } : {}) });
  }

  async release(delay = 0): Promise<void> {
    this.owner.end({ how: 'released', delay });
  }

  async giveBack(delay = 0): Promise<void> {
    this.owner.end({ how: 'given-back', delay });
  }
}

/** A queue that hands out one job, once, and records what is pushed to it (as fakeQueue's does) and how the job ended. */
class OneJobQueue extends RecordingQueue implements Queue<OneJob> {
  ended: Ended | undefined;
  #job: OneJob | undefined;

  constructor(defaultQueue: string, payload: string, attempt: number) {
    super(defaultQueue);
    this.#job = new OneJob(this, defaultQueue, payload, attempt);
  }

  end(how: Ended): void {
    // The first end stands: a failure's delete comes after the release it may follow.
    this.ended ??= how;
  }

  async pop(): Promise<OneJob | null> {
    const job = this.#job;
    this.#job = undefined;
    return job ?? null;
  }

  async popMany(_queue: string | undefined, count: number): Promise<OneJob[]> {
    if (count < 1) return [];
    const job = await this.pop();
    return job ? [job] : [];
  }

  async renew(): Promise<void> {}
  async migrate(): Promise<void> {}
  async size(): Promise<number> {
    return this.#job ? 1 : 0;
  }
  readySize(): Promise<number> {
    return this.size();
  }
  async delayedSize(): Promise<number> {
    return 0;
  }
  async reservedSize(): Promise<number> {
    return 0;
  }
  async countByClass(): Promise<[]> {
    return [];
  }
  async find(): Promise<QueuedJob | undefined> {
    return undefined;
  }
  async clear(): Promise<number> {
    return 0;
  }
  availableAt(delay: number | Date): number {
    return typeof delay === 'number' ? Math.floor(Date.now() / 1000) + delay : Math.floor(delay.getTime() / 1000);
  }
  interruptWait(): void {}
  async close(): Promise<void> {}
}
