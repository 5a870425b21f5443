/**
 * The one way a worker is put together, for `connect().worker()` and `lqb work` alike: the queue
 * (by the connection's driver), the cache, the store unique locks live in, job_batches, the
 * failed-jobs store, the APP_KEY's Encrypter and the shapes, each where the app's config puts it.
 * The callers differ only in where the settings come from (options or flags) and in how they say
 * a problem; what a worker reads and writes does not depend on which of them made it.
 */
import { DatabaseQueue, databaseConfig } from '../database/index.js';
import { loadDriver } from '../database/drivers.js';
import type { Encrypter } from '../laravel/index.js';
import type { Queue, QueueDriver } from '../queue/index.js';
import { RedisQueue, type QueueHorizonRecords, type RedisClient } from '../redis/index.js';
import { elsewhereLine, queuesElsewhere } from '../redis/elsewhere.js';
import type { ShapesFile } from '../shapes/shape.js';
import type { TelemetryOptions } from '../telemetry/options.js';
import { DatabaseBatchRepository } from '../worker/BatchRepository.js';
import { QueueCache, type WorkerCache } from '../worker/cache.js';
import type { FailedJobProvider } from '../worker/FailedJobProvider.js';
import { takenClasses, type HandlerMap } from '../worker/handlers.js';
import { DatabaseLockStore, RedisLockStore, type UniqueLockStore } from '../worker/locks/index.js';
import { Worker, type FailedJobInfo, type WorkerEvent, type WorkerLogger } from '../worker/index.js';
import type { WorkerOptions } from '../worker/WorkerOptions.js';
import { HorizonRecorder } from '../horizon/HorizonRecorder.js';
import { HorizonSupervisor } from '../horizon/HorizonSupervisor.js';
import { horizonWorkerRecorder, recordPushes, type HorizonRunHooks } from '../horizon/workerRecorder.js';
import { nodeRecorder, type RecordOptions, type RecordSource } from '../record/index.js';
import { patientClient, whereRedisIs } from './clients.js';
import { horizonClusterProblem, type ResolvedHorizon } from './horizon.js';
import { ConnectionSettingsError, type ConnectionSettings } from './settings.js';
import { failsReserveErrors, openDatabaseCache, openDatabaseQueue } from './drivers.js';
import { redactUrl } from './redact.js';

/**
 * Where the app keeps its bookkeeping: the cache store unique jobs' locks live in, and the
 * job_batches table. A database left out is the app's own, which both of Laravel's settings
 * (`cache.stores.database.connection`, `queue.batching.database`) name by default through
 * DB_CONNECTION, as `queue.failed.database` does: here, the failed-jobs database.
 */
export interface Bookkeeping {
  /** Laravel's default cache store: `redis` (its lock connection) or `database` (its lock table). */
  cacheStore: 'redis' | 'database';
  /** Why the app's cache store keeps its locks out of Node's reach, when it does: no store is opened. */
  unreachableLocks?: string;
  /** The database store's database (a URL, as failedDb takes). */
  lockDb?: string;
  /** The database store's lock table (`cache.stores.database.lock_table`). */
  lockTable?: string;
  /** job_batches' database (a URL). */
  batchDb?: string;
  /** Laravel's `queue.batching.table`. */
  batchTable?: string;
}

/** Everything a worker is built from. */
export interface WorkerParts {
  settings: ConnectionSettings;
  handlers: HandlerMap;
  /** WorkerOptions as given; the queues default to the connection's own. */
  options: Partial<WorkerOptions>;
  /** The queue driver (Laravel's `queue.connections.*.driver`): redis unless said. */
  driver?: QueueDriver;
  /** Seconds a reserved job is the worker's before it may be taken again (retry_after, 90; null: never). */
  retryAfter?: number | null;
  /** Seconds a reserve waits for a job (block_for; none: poll). */
  blockFor?: number | null;
  bookkeeping: Bookkeeping;
  /** A lock store already open (connect()'s, shared with its dispatches); else the worker opens its own. */
  locks?: UniqueLockStore;
  /** Where failed jobs go: a store, `false` for the events alone; left out, `defaultFailer()` unless onFailed is the record. */
  failer?: FailedJobProvider | false;
  /** The app's failed_jobs store, opened only when the worker is to use it. */
  defaultFailer?: () => FailedJobProvider;
  onFailed?: (job: FailedJobInfo, error: unknown) => void | Promise<void>;
  /** The APP_KEY's Encrypter (appEncrypter), for ShouldBeEncrypted jobs. */
  encrypter?: Encrypter;
  shapes?: ShapesFile;
  /** The app's Laravel version when known (vendor/'s, or given), for the start line. */
  laravel?: string;
  /** True when `laravel` is only the version given, not the app's vendor/'s: a job's payload outranks it. */
  laravelGiven?: boolean;
  logger?: WorkerLogger;
  onError?: (error: Error) => void;
  log?: (event: WorkerEvent) => void;
  telemetry?: TelemetryOptions | false;
  /** Horizon's records and supervisor (resolveHorizon), when the connection writes them. */
  horizon?: ResolvedHorizon;
  /**
   * The worker's own record of what it ran (src/record/), kept beside its queue for the
   * dashboard: on unless `false`; its options otherwise.
   */
  record?: RecordOptions | false;
}

