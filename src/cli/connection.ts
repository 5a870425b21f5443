/**
 * Where `lqb` finds Redis, the key prefix, the cache, the APP_KEY and the failed-jobs
 * database: flags first, then the environment, then a Laravel `.env` (--env) read the way
 * Laravel's default config reads it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { rootCertificates } from 'node:tls';
import { parse as parseDotenv } from 'dotenv';
import type { RedisOptions } from 'ioredis';
import { connectRedis, isCertificateError, whenReady, type RedisClient } from '../redis/index.js';
import { DatabaseUuidFailedJobProvider } from '../worker/index.js';
import { UsageError } from './command.js';
import { keepSecret, redactSecrets, redactUrl } from './redact.js';
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
  redis: { type: 'string', value: 'URL', group: 'Connection', description: 'the Redis server (rediss:// for TLS); with --env, the .env\'s REDIS_URL or REDIS_HOST, REDIS_PORT, REDIS_PASSWORD, REDIS_DB', env: 'REDIS_URL', default: 'redis://127.0.0.1:6379' },
  'redis-ca': { type: 'string', value: 'FILE', group: 'Connection', description: 'a PEM file of the CA that signed a rediss:// server\'s certificate, trusted beside the system\'s', env: 'REDIS_CA' },
  cluster: { type: 'string', value: 'HOST:PORT,…', group: 'Connection', description: 'seed nodes of a Redis Cluster, instead of --redis', env: 'REDIS_CLUSTER' },
  prefix: { type: 'string', value: 'P', group: 'Connection', description: 'the key prefix (Laravel\'s database.redis.options.prefix); with --env, derived from APP_NAME as the app\'s config does', env: 'REDIS_PREFIX', default: 'none' },
  'default-queue': { type: 'string', value: 'Q', group: 'Connection', description: 'the connection\'s own queue: used without --queue, and where a chained job naming none goes', env: 'REDIS_QUEUE', default: 'default' },
  env: { type: 'string', value: 'PATH', group: 'Connection', description: 'a Laravel .env, read as Laravel\'s default config reads it (the process\'s environment wins over it)' },
  'cache-db': { type: 'string', value: 'N', group: 'Connection', description: 'the cache connection\'s Redis database (restart signals, pauses, maxExceptions, unique locks)', env: 'REDIS_CACHE_DB', default: '1 with --env, else the queue\'s' },
  'cache-prefix': { type: 'string', value: 'P', group: 'Connection', description: 'Laravel\'s cache.prefix', env: 'CACHE_PREFIX', default: '{slug of APP_NAME}_cache, as the app\'s version spells it' },
  'failed-db': { type: 'string', value: 'URL', group: 'Connection', description: 'the failed_jobs database: sqlite:///path, mysql://, mariadb://, postgres://; with --env, the .env\'s DB_*', env: 'LQB_FAILED_DB', default: 'failed-jobs.sqlite' },
  'failed-table': { type: 'string', value: 'NAME', group: 'Connection', description: 'the failed-jobs table (Laravel\'s queue.failed.table)', env: 'LQB_FAILED_TABLE', default: 'failed_jobs' },
  key: { type: 'string', value: 'APP_KEY', group: 'Connection', description: 'the app\'s key, for encrypted jobs (base64:… as in .env)', env: 'APP_KEY' },
  cipher: { type: 'string', value: 'CIPHER', group: 'Connection', description: 'the app\'s cipher: AES-256-CBC, AES-128-CBC, AES-256-GCM or AES-128-GCM', env: 'APP_CIPHER', default: 'AES-256-CBC' },
  laravel: { type: 'string', value: 'VERSION', group: 'Connection', description: 'the app\'s Laravel version, for its prefixes and key spellings', default: 'laravel/framework\'s in vendor/composer/installed.json beside the .env' },
} satisfies import('./command.js').Options;

type Flags = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Connection {
  url: string;
  /**
   * A PEM file of the CA (or CAs) that signed a rediss:// server's certificate, beside the
   * system's, and the flag or variable that named it.
   */
  redisCa?: { file: string; from: string };
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
  /** Laravel's `cache.prefix`. */
  cachePrefix: string;
  /** What RedisStore puts between the cache prefix and a key: ':' in 8–10, nothing from 11. */
  cacheSeparator: string;
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
  // A relative SQLite path is the app's (its .env's folder), as Laravel's database_path() is.
  const appDir = typeof values.env === 'string' ? dirname(resolve(values.env)) : process.cwd();
  const style = fromFile ? prefixStyle(appDir, text(values.laravel)) : undefined;
  const appName = env('APP_NAME') ?? 'laravel';
  const prefix = text(values.prefix) ?? env('REDIS_PREFIX') ?? (style ? style.database(appName) : '');
  const defaultQueue = text(values['default-queue']) ?? (env('REDIS_QUEUE') || 'default');
  // Laravel's config keeps the cache on database 1 (REDIS_CACHE_DB); without a .env, the queue's own.
  const cacheDb = text(values['cache-db']) ?? env('REDIS_CACHE_DB') ?? (fromFile ? '1' : undefined);
  const cacheUrl = laravel && values['cache-db'] === undefined ? laravelRedisUrl(env, cacheDb!) : cacheDb === undefined ? url : withDatabase(url, cacheDb);
  const cachePrefix = text(values['cache-prefix']) ?? env('CACHE_PREFIX') ?? (style ?? PREFIX_STYLES.colon).cache(appName);
  const cacheSeparator = (style ?? PREFIX_STYLES.colon).separator;
  const failedDb = text(values['failed-db']) ?? process.env.LQB_FAILED_DB ?? databaseUrlFrom(fromFile, appDir) ?? 'failed-jobs.sqlite';
  const appKey = text(values.key) ?? env('APP_KEY');
  const cipher = text(values.cipher) ?? env('APP_CIPHER') ?? 'AES-256-CBC';
  const nodes = text(values.cluster) ?? env('REDIS_CLUSTER');
  const cluster = nodes ? nodes.split(',').map((n) => n.trim()).filter(Boolean) : undefined;
  const failedTable = text(values['failed-table']) ?? process.env.LQB_FAILED_TABLE ?? 'failed_jobs';
  const caFile = text(values['redis-ca']) ?? env('REDIS_CA');
  const redisCa = caFile ? { file: caFile, from: values['redis-ca'] === undefined ? 'REDIS_CA' : '--redis-ca' } : undefined;
  keepSecrets([passwordOf(url), passwordOf(cacheUrl), passwordOf(failedDb), env('REDIS_PASSWORD'), fromFile?.DB_PASSWORD, appKey]);
  return { url, prefix, defaultQueue, cacheUrl, cachePrefix, cacheSeparator, failedDb, failedTable, ...(appKey ? { appKey } : {}), cipher, ...(cluster ? { cluster } : {}), ...(redisCa ? { redisCa } : {}) };
}

