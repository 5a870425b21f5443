/**
 * Where `lqb` finds Redis, the key prefix, the cache, the APP_KEY and the failed-jobs
 * database: flags first, then the environment, then a Laravel `.env` (--env) read the way
 * Laravel's default config reads it. The reading is the library's (src/connect/settings.ts),
 * the one `connect()` uses; here are the flags that feed it and the CLI's clients.
 */
import type { RedisClient } from '../redis/index.js';
import { DatabaseUuidFailedJobProvider } from '../worker/index.js';
import { ConnectionSettingsError, resolveConnection, type ConnectionOptions, type ConnectionSettings } from '../connect/settings.js';
import { openBoundedClient, patientClient } from '../connect/clients.js';
import { UsageError } from './command.js';
import { redactSecrets, redactUrl } from '../connect/redact.js';

export { PREFIX_STYLES, installedLaravel, prefixStyle, readEnvFile, type LaravelEnv } from '../connect/settings.js';
export { RedisUnavailable } from '../connect/clients.js';

export type Connection = ConnectionSettings;

/** The flags every command that talks to Redis takes. */
export const connectionFlags = {
  redis: { type: 'string' },
  'redis-ca': { type: 'string' },
  cluster: { type: 'string' },
  prefix: { type: 'string' },
  'default-queue': { type: 'string' },
  env: { type: 'string' },
  'cache-db': { type: 'string' },
  'cache-prefix': { type: 'string' },
  'failed-db': { type: 'string' },
  'failed-table': { type: 'string' },
  key: { type: 'string' },
  cipher: { type: 'string' },
  laravel: { type: 'string' },
} as const;

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
    cachePrefix: text(values['cache-prefix']),
    failedDb: text(values['failed-db']),
    failedTable: text(values['failed-table']),
    key: text(values.key),
    cipher: text(values.cipher),
    laravel: text(values.laravel),
  };
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as ConnectionOptions;
  const connection = asUsage(() => resolveConnection(given));
  return connection.redisCa?.from === 'redisCa' ? { ...connection, redisCa: { ...connection.redisCa, from: '--redis-ca' } } : connection;
}

/** A setting the library refuses is a usage error to the CLI (exit 2). */
function asUsage<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof ConnectionSettingsError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * How long a one-off command waits for Redis to connect (and to finish a TLS handshake): a
 * server that does not answer, such as a plain port given a TLS hello, is reported after this.
 */
const ONE_OFF_CONNECT_MS = 3000;
/** How long a one-off command waits for one reply once connected, so a stalled server ends it too. */
const ONE_OFF_COMMAND_MS = 30_000;

/** The queue connection, prefixed as Laravel prefixes it, for a worker: it waits out an outage, logging why. */
export function queueClient(connection: Connection): RedisClient {
  return asUsage(() => patientClient(connection, connection.url, (line) => process.stderr.write(`${redactSecrets(line)}\n`)));
}

/** The cache connection (for restart signals and maxExceptions), under the same client prefix. */
export function cacheClient(connection: Connection): RedisClient {
  return queueClient({ ...connection, url: connection.cacheUrl });
}

/**
 * The queue connection for a one-off command (dispatch, size, clear, retry…): ready, or an
 * error naming why not within a few seconds, never a wait for a Redis that is not coming.
 */
export function openQueueClient(connection: Connection): Promise<RedisClient> {
  return openOneOff(connection, connection.url);
}

/** The cache connection for a one-off command (restart). */
export function openCacheClient(connection: Connection): Promise<RedisClient> {
  return openOneOff(connection, connection.cacheUrl);
}

async function openOneOff(connection: Connection, url: string): Promise<RedisClient> {
  try {
    return await openBoundedClient(connection, url, { connectTimeout: ONE_OFF_CONNECT_MS, commandTimeout: ONE_OFF_COMMAND_MS });
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

/** The APP_KEY (and cipher) for encrypted jobs, for `lqb decode`. */
export interface AppKeySettings {
  appKey?: string;
  cipher?: string;
}

export function appKeyFrom(values: Flags): AppKeySettings {
  const { appKey, cipher } = connectionFrom(values);
  return { appKey, cipher };
}
