/**
 * Where `lqb` finds Redis, the key prefix, the cache, the APP_KEY and the failed-jobs
 * database: flags first, then the environment, then a Laravel `.env` (--env) read the way
 * Laravel's default config reads it. The reading is the library's (src/connect/settings.ts),
 * the one `connect()` uses; here are the flags that feed it and the CLI's clients.
 */
import { RedisQueue, type RedisClient } from '../redis/index.js';
import { DatabaseUuidFailedJobProvider, QueueCache, type WorkerCache } from '../worker/index.js';
import type { Queue, QueueDriver } from '../queue/index.js';
import { openDatabaseCache, openDatabaseQueue } from '../connect/drivers.js';
import { lockStoreFrom } from './bookkeeping.js';
import {
  ConnectionSettingsError,
  appLaravelVersion,
  laravelOnlyGiven,
  resolveConnection,
  type ConnectionOptions,
  type ConnectionSettings,
} from '../connect/settings.js';
import { openBoundedClient, patientClient } from '../connect/clients.js';
import { connectWith, type ConnectOptions, type LaravelQueue } from '../connect/connect.js';
import { UsageError } from './command.js';
import { redactLine, redactUrl } from '../connect/redact.js';
import { appEncrypter } from '../connect/appKey.js';
import type { Encrypter } from '../laravel/index.js';

export { PREFIX_STYLES, installedLaravel, prefixStyle, readEnvFile, type LaravelEnv } from '../connect/settings.js';

export type Connection = ConnectionSettings;

/** The flags every command that talks to Redis takes. */
export const connectionFlags = {
  redis: {
    type: 'string',
    value: 'URL',
    group: 'Connection',
    description:
      "the Redis server (rediss:// for TLS); with --env, the .env's REDIS_URL or REDIS_HOST, REDIS_PORT, REDIS_PASSWORD, REDIS_DB",
    env: 'REDIS_URL',
    default: 'redis://127.0.0.1:6379',
  },
  'redis-ca': {
    type: 'string',
    value: 'FILE',
    group: 'Connection',
    description: "a PEM file of the CA that signed a rediss:// server's certificate, trusted beside the system's",
    env: 'REDIS_CA',
  },
  cluster: {
    type: 'string',
    value: 'HOST:PORT,…',
    group: 'Connection',
    description: 'seed nodes of a Redis Cluster, instead of --redis',
    env: 'REDIS_CLUSTER',
  },
  prefix: {
    type: 'string',
    value: 'P',
    group: 'Connection',
    description:
      "the key prefix (Laravel's database.redis.options.prefix), as the app's default config derives it from APP_NAME (the .env's, else the environment's); an empty value is none",
    env: 'REDIS_PREFIX',
    default: '{slug of APP_NAME}_database_: laravel_database_',
  },
  'default-queue': {
    type: 'string',
    value: 'Q',
    group: 'Connection',
    description: "the connection's own queue: used without --queue, and where a chained job naming none goes",
    env: 'REDIS_QUEUE',
    default: 'default',
  },
  env: {
    type: 'string',
    value: 'PATH',
    group: 'Connection',
    description: "a Laravel .env, read as Laravel's default config reads it (the process's environment wins over it)",
  },
  'cache-db': {
    type: 'string',
    value: 'N',
    group: 'Connection',
    description: "the cache connection's Redis database (restart signals, pauses, maxExceptions, rate limits)",
    env: 'REDIS_CACHE_DB',
    default: "1 with --env, else the queue's",
  },
  'cache-lock-db': {
    type: 'string',
    value: 'N',
    group: 'Connection',
    description:
      "the Redis database of the cache store's lock connection (unique and withoutOverlapping locks); with --env, the connection REDIS_CACHE_LOCK_CONNECTION names, as the app's config does",
    env: 'LQB_CACHE_LOCK_DB',
    default: "the queue's (lock_connection `default`)",
  },
  'cache-prefix': {
    type: 'string',
    value: 'P',
    group: 'Connection',
    description: "Laravel's cache.prefix",
    env: 'CACHE_PREFIX',
    default: "{slug of APP_NAME}_cache, as the app's version spells it",
  },
  'failed-db': {
    type: 'string',
    value: 'URL',
    group: 'Connection',
    description: "the failed_jobs database: sqlite:///path, mysql://, mariadb://, postgres://; with --env, the .env's DB_*",
    env: 'LQB_FAILED_DB',
    default: "failed-jobs.sqlite; the database connection's database when that is the connection",
  },
  'failed-table': {
    type: 'string',
    value: 'NAME',
    group: 'Connection',
    description: "the failed-jobs table (Laravel's queue.failed.table)",
    env: 'LQB_FAILED_TABLE',
    default: 'failed_jobs',
  },
  connection: {
    type: 'string',
    value: 'NAME',
    group: 'Connection',
    description: "the queue connection, as the app's config names it: redis or database (`lqb work database` says the same)",
    env: 'QUEUE_CONNECTION',
    default: 'redis',
  },
  'queue-db': {
    type: 'string',
    value: 'URL',
    group: 'Connection',
    description: "the database connection's database: sqlite:///path, mysql://, mariadb://, postgres://; with --env, the .env's DB_*",
    env: 'LQB_QUEUE_DB',
  },
  'jobs-table': {
    type: 'string',
    value: 'NAME',
    group: 'Connection',
    description: "the database connection's jobs table (queue.connections.database.table)",
    env: 'DB_QUEUE_TABLE',
    default: 'jobs',
  },
  key: {
    type: 'string',
    value: 'APP_KEY',
    group: 'Connection',
    description: "the app's key, for encrypted jobs (base64:… as in .env)",
    env: 'APP_KEY',
  },
  cipher: {
    type: 'string',
    value: 'CIPHER',
    group: 'Connection',
    description: "the app's cipher: AES-256-CBC, AES-128-CBC, AES-256-GCM or AES-128-GCM",
    env: 'APP_CIPHER',
    default: 'AES-256-CBC',
  },
  laravel: {
    type: 'string',
    value: 'VERSION',
    group: 'Connection',
    description:
      "the app's Laravel version, for its prefixes, key spellings and failure words, where no vendor/composer/installed.json is beside the .env (that one wins)",
    default: "laravel/framework's in vendor/composer/installed.json beside the .env, else each job's payload's",
  },
} satisfies import('./command.js').Options;

