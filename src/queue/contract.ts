/**
 * The queue contract: what the worker, the producer and the CLI ask of a queue, whatever keeps it.
 *
 * Laravel splits the same way: `Illuminate\Contracts\Queue\Queue` (push, later, bulk, pop, size)
 * and `Illuminate\Contracts\Queue\Job` (delete, release, attempts), with `RedisQueue` and
 * `DatabaseQueue` behind them. `RedisQueue` (src/redis/) and `DatabaseQueue` (src/database/)
 * implement it. The worker knows this file only, never a driver's keys or tables.
 */
import type { DecodedPayload, JsonObject } from '../laravel/index.js';
import type { TakeShares } from './take.js';
import type { ClassCount } from './byClass.js';

/** Which of Laravel's queue drivers keeps the jobs: it decides the envelope a producer writes. */
export type QueueDriver = 'redis' | 'database';

/**
 * Which jobs a worker sharing its queues with PHP's takes: those whose class it handles (the
 * envelope's `displayName`, else its `commandName`, is one of `classes`). The reserve looks past
 * the others and leaves them where they are: never popped, never pushed back.
 */
export interface TakeOnly {
  readonly classes: readonly string[];
  /** A canary share of some of those classes (`--take`): of each, only the jobs whose bucket is below its percent (take.ts). */
  readonly shares?: TakeShares;
}

/** A job a queue holds, as `find` found it. */
export interface QueuedJob {
  /** Waiting to be reserved, waiting for its delay, or reserved by a worker. */
  state: 'ready' | 'delayed' | 'reserved';
  queue: string;
  /** The payload as the queue holds it (on Redis a reserved one has its attempts counted). */
  payload: string;
  /** UNIX seconds: when a delayed job is due, or when a reserved one's reservation runs out. */
  until?: number;
  /** The driver's own id for it (the database's row id); on Redis the payload's id says it. */
  id?: string;
  /** Attempts so far, where the queue keeps them apart from the payload (the database's column). */
  attempts?: number;
}

/** The envelope's fields as the queue reserved them, read without decoding the command. */
export interface ReservedFields {
  attempts?: unknown;
  id?: unknown;
  uuid?: unknown;
  displayName?: unknown;
  maxTries?: unknown;
  retryUntil?: unknown;
  timeoutAt?: unknown;
  [key: string]: unknown;
}

/** One reserved job, as Laravel's `Job` contract: read it, then delete, release or give it back. */
export interface ReservedJob {
  /** The queue's name as Laravel names it (`default`, not `queues:default`). */
  readonly queue: string;
  /** The payload as pushed: what a failed-job record stores and what a retry pushes again. */
  readonly raw: string;
  /** The job's id: the payload's `id` on Redis, the row's id on the database. */
  readonly id: string;
  readonly uuid: string | undefined;
  /** The decoded envelope and command; throws a PayloadError for a payload that is not one. */
  readonly payload: DecodedPayload;
  /** The envelope as pushed, its command left a string; undefined when it is not a JSON object. */
  readonly envelope: JsonObject | undefined;
  /** The envelope's fields, read so that a job whose command cannot be decoded still has them. */
  readonly fields: ReservedFields;
  /** True when this is surely the job's first attempt (a retried job is judged before it is read). */
  readonly firstAttempt: boolean;
  /** This attempt's number, counted as the driver's Laravel job counts it. */
  attempts(): number;
  /**
   * Why the queue could not reserve the job as Laravel's own pop would (so Laravel fails it), or
   * undefined when it could. Redis: a payload its cjson cannot read; the database: never.
   */
  unreadable(): string | undefined;
  /** Removes the job for good (it ran, or it failed); `ending` says which, as Laravel's job knows it. */
  delete(ending?: DeleteEnding): Promise<void>;
  /**
   * Puts the job back to run again after `delay` seconds, this attempt spent. Resolves false
   * when the queue found the reservation gone and put nothing back: it ran out while the
   * queue did not answer, and the job is on the queue again already (a second copy would run
   * it once too often). A driver that never finds it so may resolve nothing.
   */
  release(delay?: number): Promise<boolean | void>;
  /** Undoes the reservation without spending the attempt: for a job left to PHP's workers. False as release's. */
  giveBack(delay?: number): Promise<boolean | void>;
  /**
   * Where the reservation is held, for a thread that renews it while the event loop is blocked
   * (see Queue.threadRenewal); undefined where the driver's reservations are not renewed so.
   */
  reservation?(): Reservation | undefined;
}

/**
 * How a delete ends the job, as Laravel's Job knows it when it fires JobDeleted (which Horizon's
 * records read): whether it is deleted to be failed (hasFailed(): Job::fail deletes first), and
 * how long it ran. A queue that writes Horizon's completion in its delete step reads these.
 */
