/**
 * The library's one way in: `connect({ env })` reads a Laravel app's `.env` as `lqb --env` does
 * and gives a LaravelQueue that dispatches jobs Laravel's workers run, makes workers that run
 * Laravel's jobs with Node handlers, and closes everything it opened.
 */
import { dirname, resolve } from 'node:path';
import {
  Encrypter,
  LARAVEL_PROFILES,
  buildDate,
  buildJob,
  buildPayload,
  type BuiltPayload,
  type JsonObject,
  type LaravelProfile,
} from '../laravel/index.js';
import { PhpArray, PhpFloat, PhpObject, serialize, toJS, type PhpValue } from '../php/index.js';
import { DatabaseBatchRepository } from '../worker/BatchRepository.js';
import { orderedUuid } from '../horizon/payload.js';
import { RedisQueue, outcomeUnknown, readyAgain, type RedisClient } from '../redis/index.js';
import { buildShapedPayload, findShape, profileOfShapes, shapedCommand, translatedDisplayName } from '../shapes/command.js';
import { phpString } from '../php/string.js';
import { readShapes } from '../shapes/read.js';
import type { ShapesFile } from '../shapes/shape.js';
import { QueueCache, type WorkerCache } from '../worker/cache.js';
import { DatabaseQueueCache } from '../worker/DatabaseQueueCache.js';
import { DatabaseQueue, databaseConfig } from '../database/index.js';
import type { ClassCount, Queue, QueueDriver } from '../queue/index.js';
import { DatabaseUuidFailedJobProvider, type FailedJobProvider } from '../worker/FailedJobProvider.js';
import { takenClasses, type HandlerMap, type JobMethods, type MethodJob } from '../worker/handlers.js';
import { DatabaseLockStore, parseVersion, planUniqueLock, uniqueLockFields, type UniqueLockStore } from '../worker/locks/index.js';
import { Worker, WorkerUsageError, type FailedJobInfo, type WorkerEvent, type WorkerLogger } from '../worker/index.js';
import { workerOptionsProblem, type WorkerOptions } from '../worker/WorkerOptions.js';
import { recordOptionsProblem, type RecordOptions } from '../record/index.js';
import { redactLine, redactSecrets, redactUrl } from './redact.js';
import { serviceLogger } from './serviceLogger.js';
import { appShapes, isAppAtHand } from '../shapes/appShapes.js';
import { firstUnshaped, unshapedLine } from '../shapes/unshaped.js';
import { RedisUnavailable, openBoundedClient, whereRedisIs } from './clients.js';
import { appEncrypter } from './appKey.js';
import { buildWorker, openLockStore, type Bookkeeping } from './buildWorker.js';
import { cacheStoreOf, openDatabaseCache, openDatabaseQueue } from './drivers.js';
import { DispatchTelemetry, type SentJob } from '../telemetry/dispatch.js';
import { HorizonRecorder } from '../horizon/HorizonRecorder.js';
import type { HorizonFacts } from '../horizon/payload.js';
import { horizonClusterProblem, resolveHorizon, type HorizonOptions, type ResolvedHorizon } from './horizon.js';
import type { TelemetryOptions } from '../telemetry/options.js';
import {
  ConnectionSettingsError,
  envCacheStore,
  envFileOf,
  appLaravelVersion,
  laravelOnlyGiven,
  resolveFromEnv,
  unreachableLockStore,
  type ConnectionOptions,
  type ConnectionSettings,
  type LaravelEnv,
} from './settings.js';

export interface ConnectOptions extends ConnectionOptions {
  /** Milliseconds to wait for Redis before `connect` rejects (5000). */
  connectTimeout?: number;
  /** Milliseconds a dispatch or size waits for Redis's answer before it rejects (10000). */
  commandTimeout?: number;
  /** Where unique jobs' locks live: Laravel's default cache store (else CACHE_DRIVER / CACHE_STORE, else redis). */
  cacheStore?: 'redis' | 'database';
  /** The database store's database (a URL, as failedDb takes), when it is not the failed-jobs one. */
  lockDb?: string;
  /** The database store's lock table (Laravel's `cache.stores.database.lock_table`, cache_locks). */
  lockTable?: string;
  /** job_batches' database (a URL, as failedDb takes), when it is not the failed-jobs one. */
  batchDb?: string;
  /** The batches table (Laravel's `queue.batching.table`, job_batches). */
  batchTable?: string;
  /**
   * The app's class shapes (`lqb shapes`), or the file holding them: used by every dispatch and
   * worker unless they give their own. Left out with `env` beside an app at hand (its vendor/ and
   * app/, PHP on PATH), they are read from it (cached until a class file changes), and said.
   */
  shapes?: ShapesFile | string;
  /** Refuse a dispatch of a class by name without shapes (which alone write protected and private properties as PHP declares them). */
  strictShapes?: boolean;
  /**
   * Where connection trouble and the workers' lines are said (pino-compatible); workers use it
   * unless given their own. By default a service owner's lines on standard error (serviceLogger:
   * the start line, failures, outages, why a worker stopped; no line per job); `false` says nothing.
   */
  logger?: WorkerLogger | false;
  /**
   * OpenTelemetry for dispatch and the workers: the global providers when `@opentelemetry/api`
   * is installed, or the providers given here; `false` for none.
   */
  telemetry?: TelemetryOptions | false;
  /**
   * Laravel Horizon's records (docs/horizon.md): every dispatch laid out and recorded as
   * Horizon's queue does, every worker's jobs recorded as Horizon's workers do, each worker shown
   * as a supervisor. `true`, an object of Horizon's settings, or `false`; left out, on when the
   * app beside `env` has laravel/horizon 5 installed.
   */
  horizon?: boolean | HorizonOptions;
}

export interface DispatchOptions {
  /** The queue (onQueue()); else the class's declared one (with shapes), else the connection's. */
  queue?: string;
  /** Seconds from now, or a moment (delay()): the job waits in the delayed set until then. */
  delay?: number | Date;
  /** The envelope's maxTries ($tries). */
  tries?: number;
  /** Seconds between retries: one, or one per attempt ($backoff); or a function of the job, for a backoff() method. */
  backoff?: number | number[] | NonNullable<JobMethods['backoff']>;
  /** When the job stops being retried ($retryUntil): a Date or UNIX seconds, or a function of the job, for a retryUntil() method. */
  retryUntil?: Date | number | NonNullable<JobMethods['retryUntil']>;
  /** Horizon's tags, or a function of the job for a tags() method (accepted for Horizon's records; the envelope Laravel writes without Horizon has none). */
  tags?: string[] | NonNullable<JobMethods['tags']>;
  /** The envelope's displayName, or a function of the job, for a displayName() method. */
  displayName?: string | NonNullable<JobMethods['displayName']>;
  /** Seconds a worker lets it run ($timeout). */
  timeout?: number;
  /** The app's shapes: each property written as the class declares it, ShouldBeUnique's lock taken, ShouldBeEncrypted's command encrypted. */
  shapes?: ShapesFile | string;
  /** The uniqueId() a ShouldBeUnique class computes in PHP, when `lqb shapes` could not translate it: the id, or a function of the job. */
  uniqueId?: string | NonNullable<JobMethods['uniqueId']>;
  /** The Laravel version whose layout to write (else the shapes', else the connection's: the app's own from vendor/, else 8). */
  laravel?: string;
  /** Told of a class's PHP methods Node cannot run (backoff(), retryUntil()), whose results the payload goes without, with the line the logger would warn; else the logger warns. */
  onNotRun?: (className: string, methods: string[], line: string) => void;
}

/** A job found by `find`: where it is, and what its envelope says. */
export interface FoundJob {
  /** Waiting, waiting for its delay, reserved by a worker (running), or in failed_jobs. */
  state: 'ready' | 'delayed' | 'reserved' | 'failed';
  queue: string;
  id: string;
  uuid: string | null;
  /** The envelope's displayName. */
  name: string;
  /** The envelope's attempts: attempts made, a reserved job's current one included. */
  attempts: number;
  /** When a delayed job is due, or when a reserved job's reservation runs out (an invalid Date past what a Date holds, the year 275760). */
  until?: Date;
  /** The same moment in UNIX seconds, as Redis scores it: whatever the year. */
  untilSeconds?: number;
  /** A failed job's failed_at ("Y-m-d H:i:s", as Laravel stores it) and exception. */
  failedAt?: string;
  exception?: string;
  /** The payload as Redis or failed_jobs holds it. */
  payload: string;
}

/** The jobs an untyped connection dispatches: any class, any properties. */
export interface UntypedJobs {
  [className: string]: { command: Record<string, unknown> };
}

/**
 * The classes `dispatch` takes on a connection typed by the `Jobs` interface `lqb shapes --types`
 * writes (`connect<Jobs>()`): the job classes, not the listeners, notifications or mailables
 * (which the app sends as events, notifications and mail).
 */
