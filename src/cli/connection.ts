/**
 * Where `lqb` finds Redis, the key prefix, the cache, the APP_KEY and the failed-jobs
 * database: flags first, then the environment, then a Laravel `.env` (--env) read the way
 * Laravel's default config reads it.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { connectRedis, type RedisClient } from '../redis/index.js';
import { UsageError } from './command.js';
import { slug } from './slug.js';

export interface LaravelEnv {
  [key: string]: string | undefined;
}

/** Reads a Laravel `.env` file; `${VAR}` references are expanded as Laravel's dotenv does. */
export function readEnvFile(path: string): LaravelEnv {
  const raw = parseDotenv(readFileSync(path));
  const expanded: LaravelEnv = {};
  for (const [key, value] of Object.entries(raw)) {
    expanded[key] = value.replace(/\$\{([A-Z0-9_]+)\}/gi, (_, name: string) => expanded[name] ?? raw[name] ?? process.env[name] ?? '');
  }
  return expanded;
}

/**
 * A value as Laravel's env() reads it: "null" and "(null)" are no value, "empty" and "(empty)"
 * the empty string.
 */
function envValue(value: string | undefined): string | undefined {
  if (value === 'null' || value === '(null)') return undefined;
  return value === 'empty' || value === '(empty)' ? '' : value;
}

/** The flags every command that talks to Redis takes. */
export const connectionFlags = {
  redis: { type: 'string' },
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
} as const;