export interface DeleteEnding {
  /** Deleted to be failed: no completion is counted (the failure's records follow). */
  failing?: boolean;
  /** How long the job ran, in milliseconds (the worker's timing; 0 when not given). */
  runtimeMs?: number;
}

/** A reservation as a renewal names it: Redis's `:reserved` zset and the member the job is held under. */
export interface Reservation {
  key: string;
  member: Buffer | string;
}

/**
 * What a thread of the worker's own needs to renew reservations while a handler blocks the event
 * loop (worker/watchdog.ts): a client's connection settings and the renew step to run on it.
 * Only Redis gives one today; a driver whose reservations a thread cannot renew gives none.
 */
export interface ThreadRenewal {
  /** retry_after, in seconds: the renewals' horizon, and a third of it their period. */
  retryAfter: number;
  /** The client's options, what a thread can be given of them. */
  connection: Record<string, unknown>;
  /** The client module to require in the thread (the worker's own ioredis). */
  ioredis: string;
  /** The renew step, with and without the allow-oom flag (for servers before Redis 7); KEYS[1] the key, ARGV retry_after and the member. */
  renewLua: { flagged: string; plain: string };
}

/** A client whose connection health() watches: its status, and its `error`, `close` and `ready` events. */
export interface WatchedClient {
  readonly status: string;
  /** What the outage lines call it (a database server: its engine and address); Redis when not said. */
  readonly name?: string;
  /** The outage line's cause, where and why, for a client that is not a Redis client. */
  describeError?(error: Error): string;
  on(event: string, listener: (error?: Error) => void): unknown;
  off(event: string, listener: (error?: Error) => void): unknown;
}

/**
 * A queue connection, as Laravel's `Queue` contract with what a long-running worker also needs
 * (renewals, several jobs per reserve, a wait it can interrupt) and what the CLI reads.
 */
export interface Queue<Job extends ReservedJob = ReservedJob> {
  readonly driver: QueueDriver;
  /** The queue used when none is named (Laravel's `queue` setting). */
  readonly defaultQueue: string;
  /** Seconds a reservation lasts before another worker may take the job; null: never. */
  readonly retryAfter: number | null;

  /** Resolves to the job's id where the queue makes one (the database's row id, as Laravel's pushRaw returns it). */
  pushRaw(payload: string, queue?: string): Promise<string | void>;
  laterRaw(delay: number | Date, payload: string, queue?: string): Promise<string | void>;
  bulkRaw(payloads: string[], queue?: string): Promise<void>;

  /** Reserves the next job, or null when there is none (after the driver's own wait, if any). */
  pop(queue?: string): Promise<Job | null>;
  /**
   * Reserves up to `count` jobs, each as one of Laravel's pops would. With `take` (a worker that
   * shares its queues with PHP's), only jobs of the classes it names, every other job left where
   * it is, untouched; a driver that cannot choose so takes the head, as Laravel does.
   */
  popMany(queue: string | undefined, count: number, take?: TakeOnly): Promise<Job[]>;
  /** Makes the reservations of jobs still running last `retryAfter` seconds from now. */
  renew(jobs: Iterable<Job>): Promise<void>;
  /** Moves due delayed jobs and expired reservations back where a pop finds them, where the driver has such a step. */
  migrate(queue?: string): Promise<void>;

  /** Jobs a queue holds: ready, delayed and reserved. */
  size(queue?: string): Promise<number>;
  readySize(queue?: string): Promise<number>;
  delayedSize(queue?: string): Promise<number>;
  reservedSize(queue?: string): Promise<number>;
  /**
   * The queue's jobs counted per class (the envelope's displayName) and state, read in short pages
   * without taking anything; with `takes`, each class marked taken or not by a worker with those
   * classes (TakeOnly's). Not a snapshot: jobs moving while it reads may be counted in two states.
   */
  countByClass(queue?: string, takes?: ReadonlySet<string>): Promise<ClassCount[]>;
  /** The job with this id or uuid, if the queue holds it. */
  find(idOrUuid: string, queue?: string): Promise<QueuedJob | undefined>;
  /** Deletes every job of a queue, reserved ones too; returns how many went. */
  clear(queue?: string): Promise<number>;

  /** UNIX seconds `delay` from now, as Laravel's availableAt. */
  availableAt(delay: number | Date): number;
  /** Ends a wait for jobs now, so that a worker told to stop does not sit it out. */
  interruptWait(): void;
  /** Lets go of what the queue opened itself; the clients it was given stay the caller's. */
  close(): Promise<void>;

  /** The clients whose connection the worker watches for health() and its outage lines; none where there are none to watch. */
  readonly clients?: readonly WatchedClient[];
  /** What a watchdog thread needs to renew reservations while the event loop is blocked; undefined: the driver declines. */
  threadRenewal?(): ThreadRenewal | undefined;
}