export type DispatchName<Jobs> = {
  [Name in keyof Jobs]: Jobs[Name] extends { args: unknown } ? never : Jobs[Name] extends { command: unknown } ? Name : never;
}[keyof Jobs] &
  string;

/**
 * The properties `dispatch` takes for a class: its command's, as the shapes declare them. Those
 * `lqb shapes --types` lists as `required` (typed, no default, not nullable: PHP's worker would
 * find them uninitialized) must be given; the others may be left out (the class's default, or
 * null). A types file written before `required` leaves every property optional.
 */
export type DispatchProps<Jobs, Name extends keyof Jobs> = Jobs[Name] extends { command: infer Command }
  ? Partial<Command> & (Jobs[Name] extends { required: infer Required extends keyof Command } ? Pick<Command, Required> : unknown)
  : never;

/** dispatch's arguments after the class: the properties must be given when the class has required ones. */
export type DispatchArguments<Jobs, Job> = Job extends PhpObject
  ? [props?: Record<string, never>, options?: DispatchOptions]
  : Job extends keyof Jobs
    ? Jobs[Job] extends { required: infer Required }
      ? [Required] extends [never]
        ? [props?: DispatchProps<Jobs, Job>, options?: DispatchOptions]
        : [props: DispatchProps<Jobs, Job>, options?: DispatchOptions]
      : [props?: DispatchProps<Jobs, Job>, options?: DispatchOptions]
    : never;

/**
 * A new row's id as Laravel's pushRaw returns it: its query builder's insertGetId casts PDO's
 * numeric text to an int. An id past what a JS number holds exactly stays text.
 */
function rowIdAsLaravelGives(id: string): string | number {
  const number = Number(id);
  return /^\d+$/.test(id) && Number.isSafeInteger(number) ? number : id;
}

/** What dispatch pushed: the envelope's uuid and id, and the queue; or that a unique lock is held. */
export type Dispatched =
  | { uuid: string | null; id: string | number; queue: string; duplicate?: undefined }
  | { uuid: null; id: null; queue: string; duplicate: true; lockKey: string };

type DispatchedJob = SentJob<Dispatched>;

/** One job of bulk() or chain(): its class (or a command built with buildJob), its properties, and dispatch's options. */
export interface JobToPush extends DispatchOptions {
  job: string | PhpObject;
  props?: Record<string, unknown>;
}

/** Where batch() writes a batch's row: job_batches (DatabaseBatchRepository), or a fake's record. */
export type BatchStore = Pick<DatabaseBatchRepository, 'store' | 'incrementTotalJobs' | 'delete' | 'hasTable' | 'where'>;

/**
 * What each dispatch makes afresh, made by a test instead (fakeQueue's `make`), so that a test can
 * compare whole payloads: the uuid, the id (Redis's payloads), the clock (UNIX seconds: 12.11+'s
 * createdAt, a Date delay's seconds, a batch's id) and an encrypted command's IV.
 */
export interface PayloadMakers {
  uuid?: () => string;
  id?: () => string;
  now?: () => number;
  iv?: (length: number) => Uint8Array;
}

/** A Queue given whole (the database's, a fake's), not a Redis client to make one on. */
function isQueue(queue: RedisClient | DatabaseQueue | Queue): queue is DatabaseQueue | Queue {
  return queue instanceof DatabaseQueue || typeof (queue as Partial<Queue>).pushRaw === 'function';
}

/** What #dispatch is told beside dispatch's own options, by chain() and batch(). */
interface InternalDispatch {
  /** Queueable's (and Batchable's) fields the command carries: chained, chainQueue, … */
  fields?: Record<string, unknown>;
  /** The queue the job is pushed onto, whatever its command names (Queue::bulk's $queue). */
  pushTo?: string;
}

/** A batch's settings, as PendingBatch's name(), onQueue() and allowFailures() give them. */
export interface PendingBatchOptions {
  /** The batch's name (job_batches.name), '' by default. */
  name?: string;
  /** The queue every job of the batch is pushed onto (else the connection's). */
  queue?: string;
  /** Whether the batch goes on when a job fails (allowFailures()). */
  allowFailures?: boolean;
}

/** What batch() pushed: the batch's id (job_batches.id) and name, and what dispatch answers of each job. */
export interface DispatchedBatch {
  id: string;
  name: string;
  dispatched: Dispatched[];
}

function batchOptionsProblem(options: PendingBatchOptions): string | undefined {
  const unknown = Object.keys(options).find((name) => !['name', 'queue', 'allowFailures'].includes(name));
  if (unknown !== undefined) return `unknown option ${JSON.stringify(unknown)}; a batch's options are name, queue and allowFailures`;
  if (options.name !== undefined && typeof options.name !== 'string') return `name must be a string, not ${JSON.stringify(options.name)}`;
  if (options.queue !== undefined && typeof options.queue !== 'string')
    return `queue must be a queue name, not ${JSON.stringify(options.queue)}`;
  if (options.allowFailures !== undefined && typeof options.allowFailures !== 'boolean')
    return `allowFailures must be true or false, not ${JSON.stringify(options.allowFailures)}`;
  return undefined;
}

/** A chain's own settings, as PendingChain's onQueue() and delay() give them. */
export interface ChainOptions {
  /** The queue of every link that names none (chainQueue). */
  queue?: string;
  /** Seconds from now, or a moment, for the first job, unless it has a delay of its own. */
  delay?: number | Date;
}

/** A JobToPush taken apart into dispatch's arguments; `where` names it in an error. */
function jobToPush(spec: JobToPush, where: string): { job: string | PhpObject; props: Record<string, unknown>; options: DispatchOptions } {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec))
    throw new TypeError(`${where} must be { job, props, …dispatch options }, not ${JSON.stringify(spec)}`);
  const { job, props, ...options } = spec;
  if (typeof job !== 'string' && !(job instanceof PhpObject))
    throw new TypeError(`${where}.job must be a class name (e.g. App\\Jobs\\SendInvoice) or a built command, not ${JSON.stringify(job)}`);
  return { job, props: props ?? {}, options };
}

/** Whether a caller's value is a list: checked without narrowing a typed list to any[]. */
function isList(value: unknown): boolean {
  return Array.isArray(value);
}

function chainOptionsProblem(options: ChainOptions): string | undefined {
  const unknown = Object.keys(options).find((name) => !['queue', 'delay'].includes(name));
  if (unknown !== undefined) return `unknown option ${JSON.stringify(unknown)}; a chain's options are queue and delay`;
  return queueAndDelayProblem(options);
}

/** What is wrong with where and when a job goes (onQueue(), delay()), as one line, or undefined. */
function queueAndDelayProblem({ queue, delay }: { queue?: unknown; delay?: unknown }): string | undefined {
  if (queue !== undefined && typeof queue !== 'string') return `queue must be a queue name, not ${JSON.stringify(queue)}`;
  if (delay !== undefined && !(delay instanceof Date ? Number.isFinite(delay.getTime()) : isSeconds(delay)))
    return `delay must be seconds (0 or more) or a valid Date, not ${String(delay)}`;
  return undefined;
}

/** A dispatch laid out: the payload, where and when it goes, and what dispatch answers of it. */
interface LaidOut {
  raw: string;
  uuid: string | null;
  queue: string;
  /** Seconds, or a moment, when it is delayed; undefined when it is ready at once. */
  delay: number | Date | undefined;
  /** Horizon's recorder and what it records of the job, when Horizon is on. */
  record: { horizon: HorizonRecorder; facts: HorizonFacts | undefined } | undefined;
  name: string;
  /** The payload's id (the database gives the row's instead). */
  id: string;
  delaySeconds: number;
}

/** A worker's settings (WorkerOptions' names) and where its failures, lines and Redis trouble go. */
export interface QueueWorkerOptions extends Partial<WorkerOptions> {
  /** Seconds a reserved job is Redis's before it may be taken again (retry_after, 90; null: never). */
  retryAfter?: number | null;
  /** Seconds a reserve blocks waiting for a job (block_for; none by default). */
  blockFor?: number | null;
  /** The app's failed_jobs table by default; another store, or `false` for the events alone. */
  failer?: FailedJobProvider | false;
  onFailed?: (job: FailedJobInfo, error: unknown) => void | Promise<void>;
  logger?: WorkerLogger;
  onError?: (error: Error) => void;
  log?: (event: WorkerEvent) => void;
  shapes?: ShapesFile | string;
  /** This worker's OpenTelemetry providers, or `false`; else connect()'s. */
  telemetry?: TelemetryOptions | false;
  /**
   * The worker's record of what it ran, for the dashboard (on by default): per minute, queue and
   * class the jobs completed and failed and their runtime, kept `keepSeconds` (86,400); the
   * latest `recent` completed jobs (1,000); its heartbeat. Written beside the queue (its Redis
   * under the app's prefix, `lqb:*`; or the `lqb_*` tables of its database) every `flushEvery`
   * seconds (5) in one round trip. `false` keeps none.
   */
  record?: false | RecordOptions;
}