type Flags = Record<string, string | boolean | (string | boolean)[] | undefined>;

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The flags as the library's options; `--redis-ca` is named as the flag in its errors. */
export function connectionFrom(values: Flags): Connection {
  const options: ConnectionOptions = {
    env: text(values.env),
    redis: text(values.redis),
    redisCa: text(values['redis-ca']),
    cluster: text(values.cluster),
    prefix: text(values.prefix),
    defaultQueue: text(values['default-queue']),
    cacheDb: text(values['cache-db']),
    cacheLockDb: text(values['cache-lock-db']),
    cachePrefix: text(values['cache-prefix']),
    failedDb: text(values['failed-db']),
    failedTable: text(values['failed-table']),
    connection: text(values.connection),
    queueDb: text(values['queue-db']),
    jobsTable: text(values['jobs-table']),
    key: text(values.key),
    cipher: text(values.cipher),
    laravel: text(values.laravel),
  };
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as ConnectionOptions;
  const connection = asUsage(() => resolveConnection(given));
  return connection.redisCa?.from === 'redisCa' ? { ...connection, redisCa: { ...connection.redisCa, from: '--redis-ca' } } : connection;
}

/**
 * The settings for a command that takes artisan's CONNECTION argument (`lqb work database`, as
 * `queue:work database`): `redis` or `database` there selects that driver, as the app's config
 * names its connections; another name (an app's own connection) is only the name failed_jobs
 * records, and the flags or QUEUE_CONNECTION choose the driver.
 */
export function connectionNamed(values: Flags, argument: string | undefined): Connection {
  const driver = argument === 'redis' || argument === 'database' ? argument : undefined;
  const flag = text(values.connection);
  if (driver && flag !== undefined && flag !== driver)
    throw new UsageError(`the connection ${JSON.stringify(argument)} and --connection=${flag} say different connections: give one`);
  return connectionFrom(driver ? { ...values, connection: driver } : values);
}

/** The settings for a command that speaks Redis alone (cancel, ui, horizon): the database connection is refused in one line. */
export function redisConnectionFrom(values: Flags, command: string): Connection {
  const connection = connectionFrom(values);
  if (connection.queueConnection === 'database')
    throw new UsageError(
      `lqb ${command} works on the redis connection, and the connection is database (--connection or QUEUE_CONNECTION): give --connection=redis`,
    );
  return connection;
}