/** A worker, and how to let go of what was opened for it once it has stopped. */
export interface BuiltWorker {
  worker: Worker;
  /** Closes the queue, the stores and the clients opened for the worker (not those it was given). */
  close: () => Promise<void>;
  /** Stop taking jobs (SIGUSR2), and say so on Horizon's dashboard when the worker is there. */
  pause: () => void;
  /** Take jobs again (SIGCONT), likewise. */
  resume: () => void;
  /** Horizon's supervisor of this worker, when Horizon is on and the worker shows as one. */
  supervisor?: HorizonSupervisor;
  /** The look for its queues under the other prefix spelling, said once (settled within a moment); lqb work waits for it before closing. */
  looked: Promise<void>;
}

/**
 * Builds the worker. Its Redis clients wait out an outage without a line per retry: the worker
 * watches them itself and says an outage once, and when Redis is back (health.ts). Whatever was
 * opened before a throw is closed again.
 */
export function buildWorker(parts: WorkerParts): BuiltWorker {
  const { settings, bookkeeping } = parts;
  refuseMissingDrivers(parts);
  const closers: (() => Promise<void> | void)[] = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    const quiet = () => undefined;
    const horizon = parts.horizon && openHorizon(parts, closers);
    const driver = parts.driver ?? settings.queueConnection;
    const queue = openQueue(
      driver,
      settings,
      {
        retryAfter: parts.retryAfter,
        blockFor: parts.blockFor,
        ...(parts.laravel !== undefined ? { laravel: parts.laravel } : {}),
        // Horizon's records of the queue's moves (reserved, released, given back, migrated) are
        // written by a Redis queue's own steps: Horizon's client is on the queue's Redis.
        ...(horizon ? { horizon: horizon.recorder.queueRecords() } : {}),
      },
      closers,
    );
    // A chain's next link, pushed by the worker, is laid out and recorded as Horizon's queue pushes
    // it, tagged by its handler's tags when the worker has one for its class.
    if (horizon)
      recordPushes(queue, horizon.recorder, { handlers: parts.handlers, ...(parts.encrypter ? { encrypter: parts.encrypter } : {}) });
    // Redis is opened only where the app keeps something there: the database store keeps the
    // worker's cache in `cache` and its locks in `cache_locks`, and a database-only app has no Redis.
    let redis: { cacheClient: RedisClient; lockClient: RedisClient } | undefined;
    const redisClients = () => {
      if (redis) return redis;
      const cacheClient = patientClient(settings, settings.cacheUrl, quiet);
      closers.push(() => cacheClient.disconnect());
      // Locks go where the app's cache store takes them (lock_connection), not with its values. Its own
      // client when that is another connection than the cache's: a blocking pop may hold the queue's.
      const lockClient = settings.lockUrl === settings.cacheUrl ? cacheClient : patientClient(settings, settings.lockUrl, quiet);
      if (lockClient !== cacheClient) closers.push(() => lockClient.disconnect());
      return (redis = { cacheClient, lockClient });
    };
    let cache: WorkerCache | undefined;
    if (bookkeeping.cacheStore === 'database' && bookkeeping.unreachableLocks) {
      // The app's store is one Node cannot reach (Laravel 8's stock CACHE_DRIVER=file) and no Redis is
      // named: its restart and pause signals are out of reach too, so the worker reads none (said at start).
      cache = undefined;
    } else if (bookkeeping.cacheStore === 'database') {
      const opened = openDatabaseCache(settings, bookkeeping.lockDb);
      closers.push(() => opened.close());
      cache = opened;
    } else {
      const { cacheClient, lockClient } = redisClients();
      cache = new QueueCache(cacheClient, settings.cachePrefix, settings.cacheSeparator, lockClient);
    }
    let locks = parts.locks;
    if (!locks && !bookkeeping.unreachableLocks) {
      const opened =
        bookkeeping.cacheStore === 'database'
          ? openLockStore(settings, bookkeeping, undefined)
          : openLockStore(settings, bookkeeping, redisClients().lockClient);
      if (opened instanceof DatabaseLockStore) closers.push(() => opened.close());
      locks = opened;
    }
    const batches = new DatabaseBatchRepository(
      databaseConfig(bookkeeping.batchDb ?? settings.failedDb),
      bookkeeping.batchTable ?? 'job_batches',
    );
    closers.push(() => batches.close());
    const worker: Worker = new Worker(
      queue,
      parts.handlers,
      // queue:work's default: the connection's own queue, unless told which to read.
      // failed_jobs names the connection: the driver's own name (queue:work's default connection) unless one is given.
      { queues: [settings.defaultQueue], connectionName: driver, ...parts.options },
      {
        ...failerOf(parts),
        ...(parts.onFailed ? { onFailed: parts.onFailed } : {}),
        ...(parts.logger ? { logger: parts.logger } : {}),
        ...(parts.onError ? { onError: parts.onError } : {}),
        ...(parts.log ? { log: parts.log } : {}),
        ...(cache ? { cache } : {}),
        ...(driver === 'database' && failsReserveErrors(parts.laravel) ? { failReserveErrors: true } : {}),
        ...(parts.encrypter ? { encrypter: parts.encrypter } : {}),
        ...(parts.shapes ? { shapes: parts.shapes } : {}),
        // The words of the failures it records: the app's version where known.
        ...(knownLaravel(parts) !== undefined ? { laravel: knownLaravel(parts) } : {}),
        ...(parts.laravel !== undefined && parts.laravelGiven ? { laravelGiven: true } : {}),
        // A store out of reach: its unique locks are left where they are (the worker says so at start).
        ...(locks ? { locks } : {}),
        ...(bookkeeping.unreachableLocks ? { unreachableLocks: bookkeeping.unreachableLocks } : {}),
        batches,
        ...(parts.telemetry !== undefined ? { telemetry: parts.telemetry } : {}),
        recorders: [
          ...(horizon
            ? [
                horizonWorkerRecorder(
                  horizon.recorder,
                  horizon.hooks(() => worker),
                  // Whether the queue's steps write the records of its moves: the queue says.
                  { queueRecords: queue instanceof RedisQueue && queue.horizon !== undefined },
                ),
              ]
            : []),
          ...(parts.record === false ? [] : [nodeRecorder(recordSourceOf(queue), parts.record, { classes: takenClasses(parts.handlers) })]),
        ],
        connection: {
          redis: whereRedisIs(settings),
          prefix: settings.prefix,
          ...(driver === 'database' ? { database: whereJobsAre(settings) } : {}),
          locks: whereLocksAre(settings, bookkeeping),
          laravel: laravelOf(parts),
        },
      },
    );
    // Beside the run, never in its way: a worker stopped or closed first simply says nothing.
    const looked =
      queue instanceof RedisQueue
        ? sayQueuesElsewhere(queue, parts.options.queues ?? [settings.defaultQueue], settings.prefix, parts)
        : Promise.resolve();
    const supervisor = horizon?.supervisor(worker);
    return {
      worker,
      close,
      looked,
      pause: () => (supervisor ? supervisor.pause() : worker.pause()),
      resume: () => (supervisor ? supervisor.continue() : worker.resume()),
      ...(supervisor ? { supervisor } : {}),
    };
  } catch (error) {
    // The error that stopped the build is the one to hear about; closing what it opened is tidying up.
    void close().catch(() => undefined);
    throw error;
  }
}

