/**
 * Where `lqb` finds Redis, the key prefix, the cache, the APP_KEY and the failed-jobs
 * database: flags first, then the environment, then a Laravel `.env` (--env) read the way
 * Laravel's default config reads it.
 */
import { readFileSync } from 'node:fs';
import { parse as parseDotenv } from 'dotenv';
import { connectRedis, type RedisClient } from '../redis/index.js';

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

/** Str::slug($value, '_'), enough for an APP_NAME. */
function slug(value: string): string {
  return value
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9\s_-]+/g, '')
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '_');
}

/** Laravel's default Redis prefix: Str::slug(APP_NAME, '_').'_database_'. */
export function laravelRedisPrefix(env: LaravelEnv): string {
  return env.REDIS_PREFIX ?? `${slug(env.APP_NAME ?? 'laravel')}_database_`;
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
  /** The connection's own queue (Laravel's `queue.connections.redis.queue`): where a job naming none goes. */
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
  const env = (name: string) => process.env[name] ?? fromFile?.[name];
  const url = text(values.redis) ?? env('REDIS_URL') ?? redisUrlFrom(fromFile) ?? 'redis://127.0.0.1:6379';
  const prefix = text(values.prefix) ?? process.env.REDIS_PREFIX ?? (fromFile ? laravelRedisPrefix(fromFile) : '');
  const defaultQueue = text(values['default-queue']) ?? env('REDIS_QUEUE') ?? 'default';
  // Laravel's config keeps the cache on database 1 (REDIS_CACHE_DB); without a .env, the queue's own.
  const cacheDb = text(values['cache-db']) ?? env('REDIS_CACHE_DB') ?? (fromFile ? '1' : undefined);
  const cacheUrl = cacheDb === undefined ? url : withDatabase(url, cacheDb);
  const cachePrefix = text(values['cache-prefix']) ?? env('CACHE_PREFIX') ?? `${slug(env('APP_NAME') ?? 'laravel')}_cache`;
  const failedDb = text(values['failed-db']) ?? process.env.LQB_FAILED_DB ?? databaseUrlFrom(fromFile) ?? 'failed-jobs.sqlite';
  const appKey = text(values.key) ?? env('APP_KEY');
  const cipher = text(values.cipher) ?? env('APP_CIPHER') ?? 'AES-256-CBC';
  const nodes = text(values.cluster) ?? env('REDIS_CLUSTER');
  const cluster = nodes ? nodes.split(',').map((n) => n.trim()).filter(Boolean) : undefined;
  const failedTable = text(values['failed-table']) ?? process.env.LQB_FAILED_TABLE ?? 'failed_jobs';
  return { url, prefix, defaultQueue, cacheUrl, cachePrefix, failedDb, failedTable, ...(appKey ? { appKey } : {}), cipher, ...(cluster ? { cluster } : {}) };
}

function redisUrlFrom(env: LaravelEnv | undefined): string | undefined {
  if (!env || (!env.REDIS_HOST && !env.REDIS_PORT)) return undefined;
  const password = env.REDIS_PASSWORD && env.REDIS_PASSWORD !== 'null' ? `:${encodeURIComponent(env.REDIS_PASSWORD)}@` : '';
  return `redis://${password}${env.REDIS_HOST ?? '127.0.0.1'}:${env.REDIS_PORT ?? 6379}/${env.REDIS_DB ?? 0}`;
}

function withDatabase(url: string, db: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${db}`;
  return parsed.toString();
}

/** DB_CONNECTION and friends, as a URL the failed-jobs store takes. */
function databaseUrlFrom(env: LaravelEnv | undefined): string | undefined {
  if (!env?.DB_CONNECTION) return undefined;
  if (env.DB_URL) return env.DB_URL;
  const user = encodeURIComponent(env.DB_USERNAME ?? 'root');
  const password = env.DB_PASSWORD ? `:${encodeURIComponent(env.DB_PASSWORD)}` : '';
  switch (env.DB_CONNECTION) {
    case 'sqlite':
      return `sqlite://${env.DB_DATABASE ?? 'database/database.sqlite'}`;
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