/** The options worker() takes besides WorkerOptions. */
const QUEUE_WORKER_OPTIONS = [
  'retryAfter',
  'blockFor',
  'failer',
  'onFailed',
  'logger',
  'onError',
  'log',
  'shapes',
  'telemetry',
  'record',
] as const satisfies readonly Exclude<keyof QueueWorkerOptions, keyof WorkerOptions>[];

/** How long close() lets running workers finish their jobs before leaving them reserved. */
const CLOSE_DEADLINE_MS = 10_000;

/**
 * A connection to a Laravel app's queue. `Jobs` (the interface `lqb shapes --types` writes, given
 * as `connect<Jobs>()`) types dispatch's class names and properties, as defineHandlers<Jobs> types
 * handlers; without it any class and properties are taken.
 */
export class LaravelQueue<Jobs extends object = UntypedJobs> {
  /**
   * The queue dispatch, size and find use, by the connection's driver: a RedisQueue (bounded
   * waits, reconnecting) or the database connection's jobs table (a DatabaseQueue).
   */
  readonly queue: Queue;
  /**
   * Restart signals, maxExceptions counts and queue:pause switches, as Laravel's workers keep
   * them: in Redis (QueueCache), or in the database store's `cache` table (DatabaseQueueCache).
   */
  readonly cache: WorkerCache;
  /** APP_KEY's Encrypter, when there is a key. */
  readonly encrypter: Encrypter | undefined;
  readonly #cacheClient: RedisClient | undefined;
  /** The cache store's lock connection: one of the two above, or a client of its own. */
  readonly #lockClient: RedisClient | undefined;
  #failer: DatabaseUuidFailedJobProvider | undefined;
  #locks: UniqueLockStore | undefined;
  readonly #closers: (() => Promise<void> | void)[] = [];
  readonly #workers = new Set<Worker>();
  #telemetry: Promise<DispatchTelemetry | undefined> | undefined;
  /** What #telemetry resolved to, once it has (null: none), so a dispatch after the first awaits nothing for it. */
  #telemetryOpened: DispatchTelemetry | null | undefined;
  #closed = false;

  constructor(
    readonly settings: ConnectionSettings,
    /** The queue's Redis client (the redis driver), the database connection's queue, or another Queue (a fake's). */
    queue: RedisClient | DatabaseQueue | Queue,
    /** The cache connection (the Redis store), or the database store's cache. */
    cache: RedisClient | DatabaseQueueCache,
    private readonly options: Omit<ConnectOptions, 'shapes' | 'logger'> & {
      logger?: WorkerLogger;
      profile: LaravelProfile;
      cacheStore: 'redis' | 'database';
      /** Why the app's cache store keeps locks Node cannot reach, when it does. */ unreachableLocks?: string;
      shapes?: ShapesFile;
      /** The app's Laravel version, when known (vendor/, else `laravel`). */ version?: string;
      /** True when that version is only `laravel`'s, which a job's payload outranks (laravelOfJob.ts). */ versionGiven?: boolean;
      /** Horizon's settings and the recorder its records are written with, when it is on. */ horizonRecords?: {
        resolved: ResolvedHorizon;
        recorder: HorizonRecorder;
      };
      /** Unique locks kept elsewhere than the app's cache store (a fake's, in memory). */ locks?: UniqueLockStore;
      /** job_batches kept elsewhere than the app's database (a fake's, in memory). */ batches?: BatchStore;
      /** What each dispatch makes afresh, made by a test's functions instead (a fake's). */ make?: PayloadMakers;
    },
    lockClient?: RedisClient,
  ) {
    this.queue = isQueue(queue) ? queue : new RedisQueue(queue, { defaultQueue: settings.defaultQueue });
    if (cache instanceof DatabaseQueueCache) {
      this.cache = cache;
      this.#closers.push(() => cache.close());
    } else {
      this.#cacheClient = cache;
      this.#lockClient = lockClient ?? cache;
      this.cache = new QueueCache(cache, settings.cachePrefix, settings.cacheSeparator, this.#lockClient);
    }
    const iv = options.make?.iv;
    this.encrypter = settings.appKey ? new Encrypter(settings.appKey, settings.cipher, ...(iv ? [iv] : [])) : undefined;
  }

  /** UNIX milliseconds: the clock a fake was given, else the machine's. */
  #nowMs(): number {
    const now = this.options.make?.now;
    return now ? now() * 1000 : Date.now();
  }