interface HorizonParts {
  recorder: HorizonRecorder;
  supervisor(worker: Worker): HorizonSupervisor | undefined;
  hooks(worker: () => Worker): HorizonRunHooks;
}

/**
 * Horizon's side of a worker: the recorder on a client of its own without the app's prefix
 * (Horizon's keys carry Horizon's prefix alone), and the supervisor that shows the worker on the
 * dashboard, made once the worker is, started and stopped with each of its runs.
 */
function openHorizon(parts: WorkerParts, closers: (() => Promise<void> | void)[]): HorizonParts {
  const horizon = parts.horizon!;
  const { settings } = parts;
  const problem = horizonClusterProblem(settings.cluster);
  if (problem) throw new ConnectionSettingsError(problem);
  const client = patientClient({ ...settings, prefix: '' }, settings.url, () => undefined);
  closers.push(() => client.disconnect());
  const connection = parts.options.connectionName ?? 'redis';
  const recorder = new HorizonRecorder(client, {
    prefix: horizon.prefix,
    connection,
    trim: horizon.trim,
    silenced: horizon.silenced,
    batch: true,
  });
  let supervisor: HorizonSupervisor | undefined;
  return {
    recorder,
    /** The supervisor of this worker (made on first need), when the worker shows as one. */
    supervisor(worker: Worker): HorizonSupervisor | undefined {
      if (!horizon.supervisor) return undefined;
      const options = worker.options;
      supervisor ??= new HorizonSupervisor(client, {
        prefix: horizon.prefix,
        connection,
        queues: options.queues,
        processes: Math.max(1, options.concurrency),
        settings: {
          backoff: options.backoff.join(','),
          maxTries: options.tries,
          maxTime: options.maxTime,
          maxJobs: options.maxJobs,
          memory: options.memory,
          timeout: options.timeout,
          sleep: options.sleep,
          rest: options.rest,
        },
        onPause: () => worker.pause(),
        onContinue: () => worker.resume(),
        // horizon:terminate, or a Terminate command: the jobs in hand finish, as on SIGTERM.
        onTerminate: () => void worker.stop({ reason: 'signal' }),
      });
      return supervisor;
    },
    /** The supervisor shown for each run of the worker, and taken off the dashboard at its end. */
    hooks(worker: () => Worker) {
      return {
        start: async () => {
          const shown = this.supervisor(worker());
          if (shown) {
            // A run starts taking jobs: a pause from before it is over, as a new PHP worker is not paused.
            shown.status = 'running';
            await shown.start();
          }
        },
        stop: async () => {
          await supervisor?.stop();
        },
      };
    },
  };
}