type Flags = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Connection {
  url: string;
  /** Seed nodes (host:port) of a Redis Cluster; when set, `url` is not used. */
  cluster?: string[];
  prefix: string;
  /**
   * The connection's own queue (Laravel's `queue.connections.redis.queue`): what a command works
   * on when no --queue is given, and where a job naming none goes.
   */
  defaultQueue: string;
  /** The cache connection's URL (Laravel's `cache` Redis connection). */
  cacheUrl: string;
  cachePrefix: string;
  failedDb: string;
  /** The failed-jobs table (Laravel's `queue.failed.table`). */
  failedTable: string;
  appKey?: string;
  cipher: string;
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

export function connectionFrom(values: Flags): Connection {
  const fromFile = typeof values.env === 'string' ? readEnvFile(values.env) : undefined;
  // As in Laravel, the process's environment wins over the .env file.
  const env = (name: string) => envValue(process.env[name] ?? fromFile?.[name]);
  // With --env, Redis is Laravel's `default` connection unless --redis names one.
  const laravel = fromFile !== undefined && text(values.redis) === undefined;
  const url = redisUrl(text(values.redis) ?? (laravel ? laravelRedisUrl(env, env('REDIS_DB') ?? '0') : env('REDIS_URL')) ?? 'redis://127.0.0.1:6379');
  const appName = slug(env('APP_NAME') ?? 'laravel');
  const prefix = text(values.prefix) ?? env('REDIS_PREFIX') ?? (fromFile ? `${appName}_database_` : '');
  const defaultQueue = text(values['default-queue']) ?? (env('REDIS_QUEUE') || 'default');
  // Laravel's config keeps the cache on database 1 (REDIS_CACHE_DB); without a .env, the queue's own.
  const cacheDb = text(values['cache-db']) ?? env('REDIS_CACHE_DB') ?? (fromFile ? '1' : undefined);
  const cacheUrl = laravel && values['cache-db'] === undefined ? laravelRedisUrl(env, cacheDb!) : cacheDb === undefined ? url : withDatabase(url, cacheDb);
  const cachePrefix = text(values['cache-prefix']) ?? env('CACHE_PREFIX') ?? `${appName}_cache`;
  // A relative SQLite path is the app's (its .env's folder), as Laravel's database_path() is.
  const appDir = typeof values.env === 'string' ? dirname(resolve(values.env)) : process.cwd();
  const failedDb = text(values['failed-db']) ?? process.env.LQB_FAILED_DB ?? databaseUrlFrom(fromFile, appDir) ?? 'failed-jobs.sqlite';
  const appKey = text(values.key) ?? env('APP_KEY');
  const cipher = text(values.cipher) ?? env('APP_CIPHER') ?? 'AES-256-CBC';
  const nodes = text(values.cluster) ?? env('REDIS_CLUSTER');
  const cluster = nodes ? nodes.split(',').map((n) => n.trim()).filter(Boolean) : undefined;
  const failedTable = text(values['failed-table']) ?? process.env.LQB_FAILED_TABLE ?? 'failed_jobs';
  return { url, prefix, defaultQueue, cacheUrl, cachePrefix, failedDb, failedTable, ...(appKey ? { appKey } : {}), cipher, ...(cluster ? { cluster } : {}) };
}

/**
 * A Redis connection of Laravel 8's default config/database.php: REDIS_HOST, REDIS_PORT,
 * REDIS_PASSWORD and the given database, each unless REDIS_URL has that part (Laravel's
 * ConfigurationUrlParser lets the URL's parts win). 8.83's connectors take no username, so
 * REDIS_USERNAME means nothing to it; one in REDIS_URL is kept.
 */
function laravelRedisUrl(env: (name: string) => string | undefined, database: string): string {
  const given = new URL(env('REDIS_URL') || 'redis://');
  const password = given.password || (env('REDIS_PASSWORD') ? encodeURIComponent(env('REDIS_PASSWORD')!) : '');
  const auth = given.username || password ? `${given.username}${password ? `:${password}` : ''}@` : '';
  const host = given.hostname || env('REDIS_HOST') || '127.0.0.1';
  const port = given.port || env('REDIS_PORT') || '6379';
  const db = given.pathname.length > 1 ? given.pathname.slice(1) : database;
  return `${given.protocol}//${auth}${host}:${port}/${db}`;
}

/** A Redis URL as given, refused at once when it is none: otherwise ioredis retries it and reports only that it gave up. */
function redisUrl(url: string): string {
  let protocol: string | undefined;
  try {
    protocol = new URL(url).protocol;
  } catch {
    protocol = undefined;
  }
  // tcp:// is what Laravel's own REDIS_URL examples may use; ioredis reads it as redis://.
  if (protocol !== 'redis:' && protocol !== 'rediss:' && protocol !== 'tcp:') throw new UsageError(`${JSON.stringify(url)} is not a redis:// or rediss:// URL`);
  return url;
}

function withDatabase(url: string, db: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${db}`;
  return parsed.toString();
}

/** DB_CONNECTION and friends, as a URL the failed-jobs store takes. */
function databaseUrlFrom(env: LaravelEnv | undefined, appDir: string): string | undefined {
  if (!env?.DB_CONNECTION) return undefined;
  if (env.DB_URL) return env.DB_URL;
  const user = encodeURIComponent(env.DB_USERNAME ?? 'root');
  const password = env.DB_PASSWORD ? `:${encodeURIComponent(env.DB_PASSWORD)}` : '';
  switch (env.DB_CONNECTION) {
    case 'sqlite':
      return `sqlite://${resolve(appDir, env.DB_DATABASE ?? 'database/database.sqlite')}`;
    case 'mysql':
    case 'mariadb':
      return `mysql://${user}${password}@${env.DB_HOST ?? '127.0.0.1'}:${env.DB_PORT ?? 3306}/${env.DB_DATABASE ?? 'laravel'}`;
    case 'pgsql':
      return `postgres://${user}${password}@${env.DB_HOST ?? '127.0.0.1'}:${env.DB_PORT ?? 5432}/${env.DB_DATABASE ?? 'laravel'}`;
    default:
      return undefined;
  }
}

/** The queue connection, prefixed as Laravel prefixes it. */
export function queueClient(connection: Connection, options: { giveUp?: boolean } = {}): RedisClient {
  // A worker waits out an outage; a one-off command gives up after a few tries and says why.
  const redisOptions = options.giveUp ? { maxRetriesPerRequest: 2, retryStrategy: (times: number) => (times > 3 ? null : times * 200) } : undefined;
  return connectRedis({ url: connection.url, prefix: connection.prefix, cluster: connection.cluster, redisOptions, log: options.giveUp ? () => undefined : undefined });
}

/** The cache connection (for restart signals and maxExceptions), under the same client prefix. */
export function cacheClient(connection: Connection, options: { giveUp?: boolean } = {}): RedisClient {
  return queueClient({ ...connection, url: connection.cacheUrl }, options);
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