/** A setting the library refuses is a usage error to the CLI (exit 2). */
export function asUsage<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof ConnectionSettingsError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * How long a one-off command waits: for Redis to connect (and to finish a TLS handshake), so a
 * server that does not answer, such as a plain port given a TLS hello, is reported after it;
 * and for one reply once connected, so a stalled server ends it too.
 */
const ONE_OFF_TIMEOUTS = { connectTimeout: 3000, commandTimeout: 30_000 } as const;

/**
 * The queue connection, prefixed as Laravel prefixes it, for a worker: it waits out an outage,
 * logging why to standard error, unless `log` takes the lines (a Worker watching its clients says
 * an outage once itself).
 */
export function queueClient(
  connection: Connection,
  log: (line: string) => void = (line) => process.stderr.write(`${redactLine(line)}\n`),
): RedisClient {
  return asUsage(() => patientClient(connection, connection.url, log));
}

/** The cache connection (for restart signals and maxExceptions), under the same client prefix. */
export function cacheClient(connection: Connection, log?: (line: string) => void): RedisClient {
  return queueClient({ ...connection, url: connection.cacheUrl }, log);
}

/** The cache store's lock connection (unique and overlap locks), under the same client prefix. */
export function lockClient(connection: Connection): RedisClient {
  return queueClient({ ...connection, url: connection.lockUrl });
}

/**
 * The queue connection for a one-off command (size, clear, retry…), handed to `use` and
 * disconnected after: ready, or an error naming why not within a few seconds, never a wait for
 * a Redis that is not coming.
 */
export function withQueueClient<T>(connection: Connection, use: (client: RedisClient) => Promise<T>): Promise<T> {
  return withOneOff(connection, connection.url, use);
}

/** The cache connection for a one-off command (restart, pause), as withQueueClient. */
export function withCacheClient<T>(connection: Connection, use: (client: RedisClient) => Promise<T>): Promise<T> {
  return withOneOff(connection, connection.cacheUrl, use);
}

async function withOneOff<T>(connection: Connection, url: string, use: (client: RedisClient) => Promise<T>): Promise<T> {
  const client = await openOneOff(connection, url);
  try {
    return await use(client);
  } finally {
    client.disconnect();
  }
}

/**
 * The queue of a connection for a one-off command (size, clear, retry), by its driver: a
 * RedisQueue on a client that is ready or refused within seconds, or the database connection's
 * jobs table (no Redis opened); handed to `use` and closed after.
 */
export async function withQueue<T>(
  connection: Connection,
  use: (queue: Queue) => Promise<T>,
  driver: QueueDriver = connection.queueConnection,
): Promise<T> {
  const { queue, close } = await openOneOffQueue(connection, driver);
  try {
    return await use(queue);
  } finally {
    await close();
  }
}

/** withQueue's queue, and how to let go of it, for a command that may open both drivers (retry). */
export async function openOneOffQueue(
  connection: Connection,
  driver: QueueDriver = connection.queueConnection,
): Promise<{ queue: Queue; close: () => Promise<void> }> {
  if (driver === 'redis') {
    const client = await openOneOff(connection, connection.url);
    return { queue: new RedisQueue(client, { defaultQueue: connection.defaultQueue }), close: async () => client.disconnect() };
  }
  const queue = asUsage(() => openDatabaseQueue(connection));
  return { queue, close: () => queue.close() };
}

/**
 * The app's cache for a one-off command (restart, pause): Redis's cache connection, or the
 * database store's `cache` table where the app keeps its cache there (--cache-store,
 * CACHE_DRIVER / CACHE_STORE, or a database connection with no Redis named).
 */
export async function withCache<T>(connection: Connection, values: Flags, use: (cache: WorkerCache) => Promise<T>): Promise<T> {
  const { cacheStore, lockDb, unreachableLocks } = lockStoreFrom(values, connection);
  // A store Node cannot reach (file…) and no Redis named: there is nowhere Laravel would read what this writes.
  if (cacheStore === 'database' && unreachableLocks)
    throw new UsageError(
      `${unreachableLocks.split(', whose locks')[0]}, which Node cannot reach, and no Redis is named: give --cache-store=database or redis`,
    );
  if (cacheStore === 'redis')
    return withCacheClient(connection, (client) => use(new QueueCache(client, connection.cachePrefix, connection.cacheSeparator)));
  const cache = asUsage(() => openDatabaseCache(connection, lockDb));
  try {
    return await use(cache);
  } finally {
    await cache.close();
  }
}