  /** The uuid, id and createdAt a fake's functions make for the next payload; nothing otherwise (the builder makes its own). */
  #made(): { uuid?: string; id?: string; createdAt?: number } {
    const make = this.options.make;
    if (!make) return {};
    return {
      ...(make.uuid ? { uuid: make.uuid() } : {}),
      ...(make.id ? { id: make.id() } : {}),
      ...(make.now ? { createdAt: Math.floor(make.now()) } : {}),
    };
  }

  /**
   * Horizon's records, when this connection writes them (`horizon`): for what else Horizon's PHP
   * side does that a Node app may want (retryPayload and retried, monitor).
   */
  get horizon(): HorizonRecorder | undefined {
    return this.options.horizonRecords?.recorder;
  }

  /** The redis connection's RedisQueue; the database connection has none (its queue is `queue`). */
  get connection(): RedisQueue {
    if (!(this.queue instanceof RedisQueue))
      throw new ConnectionSettingsError(
        'this is the database queue connection: it has no RedisQueue (its queue is .queue, a DatabaseQueue)',
      );
    return this.queue;
  }

  /** The queue connection's driver: `redis` or `database` (QUEUE_CONNECTION, or `connection`). */
  get driver(): QueueDriver {
    return this.queue.driver;
  }

  /** The key prefix (Laravel's `database.redis.options.prefix`). */
  get prefix(): string {
    return this.settings.prefix;
  }

  get cachePrefix(): string {
    return this.settings.cachePrefix;
  }

  /** The connection's own queue: where a job naming none goes, and what a worker reads by default. */
  get defaultQueue(): string {
    return this.settings.defaultQueue;
  }

  /** The failed-jobs store the settings name (the .env's DB_*), opened on first use. */
  get failer(): DatabaseUuidFailedJobProvider {
    this.#open();
    return (this.#failer ??= DatabaseUuidFailedJobProvider.fromUrl(this.settings.failedDb, this.settings.failedTable));
  }

  /** Where unique locks live (Laravel's default cache store), opened on first use. */
  get locks(): UniqueLockStore {
    this.#open();
    if (this.options.unreachableLocks) throw new ConnectionSettingsError(this.options.unreachableLocks);
    if (!this.#locks && this.options.locks) this.#locks = this.options.locks;
    if (!this.#locks) {
      const store = openLockStore(this.settings, this.#bookkeeping(), this.#lockClient);
      if (store instanceof DatabaseLockStore) this.#closers.push(() => store.close());
      this.#locks = store;
    }
    return this.#locks;
  }

  /** Jobs waiting in a queue (ready, delayed and reserved, as Laravel's size()). */
  size(queue?: string): Promise<number> {
    this.#open();
    return this.queue.size(queue ?? this.settings.defaultQueue);
  }

  /**
   * `lqb size --by-class`: a queue's jobs per class (displayName) and state, read in pages
   * without taking anything; with `handlers`, each class marked taken or not by a worker with
   * them (share on). See docs/sharing.md.
   */
  sizeByClass(queue?: string, handlers?: HandlerMap): Promise<ClassCount[]> {
    this.#open();
    return this.queue.countByClass(queue ?? this.settings.defaultQueue, handlers ? new Set(takenClasses(handlers)) : undefined);
  }

  /**
   * Pushes a job as Laravel's dispatch() does: a class and its properties (or a command built
   * with buildJob), with onQueue(), delay(), $tries, $backoff, $timeout. A JS Date among the
   * properties is a Carbon. With shapes each property is written as the class declares it and
   * a ShouldBeUnique job takes its lock first: a duplicate is not pushed (`duplicate: true`).
   */
  // One signature, not overloads, so that a wrong property is reported as itself (TS2322), not as "no overload matches".
  dispatch<Job extends DispatchName<Jobs> | PhpObject>(job: Job, ...rest: DispatchArguments<Jobs, Job>): Promise<Dispatched>;
  async dispatch(job: string | PhpObject, props: Record<string, unknown> = {}, options: DispatchOptions = {}): Promise<Dispatched> {
    this.#open();
    const telemetry = this.#telemetryOpened !== undefined ? this.#telemetryOpened : await this.#openTelemetry();
    // Without an SDK to hear them (the API alone), a span and metrics would cost the job and go nowhere.
    if (!telemetry?.heard) return (await this.#dispatch(job, props, options, undefined)).dispatched;
    return telemetry.send((extra) => this.#dispatch(job, props, options, extra));
  }

  /**
   * Pushes jobs as Laravel's Queue::bulk() does, each as dispatch() would push it (its own queue,
   * delay and options), in the order given; the pushes go out together. Answers what dispatch
   * answers of each, in the same order.
   */
  async bulk(jobs: readonly JobToPush[]): Promise<Dispatched[]> {
    this.#open();
    if (!isList(jobs)) throw new TypeError('bulk: jobs must be a list of { job, props, …dispatch options }');
    // Laid out one after another, so that the pushes leave in the order given.
    const laidOut: (LaidOut | DispatchedJob)[] = [];
    for (const [index, spec] of jobs.entries()) {
      const { job, props, options } = jobToPush(spec, `bulk: jobs[${index}]`);
      laidOut.push(await this.#layOut(job, props, options, undefined));
    }
    const pushed = await Promise.all(laidOut.map((push) => this.#pushLaidOut(push)));
    return pushed.map((one) => one.dispatched);
  }

  /**
   * Pushes a chain as Laravel's Bus::chain()->dispatch() does: the first job, carrying the rest
   * in `chained` (each serialized as PHP's serialize() writes the instance), the chain's queue in
   * `chainQueue` (and the first job's queue unless it names one) and its delay unless the first
   * job has one. Each later link is pushed by the worker that finishes the one before it, with
   * the envelope its class gives then: a link carries its properties, queue and delay only. A
   * chain's catch callbacks are PHP closures, which Node cannot write: it goes without.
   */
  async chain(jobs: readonly JobToPush[], options: ChainOptions = {}): Promise<Dispatched> {
    this.#open();
    if (!isList(jobs) || jobs.length === 0)
      throw new TypeError('chain: jobs must be a list of one or more { job, props, …dispatch options }');
    const problem = chainOptionsProblem(options);
    if (problem) throw new TypeError(`chain: ${problem}`);
    const [first, ...rest] = jobs.map((spec, index) => jobToPush(spec, `chain: jobs[${index}]`));
    const chained = rest.map((link, index) => serialize(this.#chainLink(link, `chain: jobs[${index + 1}]`)));
    const fields: Record<string, unknown> = {
      ...(options.queue !== undefined ? { chainQueue: options.queue } : {}),
      chained,
      chainCatchCallbacks: [],
    };
    const firstOptions: DispatchOptions = {
      ...first!.options,
      ...(first!.options.queue === undefined && options.queue !== undefined ? { queue: options.queue } : {}),
      ...(first!.options.delay === undefined && options.delay !== undefined ? { delay: options.delay } : {}),
    };
    return (await this.#dispatch(first!.job, first!.props, firstOptions, undefined, { fields })).dispatched;
  }

  /**
   * Pushes a batch as Laravel's Bus::batch()->dispatch() does (PendingBatch, Batch::add): the
   * job_batches row (its counts 0, its options serialized), each job given the batch's id
   * (Batchable's batchId) and laid out as dispatch() lays it out, the row's total and pending
   * counts raised by the jobs' number, and the jobs pushed, in order, onto the batch's queue
   * (its onQueue(); a job's own queue is not where Queue::bulk puts it). Should the pushes fail,
   * the row goes, as Laravel's dispatch() deletes it. Then/catch/finally callbacks are PHP
   * closures, which Node cannot write: a batch from Node has none.
   */
  async batch(jobs: readonly JobToPush[], options: PendingBatchOptions = {}): Promise<DispatchedBatch> {
    this.#open();
    if (!isList(jobs) || jobs.length === 0)
      throw new TypeError('batch: jobs must be a list of one or more { job, props, …dispatch options }');
    const problem = batchOptionsProblem(options);
    if (problem) throw new TypeError(`batch: ${problem}`);
    const specs = jobs.map((spec, index) => jobToPush(spec, `batch: jobs[${index}]`));
    const batches = (this.#batches ??= this.options.batches ?? this.#openBatches());
    const id = orderedUuid(this.#nowMs() / 1000);
    const name = options.name ?? '';
    // PendingBatch's options, in the order onQueue() and allowFailures() set them.
    const batchOptions = new PhpArray();
    if (options.queue !== undefined) batchOptions.set('queue', options.queue);
    if (options.allowFailures !== undefined) batchOptions.set('allowFailures', options.allowFailures);
    try {
      await batches.store({ id, name, options: batchOptions });
    } catch (error) {
      if (await batches.hasTable().catch(() => true)) throw error;
      throw new Error(
        `batch: no batch was pushed: there is no ${batches.where}; Laravel's migration makes it (php artisan queue:batches-table, then migrate)`,
        { cause: error },
      );
    }
    try {
      const pushTo = options.queue ?? this.settings.defaultQueue;
      const laidOut: (LaidOut | DispatchedJob)[] = [];
      for (const { job, props, options: own } of specs)
        laidOut.push(await this.#layOut(job, { ...props, batchId: id }, own, undefined, { pushTo }));
      await batches.incrementTotalJobs(id, specs.length);
      const pushed = await Promise.all(laidOut.map((push) => this.#pushLaidOut(push)));
      return { id, name, dispatched: pushed.map((one) => one.dispatched) };
    } catch (error) {
      await batches.delete(id).catch(() => undefined);
      throw error;
    }
  }

  /** job_batches where the app keeps it: batchDb, else the app's database (the failed jobs' one). */
  #openBatches(): DatabaseBatchRepository {
    const repository = new DatabaseBatchRepository(
      databaseConfig(this.options.batchDb ?? this.settings.failedDb),
      this.options.batchTable ?? 'job_batches',
    );
    this.#closers.push(() => repository.close());
    return repository;
  }

  #batches: BatchStore | undefined;

  /** A chain's later link: the command alone, as the app's class builds it, with its own queue and delay. */
  #chainLink(link: { job: string | PhpObject; props: Record<string, unknown>; options: DispatchOptions }, where: string): PhpObject {
    const beyond = Object.keys(link.options).filter((name) => !['queue', 'delay', 'shapes', 'laravel'].includes(name));
    if (beyond.length > 0)
      throw new TypeError(
        `${where}: a later link of a chain carries only its properties, queue and delay (PHP writes its envelope from its class when it is dispatched), not ${beyond.join(', ')}`,
      );
    const problem = dispatchProblem(link.job, link.props, link.options);
    if (problem) throw new TypeError(`${where}: ${problem}`);
    const { queue, delay } = link.options;
    const shapes = this.#shapes(link.options.shapes);
    const profile = this.#profileFor(link.options.laravel, shapes);
    const queueable: Record<string, unknown> = {
      ...(queue !== undefined ? { queue } : {}),
      ...(delay !== undefined ? { delay: delay instanceof Date ? buildDate(delay) : delay } : {}),
    };
    if (link.job instanceof PhpObject) {
      for (const [name, value] of Object.entries(queueable)) link.job.props.set(name, value as PhpValue);
      return link.job;
    }
    return commandForMethods(link.job, link.props, shapes, profile, queueable);
  }

  /** The layout a job is written in: `laravel` given, else the shapes' version, else the connection's. */
  #profileFor(laravel: string | undefined, shapes: ShapesFile | undefined): LaravelProfile {
    if (laravel !== undefined) return profileOf(laravel);
    return (shapes && profileOfShapes(shapes)) ?? this.options.profile;
  }

  /** Dispatch's telemetry, opened by the first dispatch and kept. */
  async #openTelemetry(): Promise<DispatchTelemetry | null> {
    const telemetry = await (this.#telemetry ??= DispatchTelemetry.open(this.options.telemetry, this.queue.driver).catch(
      (error: unknown) => {
        // A broken @opentelemetry/api install costs the spans, never the job.
        this.options.logger?.warn(
          { err: error },
          `dispatching without OpenTelemetry: @opentelemetry/api did not load (${(error as Error)?.message ?? String(error)})`,
        );
        return undefined;
      },
    ));
    return (this.#telemetryOpened = telemetry ?? null);
  }

  /** dispatch() itself; `extra` holds keys for the envelope (the trace context, when propagated). */
  async #dispatch(
    job: string | PhpObject,
    props: Record<string, unknown>,
    options: DispatchOptions,
    extra: JsonObject | undefined,
    internal?: InternalDispatch,
  ): Promise<DispatchedJob> {
    // Laid out in a call of its own, so that what building held (the command, the properties, the
    // closures over them) is let go before the push is awaited: with a thousand dispatches in
    // flight, each one's kept alive outlived V8's young-generation collections, whose copying
    // and the old generation's marking then cost more than the building.
    return this.#pushLaidOut(await this.#layOut(job, props, options, extra, internal));
  }

  /** A laid-out dispatch pushed, and what dispatch answers of it. */
  async #pushLaidOut(push: LaidOut | DispatchedJob): Promise<DispatchedJob> {
    if ('dispatched' in push) return push;
    const { raw, uuid, queue, delay, record } = push;
    let rowId: string | void;
    try {
      rowId = await this.#push(raw, uuid, queue, delay, record);
    } catch (error) {
      // Never a silent drop: the caller hears that this job was not pushed, and why (no password);
      // or, when Redis never answered, that it may have been.
      const where = this.#where();
      const line = outcomeUnknown(error)
        ? `the job may or may not have been pushed: ${where} did not confirm it (${(error as Error).message})${uuid ? `; find it by its uuid ${uuid}` : ''}`
        : `the job was not pushed: ${where} did not take it (${(error as Error).message})`;
      throw new Error(redactSecrets(line), { cause: error });
    }
    // The job's id: the payload's on Redis, the new row's on the database (as Laravel's pushRaw returns it).
    const id = rowId === undefined ? push.id : rowIdAsLaravelGives(rowId);
    return {
      name: push.name,
      delay: push.delaySeconds,
      dispatched: { uuid, id: record && uuid !== null ? uuid : id, queue },
    };
  }

  /**
   * A dispatch's payload laid out, and where and when it goes; or, for a ShouldBeUnique job whose
   * lock is held, what dispatch answers without pushing it.
   */
  async #layOut(
    job: string | PhpObject,
    props: Record<string, unknown>,
    options: DispatchOptions,
    extra: JsonObject | undefined,
    internal?: InternalDispatch,
  ): Promise<LaidOut | DispatchedJob> {
    const problem = dispatchProblem(job, props, options);
    if (problem) throw new TypeError(`dispatch: ${problem}`);
    const delay = options.delay;
    const delaySeconds =
      delay === undefined ? 0 : delay instanceof Date ? Math.max(0, Math.ceil((delay.getTime() - this.#nowMs()) / 1000)) : delay;
    const delayed = delay instanceof Date ? delaySeconds > 0 : delaySeconds > 0;
    // As onQueue() and delay() do, the command itself carries them: a chain or a release reads them there.
    const queueable: Record<string, unknown> = {
      ...(options.queue !== undefined ? { queue: options.queue } : {}),
      ...(delayed ? { delay: delay instanceof Date ? buildDate(delay) : delaySeconds } : {}),
      ...internal?.fields,
    };
    const shapes = this.#shapes(options.shapes);
    if (!shapes && this.options.strictShapes && typeof job === 'string')
      throw new Error(
        `${job} was not pushed: strictShapes, and no class shapes (shapes, or env beside the app's vendor/ and app/ with PHP on PATH) say which of its properties are protected or private`,
      );
    const profile = this.#profileFor(options.laravel, shapes);
    const methodJob = (): MethodJob => ({
      name: typeof job === 'string' ? job : job.className,
      command: toJS(commandForMethods(job, props, shapes, profile, queueable)) as Record<string, unknown>,
    });
    const methods = givenMethods(options, methodJob);
    const given = methods instanceof Promise ? await methods : methods;
    const envelope = {
      ...this.#made(),
      maxTries: options.tries ?? null,
      timeout: options.timeout ?? null,
      backoff: given.backoff ?? null,
      ...(given.retryUntil != null ? { retryUntil: given.retryUntil } : {}),
      ...(given.displayName !== undefined ? { displayName: given.displayName } : {}),
      ...(extra ? { extra } : {}),
    };
    let built: BuiltPayload;
    let queue: string;
    // The database's payload has no id or attempts: the row's id is the job's, its column counts.
    const driver = this.queue.driver;
    if (job instanceof PhpObject) {
      if (Object.keys(props).length > 0) throw new TypeError('dispatch: a built command carries its own properties; give {} as props');
      for (const [name, value] of Object.entries(queueable))
        job.props.set(name, value instanceof PhpObject ? value : (value as string | number));
      built = buildPayload(job, { profile, ...envelope, driver, delay: since12(profile) && delayed ? delaySeconds : null });
      queue = internal?.pushTo || options.queue || this.settings.defaultQueue;
    } else if (shapes) {
      const onNotRun = (name: string, methods: string[]) => {
        const line = `${name} defines ${methods.join(' and ')}, PHP that Node cannot run: the payload goes without ${methods.length > 1 ? 'their results' : 'its result'}`;
        if (options.onNotRun) options.onNotRun(name, methods, line);
        else this.options.logger?.warn({ job: name, methods }, line);
      };
      // What the version writes of a unique job's lock (13.24+ its owner in the command, 11.39+ the hidden context) comes in when known.
      const build = (unique?: { extra: JsonObject; queueable: Record<string, unknown> }) =>
        buildShapedPayload(shapes, job, withCarbons(props) as Record<string, unknown>, {
          // The layout the lock is named by: `laravel`, else the shapes' version, else the connection's.
          profile,
          queueable: { ...queueable, ...unique?.queueable },
          ...envelope,
          driver,
          ...(unique ? { extra: { ...unique.extra, ...extra } } : {}),
          delay: delaySeconds,
          ...(this.encrypter ? { encrypter: this.encrypter } : {}),
          // Said once, by the first build, not again by the one with the lock's fields.
          ...(unique ? {} : { onNotRun }),
        });
      let shaped = build();
      // PendingDispatch: the lock is named, written into the payload as the version writes it, taken; a duplicate is not pushed.
      // displayName()'s result, given or as translated: what the envelope carries, and 12.41+ name the lock by.
      const shape = findShape(shapes, shaped.command.className);
      const displayName = given.displayName ?? (shape ? translatedDisplayName(shape, shaped.command) : undefined);
      const laravel = options.laravel ?? shapes.laravel ?? this.options.version;
      const lock = await planUniqueLock(shapes, shaped.command, profile, {
        ...(given.uniqueId !== undefined ? { uniqueId: given.uniqueId } : {}),
        ...(displayName !== undefined ? { displayName } : {}),
        ...(laravel ? { laravel } : {}),
      });
      if (lock) {
        const written = uniqueLockFields(
          { ...lock, store: this.locks.storeName },
          parseVersion(options.laravel ?? shapes.laravel ?? this.options.version),
          profile,
        );
        if (written) shaped = build(written);
      }
      built = shaped;
      queue = internal?.pushTo || options.queue || shaped.queue || this.settings.defaultQueue;
      if (lock && !(await this.locks.acquire(lock.key, lock.owner, lock.seconds)))
        return { name: job, delay: delaySeconds, dispatched: { uuid: null, id: null, queue, duplicate: true, lockKey: lock.key } };
    } else {
      const command = buildJob({ className: job, properties: withCarbons(props) as Record<string, unknown>, queueable }, profile);
      built = buildPayload(command, { profile, ...envelope, driver, delay: since12(profile) && delayed ? delaySeconds : null });
      queue = internal?.pushTo || options.queue || this.settings.defaultQueue;
      // Written all public: said once per class, where a service owner reads (logger: false silences it).
      if (this.options.logger && firstUnshaped(job)) this.options.logger.warn({ event: 'unshaped', job }, unshapedLine(job, 'library'));
    }
    const uuid = typeof built.envelope.uuid === 'string' ? built.envelope.uuid : null;
    const horizon = this.horizon;
    // Horizon's queue lays the payload out its own way before the push: the id made the uuid, type, tags, silenced, pushedAt.
    // A tags function is awaited; a list (or none) is not, which spares the push a turn of the event loop.
    const tags = horizon && typeof options.tags === 'function' ? await options.tags(methodJob()) : options.tags;
    const prepared = horizon ? horizon.preparedBuilt(built, { tags: checkedTags(tags) }) : undefined;
    return {
      raw: prepared ? prepared.payload : built.raw,
      uuid,
      queue,
      delay: delayed ? (delay instanceof Date ? delay : delaySeconds) : undefined,
      record: horizon ? { horizon, facts: prepared?.facts } : undefined,
      name: String(built.envelope.displayName ?? built.command.className),
      id: String(built.envelope.id),
      delaySeconds,
    };
  }

  /**
   * JobPushed: Horizon's pending record of a job pushed. The job is in the queue whatever becomes
   * of this write, so a record that cannot be written is said to the logger, never thrown as if
   * the push had failed; the job shows on the dashboard from its reservation on.
   */
  async #recordPushed(horizon: HorizonRecorder, queue: string, raw: string, facts?: HorizonFacts): Promise<void> {
    try {
      await horizon.pushed(queue, raw, facts);
    } catch (error) {
      this.options.logger?.warn(
        { err: error },
        redactSecrets(`Horizon's record of a pushed job was not written: ${(error as Error)?.message ?? String(error)}`),
      );
    }
  }

  /**
   * Pushes once, or fails: a push whose reply was lost (its connection dropped, or Redis did not
   * answer in time) is sent again once Redis is back, for as long as one command may wait, and
   * the push step's marker of the uuid makes that second send a no-op when the first went
   * through. A payload without a uuid (Laravel before 7) is sent once and its failure reported.
   * With `record` (Horizon on), the push is recorded pending: by the same step when it is pushed
   * once, on Horizon's client (the same Redis, without the prefix), so the payload goes once and
   * the record only with the push; after it otherwise.
   */
  async #push(
    raw: string,
    uuid: string | null,
    queue: string,
    delay: number | Date | undefined,
    record?: { horizon: HorizonRecorder; facts: HorizonFacts | undefined },
  ): Promise<string | void> {
    // The database's insert is one statement in its own transaction: it happened or it did not.
    if (uuid === null || !(this.queue instanceof RedisQueue)) {
      const rowId = delay !== undefined ? await this.queue.laterRaw(delay, raw, queue) : await this.queue.pushRaw(raw, queue);
      if (record) await this.#recordPushed(record.horizon, queue, raw, record.facts);
      return rowId;
    }
    const commandTimeout = this.options.commandTimeout ?? 10_000;
    // Due at one moment however often it is sent (in seconds: a Date ends in the year 275760).
    const due = delay === undefined ? undefined : this.connection.availableAt(delay);
    const markerMs = Math.max(60_000, 3 * commandTimeout);
    const deadline = Date.now() + commandTimeout;
    for (;;) {
      try {
        if (record) {
          const keys = this.connection.pushOnceKeys(uuid, queue, { prefixed: true });
          await record.horizon.pushedOnce(queue, { keys, payload: raw, due: due ?? '', markerMs }, record.facts);
        } else await this.connection.pushOnce(raw, uuid, { queue, markerMs, ...(due !== undefined ? { due } : {}) });
        return;
      } catch (error) {
        const left = deadline - Date.now();
        if (!outcomeUnknown(error) || left <= 0) throw error;
        if (!(await readyAgain(record ? record.horizon.client : this.connection.client, left))) throw error;
      }
    }
  }

  /**
   * Where a job is, by its id or uuid (what dispatch returned): ready, delayed or reserved on one
   * of `queues` (the connection's own by default), else failed in failed_jobs (by uuid);
   * undefined when none holds it: done, deleted, or never pushed. It looks through every job of
   * those queues (Laravel's queue has no index), so it is for lookups, not for every job.
   */
  async find(idOrUuid: string, options: { queues?: string[] } = {}): Promise<FoundJob | undefined> {
    this.#open();
    for (const name of options.queues ?? [this.settings.defaultQueue]) {
      const queued = await this.queue.find(idOrUuid, name);
      if (queued) {
        const found = foundJob(queued.state, queued.queue, queued.payload, {
          ...(queued.until !== undefined ? { until: new Date(queued.until * 1000), untilSeconds: queued.until } : {}),
        });
        // The database keeps the id and the attempts beside the payload, in the row.
        return {
          ...found,
          ...(queued.id !== undefined ? { id: queued.id } : {}),
          ...(queued.attempts !== undefined ? { attempts: queued.attempts } : {}),
        };
      }
    }
    const failed = await this.failer.find(idOrUuid);
    return failed
      ? foundJob('failed', failed.queue, failed.payload, { failedAt: failed.failed_at, exception: failed.exception })
      : undefined;
  }

  /**
   * A worker for these handlers on this connection: the app's failed_jobs table (unless told
   * otherwise), its cache, APP_KEY, unique locks and batches. It has Redis clients of its own
   * that wait out an outage (each trouble to onError and the logger); close() stops and closes it.
   */
  worker(handlers: HandlerMap, options: QueueWorkerOptions = {}): Worker {
    this.#open();
    const problem = workerOptionsProblem(options as Record<string, unknown>, QUEUE_WORKER_OPTIONS) ?? recordOptionsProblem(options.record);
    if (problem) throw new WorkerUsageError(problem);
    const {
      retryAfter,
      blockFor,
      failer,
      onFailed,
      logger = this.options.logger,
      onError,
      log,
      shapes: givenShapes,
      telemetry = this.options.telemetry,
      record,
      ...workerOptions
    } = options;
    const shapes = this.#shapes(givenShapes);
    const { worker, close } = buildWorker({
      settings: this.settings,
      handlers,
      options: workerOptions,
      retryAfter,
      blockFor,
      bookkeeping: this.#bookkeeping(),
      // The database store is the connection's own, shared with dispatch; a Redis store is the worker's, on its own client.
      ...(this.options.cacheStore === 'database' && !this.options.unreachableLocks ? { locks: this.locks } : {}),
      ...(failer !== undefined ? { failer } : {}),
      defaultFailer: () => this.failer,
      ...(onFailed ? { onFailed } : {}),
      ...(this.encrypter ? { encrypter: this.encrypter } : {}),
      ...(shapes ? { shapes } : {}),
      ...(this.options.version !== undefined ? { laravel: this.options.version } : {}),
      ...(this.options.versionGiven ? { laravelGiven: true } : {}),
      ...(logger ? { logger } : {}),
      ...(onError ? { onError } : {}),
      ...(log ? { log } : {}),
      ...(telemetry !== undefined ? { telemetry } : {}),
      ...(this.options.horizonRecords ? { horizon: this.options.horizonRecords.resolved } : {}),
      ...(record !== undefined ? { record } : {}),
    });
    this.#workers.add(worker);
    this.#closers.push(close);
    return worker;
  }

  /** Where the app keeps unique locks and batches, as connect() resolved it (batches in the app's database). */
  #bookkeeping(): Bookkeeping {
    const { cacheStore, unreachableLocks, lockDb, lockTable, batchDb, batchTable } = this.options;
    return {
      cacheStore,
      ...(batchDb !== undefined ? { batchDb } : {}),
      ...(batchTable !== undefined ? { batchTable } : {}),
      ...(unreachableLocks ? { unreachableLocks } : {}),
      ...(lockDb !== undefined ? { lockDb } : {}),
      ...(lockTable !== undefined ? { lockTable } : {}),
    };
  }

  /** Stops the workers it made (letting their jobs finish for a while), then closes every client and pool it opened. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#workers].map((worker) => worker.stop({ timeout: CLOSE_DEADLINE_MS })));
    for (const close of this.#closers.splice(0)) await close();
    await this.#failer?.close();
    await this.queue.close();
    const queueClient = this.queue instanceof RedisQueue ? this.queue.client : undefined;
    queueClient?.disconnect();
    this.#cacheClient?.disconnect();
    this.horizon?.client.disconnect();
    if (this.#lockClient !== this.#cacheClient && this.#lockClient !== queueClient) this.#lockClient?.disconnect();
  }

  /** Where the jobs go, for an error line: Redis's address, or the jobs table and its database. */
  #where(): string {
    return this.queue instanceof RedisQueue
      ? `Redis at ${whereRedisIs(this.settings)}`
      : `the ${this.settings.jobsTable} table of ${redactUrl(this.settings.queueDb ?? '')}`;
  }

  #open(): void {
    if (this.#closed) throw new Error('this LaravelQueue is closed');
  }

  #shapes(given: ShapesFile | string | undefined): ShapesFile | undefined {
    const shapes = given ?? this.options.shapes;
    return typeof shapes === 'string' ? readShapes(shapes) : shapes;
  }
}

/**
 * Connects as `lqb --env` would: the settings resolved, the APP_KEY checked, Redis (queue and
 * cache connections) ready, or a rejection naming where Redis was looked for, within
 * `connectTimeout`.
 */
export async function connect<Jobs extends object = UntypedJobs>(options: ConnectOptions = {}): Promise<LaravelQueue<Jobs>> {
  const fromFile = envFileOf(options);
  // A service hears what its owner acts on unless it says otherwise (lqb's commands print their own lines).
  const logger = options.logger === undefined ? serviceLogger() : options.logger;
  const shapes = options.shapes ?? (await shapesOfAppAtHand(options.env, logger || undefined));
  return connectWith<Jobs>(resolveFromEnv(options, fromFile), { ...options, logger, ...(shapes ? { shapes } : {}) }, fromFile);
}

/** The shapes of the app beside `env` when it is at hand (appShapes.ts), said to the logger either way. */
async function shapesOfAppAtHand(env: string | undefined, logger: WorkerLogger | undefined): Promise<ShapesFile | undefined> {
  if (env === undefined) return undefined;
  const appDir = dirname(resolve(env));
  if (!isAppAtHand(appDir)) return undefined;
  const found = await appShapes(appDir);
  if (!found.shapes) {
    logger?.warn(
      { event: 'shapes', app: appDir },
      `the class shapes of ${appDir} could not be read (${found.why}): dispatch writes every property public; give shapes (lqb shapes --app=${appDir})`,
    );
    return undefined;
  }
  const how = found.from === 'cache' ? 'unchanged since PHP read them' : 'read by PHP now';
  logger?.info({ event: 'shapes', app: appDir }, `class shapes of ${appDir}: ${found.classes} classes, ${how}`);
  return found.shapes;
}

/**
 * connect() for settings already resolved: `lqb` resolves them from its flags (its errors name
 * the flags); `options` give the rest (env for the app's Laravel and cache store, timeouts…);
 * `fromFile` is that .env when the caller has read it already, and it is read only if the cache store is not given.
 */
export async function connectWith<Jobs extends object = UntypedJobs>(
  settings: ConnectionSettings,
  options: ConnectOptions = {},
  fromFile?: LaravelEnv,
  /** The parts to use instead of opening any (testing's fakeQueue): nothing is connected. */
  given?: { queue: Queue; cache: DatabaseQueueCache; locks: UniqueLockStore; batches: BatchStore; make?: PayloadMakers },
): Promise<LaravelQueue<Jobs>> {
  // The settings' names in connect()'s words: the option when one was given, else the variable.
  appEncrypter(settings, {
    key: options.key !== undefined ? 'key' : 'APP_KEY',
    cipher: options.cipher !== undefined ? 'cipher' : 'APP_CIPHER',
  });
  if (options.cacheStore !== undefined && options.cacheStore !== 'redis' && options.cacheStore !== 'database')
    throw new ConnectionSettingsError(
      `cacheStore: unique locks are kept in the redis or the database store, not ${JSON.stringify(options.cacheStore)}`,
    );
  // A store the .env names that keeps locks out of Node's reach (Laravel 8's stock CACHE_DRIVER=file) refuses only a lock.
  const fromEnv = options.cacheStore === undefined ? envCacheStore(fromFile ?? envFileOf(options), options.env) : undefined;
  const unreachableLocks = unreachableLockStore(fromEnv);
  // A database connection with no Redis named keeps its cache in the database store, and opens no Redis (drivers.ts).
  const cacheStore = cacheStoreOf(settings, options.cacheStore, fromEnv);
  const version = appLaravelVersion(options.laravel, options.env);
  const profile = version === undefined ? '8' : profileOf(version);
  const shapes = typeof options.shapes === 'string' ? readShapes(options.shapes) : options.shapes;
  const connectTimeout = options.connectTimeout ?? 5000;
  const timeouts = {
    connectTimeout,
    readyTimeout: connectTimeout,
    commandTimeout: options.commandTimeout ?? 10_000,
    reconnect: true,
    log: (line: string) => (options.logger || undefined)?.warn({ redis: whereRedisIs(settings) }, redactLine(line)),
  };
  const open = async (url: string, on: ConnectionSettings = settings) => {
    try {
      return await openBoundedClient(on, url, timeouts);
    } catch (error) {
      if (error instanceof RedisUnavailable)
        throw new RedisUnavailable(
          `cannot connect to Redis at ${whereRedisIs(settings, url)} within ${connectTimeout} ms: ${redactSecrets(error.reason)}`,
          { cause: error },
        );
      throw error;
    }
  };
  const { shapes: _given, logger: givenLogger, ...rest } = options;
  const queueOptions = {
    ...rest,
    ...(givenLogger ? { logger: givenLogger } : {}),
    profile,
    cacheStore,
    ...(unreachableLocks ? { unreachableLocks } : {}),
    ...(shapes ? { shapes } : {}),
    ...(version !== undefined ? { version } : {}),
    ...(laravelOnlyGiven(options.laravel, options.env) ? { versionGiven: true } : {}),
  };
  if (given)
    return new LaravelQueue<Jobs>(settings, given.queue, given.cache, {
      ...queueOptions,
      locks: given.locks,
      batches: given.batches,
      ...(given.make ? { make: given.make } : {}),
    });
  const database = settings.queueConnection === 'database';
  // Redis is opened for what the app keeps there: the redis connection's queue, the Redis cache
  // store's values and locks. The lock connection is the queue's (the stock `default`) or the
  // cache's, else one of its own.
  const redisCache = cacheStore === 'redis';
  const ownLock = redisCache && settings.lockUrl !== settings.cacheUrl && (database || settings.lockUrl !== settings.url);
  type Role = 'queue' | 'cache' | 'lock';
  const wanted: [Role, string][] = [];
  if (!database) wanted.push(['queue', settings.url]);
  if (redisCache) wanted.push(['cache', settings.cacheUrl]);
  if (ownLock) wanted.push(['lock', settings.lockUrl]);
  const closers: (() => unknown)[] = [];
  try {
    const queue = database ? openDatabaseQueue(settings, version !== undefined ? { laravel: version } : {}) : undefined;
    if (queue) closers.push(() => queue.close());
    const cache = redisCache ? undefined : openDatabaseCache(settings, options.lockDb);
    if (cache) closers.push(() => cache.close());
    // All at once, so the whole wait is one connectTimeout; either failing closes the others.
    const opened = await Promise.allSettled(wanted.map(([, url]) => open(url)));
    const clients = new Map<Role, RedisClient>();
    opened.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        clients.set(wanted[i]![0], result.value);
        closers.push(() => result.value.disconnect());
      }
    });
    const failed = opened.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
    const cacheClient = clients.get('cache');
    const locksOn = clients.get('lock') ?? (settings.lockUrl === settings.url ? clients.get('queue') : undefined) ?? cacheClient;
    const horizonRecords = await openHorizonRecords(settings, options, fromFile, open);
    return new LaravelQueue<Jobs>(
      settings,
      queue ?? clients.get('queue')!,
      cache ?? cacheClient!,
      { ...queueOptions, ...(horizonRecords ? { horizonRecords } : {}) },
      cache ? undefined : locksOn,
    );
  } catch (error) {
    for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
    throw error;
  }
}

/**
 * Horizon's recorder, when the connection writes its records: on a client of its own, under
 * Horizon's prefix alone (Horizon replaces the app's Redis prefix with its own).
 */
async function openHorizonRecords(
  settings: ConnectionSettings,
  options: ConnectOptions,
  fromFile: LaravelEnv | undefined,
  open: (url: string, settings: ConnectionSettings) => Promise<RedisClient>,
): Promise<{ resolved: ResolvedHorizon; recorder: HorizonRecorder } | undefined> {
  const resolved = resolveHorizon(options.horizon, {
    ...(options.env !== undefined ? { envPath: options.env, fromFile: fromFile ?? envFileOf(options) } : {}),
  });
  if (!resolved) return undefined;
  const problem = horizonClusterProblem(settings.cluster);
  if (problem) throw new ConnectionSettingsError(problem);
  const client = await open(settings.url, { ...settings, prefix: '' });
  const recorder = new HorizonRecorder(client, {
    prefix: resolved.prefix,
    connection: settings.queueConnection,
    trim: resolved.trim,
    silenced: resolved.silenced,
  });
  return { resolved, recorder };
}

/** 8, 8.83, 12.x, v11.2.0, 5.8…: the profile whose layout that version writes. */
export function profileOf(version: string): LaravelProfile {
  const text = version.replace(/^v/, '');
  const major = text.startsWith('5.') ? '5.8' : text.split('.')[0]!;
  if (!(LARAVEL_PROFILES as readonly string[]).includes(major))
    throw new ConnectionSettingsError(
      `laravel must be one of ${LARAVEL_PROFILES.join(', ')} (or a full version), not ${JSON.stringify(version)}`,
    );
  return major as LaravelProfile;
}

/** The options dispatch() takes, so that a misspelt one is refused rather than ignored. */
const DISPATCH_OPTIONS = [
  'queue',
  'delay',
  'tries',
  'backoff',
  'retryUntil',
  'tags',
  'displayName',
  'timeout',
  'shapes',
  'uniqueId',
  'laravel',
  'onNotRun',
] as const satisfies readonly (keyof DispatchOptions)[];

/**
 * What is wrong with a dispatch's arguments, as one line, or undefined: each is written into the
 * payload as it is, where Laravel's worker would misread it (`tries: 1.5`, `backoff: [-1]`) or
 * PHP has nothing to build (a class named '', properties that are a list).
 */
function dispatchProblem(job: unknown, props: unknown, options: DispatchOptions): string | undefined {
  if (typeof job === 'string' && job.trim() === '') return 'the job class must be named, e.g. App\\Jobs\\SendWelcomeEmail';
  if (props === null || typeof props !== 'object' || Array.isArray(props))
    return `props must be an object of the command's properties, not ${Array.isArray(props) ? 'a list' : String(props)}`;
  const unknown = Object.keys(options).find((name) => !(DISPATCH_OPTIONS as readonly string[]).includes(name));
  if (unknown !== undefined) return `unknown option ${JSON.stringify(unknown)}; the options are ${DISPATCH_OPTIONS.join(', ')}`;
  const placed = queueAndDelayProblem(options);
  if (placed) return placed;
  const { tries, backoff, timeout } = options;
  if (tries !== undefined && !(Number.isInteger(tries) && tries >= 0))
    return `tries must be a whole number, 0 (no limit) or more, not ${JSON.stringify(tries)}`;
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout >= 0))
    return `timeout must be whole seconds, 0 (no limit) or more, not ${JSON.stringify(timeout)}`;
  for (const name of ['uniqueId', 'displayName'] as const) {
    const value = options[name];
    if (value !== undefined && typeof value !== 'string' && typeof value !== 'function')
      return `${name} must be a string or a function of the job, not ${JSON.stringify(value)}`;
  }
  const { retryUntil, tags } = options;
  if (
    retryUntil !== undefined &&
    typeof retryUntil !== 'function' &&
    !(retryUntil instanceof Date ? Number.isFinite(retryUntil.getTime()) : isSeconds(retryUntil))
  )
    return `retryUntil must be a Date, UNIX seconds or a function of the job, not ${String(retryUntil)}`;
  if (tags !== undefined && typeof tags !== 'function' && !(Array.isArray(tags) && tags.every((tag) => typeof tag === 'string')))
    return `tags must be a list of strings or a function of the job, not ${JSON.stringify(tags)}`;
  if (
    backoff !== undefined &&
    typeof backoff !== 'function' &&
    !(Array.isArray(backoff) ? backoff.length > 0 && backoff.every(isSeconds) : isSeconds(backoff))
  )
    return `backoff must be seconds (0 or more), or a list of them, not ${JSON.stringify(backoff)}`;
  return undefined;
}

/** The command the JavaScript methods of a dispatch are given (through toJS): as it will be pushed. */
function commandForMethods(
  job: string | PhpObject,
  props: Record<string, unknown>,
  shapes: ShapesFile | undefined,
  profile: LaravelProfile,
  queueable: Record<string, unknown>,
): PhpObject {
  if (job instanceof PhpObject) return job;
  const properties = withCarbons(props) as Record<string, unknown>;
  return shapes
    ? shapedCommand(shapes, job, properties, { profile, queueable }).command
    : buildJob({ className: job, properties, queueable }, profile);
}

/** What a dispatch's options give for the PHP methods, checked. */
interface GivenMethods {
  backoff?: number | number[] | string | null;
  retryUntil?: number | null;
  displayName?: string;
  uniqueId?: string;
}

/**
 * The values a dispatch's options give for the PHP methods (DESIGN.md §5): each a value, or a
 * function of the job (whose command is built only when one is given). Undefined where none is.
 * Without a function among them nothing is awaited: each await is a turn of the microtask queue
 * that every dispatch would pay for.
 */
function givenMethods(options: DispatchOptions, job: () => MethodJob): GivenMethods | Promise<GivenMethods> {
  const { backoff, retryUntil, displayName, uniqueId } = options;
  const called = [backoff, retryUntil, displayName, uniqueId].some((value) => typeof value === 'function');
  if (!called) return checkedMethods(backoff, retryUntil, displayName, uniqueId);
  let view: MethodJob | undefined;
  const of = async <T>(value: T | ((job: MethodJob) => unknown) | undefined): Promise<unknown> =>
    typeof value === 'function' ? (value as (job: MethodJob) => unknown)((view ??= job())) : value;
  return (async () => checkedMethods(await of(backoff), await of(retryUntil), await of(displayName), await of(uniqueId)))();
}

/** The methods' values checked: each what Laravel's worker reads, or a TypeError saying what was given. */
function checkedMethods(backoff: unknown, retryUntil: unknown, displayName: unknown, uniqueId: unknown): GivenMethods {
  const given: GivenMethods = {};
  if (backoff !== undefined) {
    if (!(backoff === null || typeof backoff === 'string' || isSeconds(backoff) || (Array.isArray(backoff) && backoff.every(isSeconds))))
      throw new TypeError(`dispatch: backoff gave ${JSON.stringify(backoff)}, not seconds or a list of them`);
    given.backoff = backoff;
  }
  if (retryUntil !== undefined) {
    const seconds = retryUntil instanceof Date ? Math.floor(retryUntil.getTime() / 1000) : retryUntil;
    if (!(seconds === null || (typeof seconds === 'number' && Number.isFinite(seconds))))
      throw new TypeError(`dispatch: retryUntil gave ${String(retryUntil)}, not a Date or UNIX seconds`);
    given.retryUntil = seconds;
  }
  if (displayName !== undefined) {
    if (typeof displayName !== 'string') throw new TypeError(`dispatch: displayName gave ${JSON.stringify(displayName)}, not a string`);
    given.displayName = displayName;
  }
  if (uniqueId !== undefined) {
    try {
      given.uniqueId = phpString(
        typeof uniqueId === 'number' && !Number.isInteger(uniqueId) ? new PhpFloat(uniqueId) : (uniqueId as PhpValue),
      );
    } catch (error) {
      throw new TypeError(`dispatch: uniqueId gave what has no string form: ${(error as Error).message}`);
    }
  }
  return given;
}

/** Horizon's tags as a dispatch's `tags` option gave them (a list, or what its function returned); none when not given. */
function checkedTags(tags: unknown): string[] | undefined {
  if (tags === undefined) return undefined;
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string'))
    throw new TypeError(`dispatch: tags gave ${JSON.stringify(tags)}, not a list of strings`);
  return tags;
}

function isSeconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function since12(profile: LaravelProfile): boolean {
  return profile === '12' || profile === '13';
}

/**
 * Props with each JS Date made a Carbon (as a Carbon property serializes), through plain objects,
 * arrays and Maps; fromJS alone would write a Date, which has no own properties, as an empty array.
 * Props with no Date are given back as they are, not copied: most have none.
 */
function withCarbons(value: unknown): unknown {
  return mayHoldDate(value, 0) ? copyWithCarbons(value) : value;
}

/** Past this depth a value is copied whatever it holds: it may be a cycle, which copyWithCarbons keeps. */
const DATE_LOOK_DEPTH = 32;

/** Whether a Date may be inside, where copyWithCarbons would look (plain objects, arrays, Maps). */
function mayHoldDate(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (value instanceof Date || depth > DATE_LOOK_DEPTH) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (mayHoldDate(item, depth + 1)) return true;
    return false;
  }
  if (value instanceof Map) {
    for (const item of value.values()) if (mayHoldDate(item, depth + 1)) return true;
    return false;
  }
  if (keptAsItIs(value)) return false;
  for (const key of Object.keys(value)) if (mayHoldDate((value as Record<string, unknown>)[key], depth + 1)) return true;
  return false;
}

