/**
 * The queue connection's driver and the cache store, chosen once for every caller (the worker's
 * builder, connect(), the CLI): which queue to open, and where the worker's cache lives. A
 * database-only app (Laravel 11+'s skeleton: `QUEUE_CONNECTION=database`, `CACHE_STORE=database`,
 * no REDIS_URL) opens no Redis connection at all.
 */
import { DatabaseQueue, databaseConfig } from '../database/index.js';
import { LARAVEL_PROFILES, type LaravelProfile } from '../laravel/index.js';
import { DatabaseQueueCache } from '../worker/DatabaseQueueCache.js';
import { atLeast, parseVersion } from '../worker/locks/uniqueKeys.js';
import { ConnectionSettingsError, type ConnectionSettings, type EnvCacheStore } from './settings.js';

/**
 * Laravel's default cache store: the one given, else the one CACHE_DRIVER / CACHE_STORE names
 * (redis or database), else `database` for a database queue connection with no Redis given or
 * named (what Laravel 11+'s skeleton sets up), else `redis`. A store Node cannot reach (file…)
 * counts as neither: Redis where Redis is the queue's, else the database.
 */
export function cacheStoreOf(
  settings: Pick<ConnectionSettings, 'queueConnection' | 'redisNamed'>,
  given: 'redis' | 'database' | undefined,
  fromEnv: EnvCacheStore | undefined,
): 'redis' | 'database' {
  if (given !== undefined) return given;
  if (fromEnv?.store === 'redis' || fromEnv?.store === 'database') return fromEnv.store;
  return withoutRedis(settings) ? 'database' : 'redis';
}

/** A database queue connection with no Redis given or named: nothing of the app's is in Redis. */
export function withoutRedis(settings: Pick<ConnectionSettings, 'queueConnection' | 'redisNamed'>): boolean {
  return settings.queueConnection === 'database' && !settings.redisNamed;
}

/** The database of the database connection, or a one-line refusal naming where it is given. */
export function queueDbOf(settings: ConnectionSettings): string {
  if (settings.queueDb === undefined)
    throw new ConnectionSettingsError(
      'the database queue connection needs its database: --queue-db=URL (sqlite:///path, mysql://, postgres://), LQB_QUEUE_DB, or DB_CONNECTION and DB_* through --env',
    );
  return settings.queueDb;
}

/**
 * Laravel's `database` queue connection over the jobs table, as the app's version runs it
 * (its reserve lock rules). Closing it closes its database.
 */
export function openDatabaseQueue(
  settings: ConnectionSettings,
  options: { retryAfter?: number | null; laravel?: string } = {},
): DatabaseQueue {
  const url = queueDbOf(settings);
  try {
    databaseConfig(url);
  } catch (error) {
    throw new ConnectionSettingsError(`the queue database: ${(error as Error).message}`);
  }
  const profile = profileOfVersion(options.laravel);
  return DatabaseQueue.open(url, {
    table: settings.jobsTable,
    defaultQueue: settings.defaultQueue,
    ...(options.retryAfter !== undefined ? { retryAfter: options.retryAfter } : {}),
    ...(profile ? { laravel: profile } : {}),
  });
}

/**
 * The worker's cache in Laravel's database store: the `cache` table of the store's database
 * (the app's own unless another is named), keys under the cache prefix.
 */
export function openDatabaseCache(settings: ConnectionSettings, db: string | undefined): DatabaseQueueCache {
  return new DatabaseQueueCache(databaseConfig(db ?? settings.failedDb), 'cache', settings.cachePrefix);
}

/** Whether the app's Laravel fails a job whose reserve threw (12.54+), rather than leave it to block the queue. */
export function failsReserveErrors(laravel: string | undefined): boolean {
  const version = parseVersion(laravel);
  return version !== null && atLeast(version, 12, 54);
}

/** The payload profile of a version string (8.83.29, v12.1, 11), or undefined when it names none. */
function profileOfVersion(version: string | undefined): LaravelProfile | undefined {
  if (version === undefined) return undefined;
  const text = version.replace(/^v/, '');
  const major = text.startsWith('5.') ? '5.8' : text.split('.')[0]!;
  return (LARAVEL_PROFILES as readonly string[]).includes(major) ? (major as LaravelProfile) : undefined;
}