/**
 * The queue the worker reads, by the connection's driver: the one place a driver is chosen.
 * The queue's own client is opened here and closed with it.
 */
function openQueue(
  driver: QueueDriver,
  settings: ConnectionSettings,
  options: {
    retryAfter: number | null | undefined;
    blockFor: number | null | undefined;
    laravel?: string;
    horizon?: QueueHorizonRecords;
  },
  closers: (() => Promise<void> | void)[],
): Queue {
  switch (driver) {
    case 'redis': {
      const client = patientClient(settings, settings.url, () => undefined);
      closers.push(() => client.disconnect());
      const queue = new RedisQueue(client, {
        // A chained job naming no queue goes to the connection's queue, as Laravel's dispatch sends it, not to the first queue read.
        defaultQueue: settings.defaultQueue,
        ...(options.retryAfter !== undefined ? { retryAfter: options.retryAfter } : {}),
        ...(options.blockFor !== undefined ? { blockFor: options.blockFor } : {}),
        ...(options.horizon ? { horizon: options.horizon } : {}),
      });
      closers.push(() => queue.close());
      return queue;
    }
    case 'database': {
      // block_for is Redis's: Laravel's database connection has none (its worker sleeps --sleep).
      const queue = openDatabaseQueue(settings, {
        ...(options.retryAfter !== undefined ? { retryAfter: options.retryAfter } : {}),
        ...(options.laravel !== undefined ? { laravel: options.laravel } : {}),
      });
      closers.push(() => queue.close());
      return queue;
    }
  }
}

/**
 * Where the worker's record is kept: beside its queue, on the queue's own Redis client (which
 * carries the app's prefix; a blocking pop has a connection of its own) or in its jobs table's
 * database, so a database-only app keeps it without Redis.
 */
function recordSourceOf(queue: Queue): RecordSource {
  if (queue instanceof RedisQueue) return { redis: queue.client };
  if (queue instanceof DatabaseQueue) return { database: queue.db };
  throw new Error(`no record can be kept beside a ${queue.driver} queue`);
}

/** Where a database connection's jobs are, for the start line: the table and its database (no password). */
function whereJobsAre(settings: ConnectionSettings): string {
  return `${settings.jobsTable} in ${redactUrl(settings.queueDb ?? '(no database)')}`;
}

/**
 * Where the worker frees unique locks and reads the cache (restart, pause), for the start line:
 * the Redis connection and database the app's cache store locks on, and its prefix; or the
 * database store's lock table. A lock looked for in the wrong database is never freed, and
 * nothing else shows it.
 */
function whereLocksAre(settings: ConnectionSettings, bookkeeping: Bookkeeping): string {
  if (bookkeeping.unreachableLocks) return 'out of reach (no unique lock is released)';
  if (bookkeeping.cacheStore === 'database')
    return `${bookkeeping.lockTable ?? 'cache_locks'} in ${redactUrl(bookkeeping.lockDb ?? settings.failedDb)}`;
  return `${whereRedisIs(settings, settings.lockUrl)}, cache prefix ${JSON.stringify(settings.cachePrefix)}`;
}