/** A class instance, or what toJS made of a PHP object (its class under a symbol): copyWithCarbons keeps it as it is. */
function keptAsItIs(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return (proto !== Object.prototype && proto !== null) || Object.getOwnPropertySymbols(value).length > 0;
}

function copyWithCarbons(value: unknown, copies = new Map<object, unknown>()): unknown {
  if (value instanceof Date) return buildDate(value);
  if (value === null || typeof value !== 'object') return value;
  // A value met again is its copy, so a cycle stays a cycle (fromJS then says where it is) instead of recursing for ever.
  if (copies.has(value)) return copies.get(value);
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    copies.set(value, copy);
    for (const item of value) copy.push(copyWithCarbons(item, copies));
    return copy;
  }
  if (value instanceof Map) {
    const copy = new Map<unknown, unknown>();
    copies.set(value, copy);
    for (const [key, item] of value) copy.set(key, copyWithCarbons(item, copies));
    return copy;
  }
  if (keptAsItIs(value)) return value;
  const copy: Record<string, unknown> = {};
  copies.set(value, copy);
  for (const [key, item] of Object.entries(value)) copy[key] = copyWithCarbons(item, copies);
  return copy;
}

/** A found job's facts, read from its envelope (whatever the envelope holds, never a throw). */
function foundJob(
  state: FoundJob['state'],
  queue: string,
  payload: string,
  extra: Pick<FoundJob, 'until' | 'untilSeconds' | 'failedAt' | 'exception'>,
): FoundJob {
  let envelope: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(payload) as unknown;
    if (parsed !== null && typeof parsed === 'object') envelope = parsed as Record<string, unknown>;
  } catch {
    // failed_jobs may hold a payload that is not JSON (it was failed for that): its facts are unknown.
  }
  const name = envelope.displayName ?? envelope.job;
  return {
    state,
    queue,
    id: envelope.id === undefined || envelope.id === null ? '' : String(envelope.id),
    uuid: typeof envelope.uuid === 'string' ? envelope.uuid : null,
    name: typeof name === 'string' ? name : '',
    attempts: typeof envelope.attempts === 'number' ? envelope.attempts : 0,
    ...extra,
    payload,
  };
}