interface PrefixStyle {
  database(appName: string): string;
  cache(appName: string): string;
  separator: string;
}

/**
 * The prefixes Laravel's configs derive from APP_NAME: 8–10 `{slug}_database_` and
 * `{slug}_cache` (RedisStore adds ':'); 11 and 12.0–12.1's skeleton `{slug}_cache_` (RedisStore
 * adds nothing from 11); the skeleton from 12.2 and the framework's own config from 13
 * `{slug}-database-` and `{slug}-cache-`, slugged with '-'.
 */
export const PREFIX_STYLES = {
  colon: { database: (n: string) => `${slug(n)}_database_`, cache: (n: string) => `${slug(n)}_cache`, separator: ':' },
  underscore: { database: (n: string) => `${slug(n)}_database_`, cache: (n: string) => `${slug(n)}_cache_`, separator: '' },
  hyphen: { database: (n: string) => `${slug(n, '-')}-database-`, cache: (n: string) => `${slug(n, '-')}-cache-`, separator: '' },
} satisfies Record<string, PrefixStyle>;

/**
 * Which prefixes the app beside the .env uses. Its own config/cache.php says (an app keeps the
 * config its skeleton had); without one (11+ apps need not publish it), the framework's own
 * config of the app's version does: `--laravel`, else vendor/composer/installed.json. Neither
 * known: 8–10's, as before.
 */