/**
 * Where unique locks live: Laravel's default cache store. Redis keeps them on the store's lock
 * connection under the cache prefix; the database store in its lock table, in the app's database
 * unless another is named.
 */
export function openLockStore(
  settings: ConnectionSettings,
  bookkeeping: Bookkeeping,
  lockClient: RedisClient | undefined,
): UniqueLockStore {
  if (bookkeeping.cacheStore !== 'database' && !lockClient) throw new Error('the Redis cache store needs its lock connection');
  return bookkeeping.cacheStore === 'database' || !lockClient
    ? new DatabaseLockStore(
        databaseConfig(bookkeeping.lockDb ?? settings.failedDb),
        bookkeeping.lockTable ?? 'cache_locks',
        settings.cachePrefix,
      )
    : new RedisLockStore(lockClient, settings.cachePrefix, settings.cacheSeparator);
}

/**
 * Where failed jobs go: the store given, else none when onFailed is their record, else the
 * app's failed_jobs. With none of these the Worker refuses to start: it never loses them silently.
 */
/**
 * The SQL drivers of every store the worker will write, loaded before it starts: a missing one
 * (a stock SQLite app without better-sqlite3) would show only at the first failure, leaving that
 * job reserved to come back after retry_after, and an embedded worker would say nothing at all.
 * A MissingDriverError names the package and the install line. A server that does not answer
 * yet is another matter: an outage, waited out.
 */
function refuseMissingDrivers(parts: WorkerParts): void {
  const { settings, bookkeeping } = parts;
  const urls = new Set<string>();
  const appDatabase = parts.failer === undefined && !parts.onFailed && parts.defaultFailer !== undefined;
  if (appDatabase) urls.add(settings.failedDb);
  if (bookkeeping.batchDb !== undefined || appDatabase) urls.add(bookkeeping.batchDb ?? settings.failedDb);
  if (bookkeeping.cacheStore === 'database' && !bookkeeping.unreachableLocks) urls.add(bookkeeping.lockDb ?? settings.failedDb);
  if ((parts.driver ?? settings.queueConnection) === 'database' && settings.queueDb !== undefined) urls.add(settings.queueDb);
  for (const url of urls) loadDriver(databaseConfig(url).dialect);
}

function failerOf(parts: WorkerParts): { failer?: FailedJobProvider | false } {
  if (parts.failer !== undefined) return { failer: parts.failer };
  if (parts.onFailed) return { failer: false };
  return parts.defaultFailer ? { failer: parts.defaultFailer() } : {};
}

/**
 * Once, as the worker starts: when every queue it reads is empty, a bounded look for the same
 * queues under another prefix (elsewhere.ts), said in one line. A look that cannot be made (the
 * worker stopped and closed its client first) says nothing.
 */
function sayQueuesElsewhere(queue: RedisQueue, queues: readonly string[], prefix: string, parts: WorkerParts): Promise<void> {
  // Never more than a moment: a Redis that does not answer yet is the worker's own outage to report.
  const moment = new Promise<void>((resolve) => setTimeout(resolve, ELSEWHERE_LOOK_MS).unref());
  const look = (async () => {
    const sizes = await Promise.all(queues.map((name) => queue.size(name)));
    if (sizes.some((size) => size > 0)) return;
    const line = elsewhereLine(await queuesElsewhere(queue.client, prefix, queues), prefix);
    if (!line) return;
    parts.log?.({ event: 'warning', reason: line });
    parts.logger?.warn({ event: 'warning', prefix }, line);
  })().catch(() => undefined);
  return Promise.race([look, moment]);
}

/** How long a worker's start waits, at most, for the look under the other spelling. */
const ELSEWHERE_LOOK_MS = 2000;

/** The app's Laravel version where something says it: `laravel` (--laravel, vendor/composer/installed.json), else the shapes file. */
function knownLaravel(parts: WorkerParts): string | undefined {
  return parts.laravel ?? parts.shapes?.laravel ?? undefined;
}

/**
 * The Laravel version the start line names: the app's, else the shapes'; else that it is
 * unknown, said this once, and how each job is then read (laravelOfJob.ts).
 */
function laravelOf(parts: WorkerParts): string {
  return knownLaravel(parts) ?? UNKNOWN_LARAVEL;
}

/** What the start line says where no version is known. */
export const UNKNOWN_LARAVEL =
  "unknown (neither the app's vendor/composer/installed.json nor --laravel says: each job read as its payload shows, createdAt 12.11+, a lock in its hidden context 11.39+, else 8)";