/**
 * connect() for a one-off command (dispatch, find) on the settings the flags resolved, with the
 * one-off timeouts and the --env (for the app's Laravel and cache store); handed to `use` and closed after.
 */
export async function withLaravelQueue<T>(
  connection: Connection,
  values: Flags,
  options: ConnectOptions,
  use: (queue: LaravelQueue) => Promise<T>,
): Promise<T> {
  let queue: LaravelQueue | undefined;
  try {
    // APP_KEY and APP_CIPHER are checked as lqb work checks them, so a refusal names the flag that set them.
    encrypterFrom(values, connection);
    queue = await connectWith(connection, {
      ...ONE_OFF_TIMEOUTS,
      ...options,
      ...(typeof values.env === 'string' ? { env: values.env } : {}),
    });
    return await use(queue);
  } finally {
    await queue?.close();
  }
}

async function openOneOff(connection: Connection, url: string): Promise<RedisClient> {
  try {
    return await openBoundedClient(connection, url, ONE_OFF_TIMEOUTS);
  } catch (error) {
    if (error instanceof ConnectionSettingsError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * The failed-jobs store the settings name (--failed-db, LQB_FAILED_DB or the .env's DB_*). A
 * URL of a scheme no driver here takes, or a server URL that does not parse, is a usage error
 * naming it, its password hidden; whether the database answers is for the first query to say.
 */
export function failedJobStore(connection: Connection): DatabaseUuidFailedJobProvider {
  const url = connection.failedDb;
  try {
    if (/^(mysql|mariadb|postgres|postgresql|pgsql):/i.test(url)) new URL(url);
    return DatabaseUuidFailedJobProvider.fromUrl(url, connection.failedTable);
  } catch (error) {
    throw new UsageError(`the failed-jobs database ${JSON.stringify(redactUrl(url))} cannot be used: ${(error as Error).message}`);
  }
}

/**
 * The app's Encrypter for encrypted jobs, when there is a key: the library's one check of the
 * key and cipher (appKey.ts), a refusal a usage error naming the flag or variable that set it.
 */
export function encrypterFrom(values: Flags, connection: Connection): Encrypter | undefined {
  return asUsage(() =>
    appEncrypter(connection, {
      key: values.key === undefined ? 'APP_KEY' : '--key',
      cipher: values.cipher === undefined ? 'APP_CIPHER' : '--cipher',
    }),
  );
}

/** The APP_KEY (and cipher) for encrypted jobs, for `lqb decode`. */
export interface AppKeySettings {
  appKey?: string;
  cipher?: string;
}

export function appKeyFrom(values: Flags): AppKeySettings {
  const { appKey, cipher } = connectionFrom(values);
  return { appKey, cipher };
}

/**
 * The connection Horizon's records are on, for a one-off command: the queue's Redis (Horizon's
 * `use` is the app's `default` connection), without the app's Redis prefix, which Horizon
 * replaces with its own.
 */
export function withHorizonClient<T>(connection: Connection, use: (client: RedisClient) => Promise<T>): Promise<T> {
  return withOneOff({ ...connection, prefix: '' }, connection.url, use);
}

/**
 * The app's Laravel version, the one answer every command asks (appLaravelVersion):
 * laravel/framework in vendor/composer/installed.json beside the `--env`, else `--laravel`;
 * undefined when neither says.
 */
export function appLaravel(values: Flags): string | undefined {
  return appLaravelVersion(...laravelFlags(values));
}

/** Whether appLaravel's answer is only --laravel's (no installed.json beside --env): a job's payload then outranks it. */
export function appLaravelOnlyGiven(values: Flags): boolean {
  return laravelOnlyGiven(...laravelFlags(values));
}

function laravelFlags(values: Flags): [string | undefined, string | undefined] {
  return [typeof values.laravel === 'string' ? values.laravel : undefined, typeof values.env === 'string' ? values.env : undefined];
}