export function prefixStyle(appDir: string, laravel?: string): PrefixStyle {
  const major = laravelMajor(laravel ?? installedLaravel(appDir));
  const config = readIfThere(resolve(appDir, 'config/cache.php'));
  if (config !== undefined) {
    if (/['"]-cache-['"]/.test(config)) return PREFIX_STYLES.hyphen;
    if (/['"]_cache_['"]/.test(config)) return PREFIX_STYLES.underscore;
    if (/['"]_cache['"]/.test(config)) return major !== undefined && major >= 11 ? { ...PREFIX_STYLES.colon, separator: '' } : PREFIX_STYLES.colon;
  }
  if (major === undefined || major <= 10) return PREFIX_STYLES.colon;
  return major >= 13 ? PREFIX_STYLES.hyphen : PREFIX_STYLES.underscore;
}

function laravelMajor(version: string | undefined): number | undefined {
  const match = version === undefined ? null : /^v?(\d+)/.exec(version);
  return match ? Number(match[1]) : undefined;
}

function readIfThere(file: string): string | undefined {
  try {
    return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  } catch {
    return undefined;
  }
}

/** laravel/framework's version as Composer installed it (Composer 2's {packages: […]} or 1's list). */
export function installedLaravel(appDir: string): string | undefined {
  const text = readIfThere(resolve(appDir, 'vendor/composer/installed.json'));
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as { packages?: unknown[] } | unknown[];
    const packages = (Array.isArray(parsed) ? parsed : parsed.packages ?? []) as { name?: string; version?: string }[];
    return packages.find((p) => p?.name === 'laravel/framework')?.version;
  } catch {
    return undefined;
  }
}

/** Every password and key the settings hold, so that no error or log line prints one (redact.ts). */
function keepSecrets(values: (string | undefined)[]): void {
  for (const value of values) keepSecret(value);
}

/** A URL's password, if it has one and parses. */
function passwordOf(url: string): string | undefined {
  try {
    return new URL(url).password || undefined;
  } catch {
    return undefined;
  }
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
  if (protocol !== 'redis:' && protocol !== 'rediss:' && protocol !== 'tcp:') throw new UsageError(`${JSON.stringify(redactUrl(url))} is not a redis:// or rediss:// URL`);
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

/**
 * How long a one-off command waits for Redis to connect (and to finish a TLS handshake): a
 * server that does not answer, such as a plain port given a TLS hello, is reported after this.
 */
const ONE_OFF_CONNECT_MS = 3000;
/** How long a one-off command waits for one reply once connected, so a stalled server ends it too. */
const ONE_OFF_COMMAND_MS = 30_000;

/** The queue connection, prefixed as Laravel prefixes it, for a worker: it waits out an outage, logging why. */
export function queueClient(connection: Connection): RedisClient {
  return clientFor(connection, connection.url, {}, (line) => process.stderr.write(`${redactSecrets(line)}\n`));
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

/** Redis would not connect: `reason` is the cause alone, the message the line to print. */
export class RedisUnavailable extends Error {
  override name = 'RedisUnavailable';
  constructor(readonly reason: string) {
    super(`redis: ${reason}`);
  }
}

/**
 * A one-off command's client: the first connection error, or a connect timeout of a few seconds,
 * ends it; once it was ready, a dropped connection is retried a few times and then fails the
 * command (never a maxRetriesPerRequest of null). Its errors are not logged: the one thrown says why.
 */
async function openOneOff(connection: Connection, url: string): Promise<RedisClient> {
  const options: RedisOptions = { maxRetriesPerRequest: 2, retryStrategy: (times) => (times > 3 ? null : times * 200), connectTimeout: ONE_OFF_CONNECT_MS, commandTimeout: ONE_OFF_COMMAND_MS };
  const client = clientFor(connection, url, options, () => undefined);
  try {
    // Past the connect timeout, the ready check (INFO) is given as long again.
    await whenReady(client, 2 * ONE_OFF_CONNECT_MS);
    return client;
  } catch (error) {
    client.disconnect();
    const cause = (error as Error).cause as Error | undefined;
    const hint = cause && isCertificateError(cause) ? ' (trust its CA with --redis-ca=FILE or REDIS_CA)' : '';
    throw new RedisUnavailable(`${(error as Error).message}${hint}`);
  }
}

function clientFor(connection: Connection, url: string, options: RedisOptions, log: (line: string) => void): RedisClient {
  const redisOptions = { ...options, ...tlsOptions(connection, url) };
  return connectRedis({ url, prefix: connection.prefix, cluster: connection.cluster, redisOptions, log });
}

/**
 * With a CA file, a rediss:// connection trusts that CA beside the system's ones (the file is
 * read now, so a bad path is named before any connection). ioredis fills in the rest of `tls`
 * from the URL; a redis:// URL is left plain.
 */
function tlsOptions(connection: Connection, url: string): RedisOptions {
  if (!connection.redisCa || !url.startsWith('rediss:')) return {};
  const { file, from } = connection.redisCa;
  try {
    // Node's `ca` replaces the CAs it trusts; the well-known ones are kept beside the file's.
    return { tls: { ca: [...rootCertificates, readFileSync(file, 'utf8')] } };
  } catch (error) {
    throw new UsageError(`${from}=${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
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
