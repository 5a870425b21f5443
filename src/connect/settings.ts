/**
 * Where the queue is: Redis, the key prefix, the cache, the APP_KEY and the failed-jobs database,
 * resolved as a Laravel app's default config resolves them from its `.env`. Options given win,
 * then the process's environment, then the `.env` file. `lqb --env` and `connect({ env })` both
 * come here, so the two cannot disagree.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DotenvSyntaxError, parseDotenv } from './dotenv.js';
import { keepSecret, redactUrl } from './redact.js';
import { slug } from './slug.js';

/** A setting that cannot be used as given (a URL that is not Redis's, a CA file that cannot be read…). */
export class ConnectionSettingsError extends Error {
  override name = 'ConnectionSettingsError';
}

export interface LaravelEnv {
  [key: string]: string | undefined;
}

/**
 * Reads a Laravel `.env` file as Laravel's phpdotenv does (quotes, escapes, `${VAR}`); a file
 * that is not there, or that Laravel would refuse, is a ConnectionSettingsError naming it.
 */
export function readEnvFile(path: string): LaravelEnv {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConnectionSettingsError(
      `cannot read the .env file ${resolve(path)}: ${code === 'ENOENT' ? 'there is no such file' : (error as Error).message}`,
    );
  }
  try {
    return parseDotenv(text);
  } catch (error) {
    if (error instanceof DotenvSyntaxError)
      throw new ConnectionSettingsError(`${resolve(path)} is not a .env Laravel can read: ${error.message}`);
    throw error;
  }
}

/**
 * A value as Laravel's env() reads it: "null" and "(null)" are no value, "empty" and "(empty)"
 * the empty string.
 */
function envValue(value: string | undefined): string | undefined {
  if (value === 'null' || value === '(null)') return undefined;
  return value === 'empty' || value === '(empty)' ? '' : value;
}

export interface ConnectionSettings {
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
  /** The cache connection's URL (Laravel's `cache` Redis connection): where cached values live. */
  cacheUrl: string;
  /**
   * The cache store's lock connection (`cache.stores.redis.lock_connection`, `default` in every
   * skeleton since 8.x): where `Cache::lock()` takes unique and overlap locks.
   */
  lockUrl: string;
  /** Laravel's `cache.prefix`. */
  cachePrefix: string;
  /** What RedisStore puts between the cache prefix and a key: ':' in 8–10, nothing from 11. */
  cacheSeparator: string;
  failedDb: string;
  /** The failed-jobs table (Laravel's `queue.failed.table`). */
  failedTable: string;
  /** The queue connection's driver, as the app's `queue.default` (QUEUE_CONNECTION) names it. */
  queueConnection: 'redis' | 'database';
  /**
   * The database of the `database` queue connection (Laravel's `queue.connections.database`):
   * the app's default database connection (DB_*); undefined when nothing names one.
   */
  queueDb?: string;
  /** The jobs table (`queue.connections.database.table`: DB_QUEUE_TABLE from 11, else `jobs`). */
  jobsTable: string;
  /**
   * Whether a Redis server was given (redis, cluster) or named by REDIS_URL or REDIS_CLUSTER. Not by
   * REDIS_HOST, which every skeleton's .env carries whether the app uses Redis or not: a
   * database-only app opens no Redis connection at all.
   */
  redisNamed: boolean;
  appKey?: string;
  cipher: string;
}

/** What the settings are resolved from; each one given wins over the environment and the `.env`. */
export interface ConnectionOptions {
  /** A Laravel `.env` file: Redis is then its `default` connection, the prefixes its APP_NAME's. */
  env?: string;
  /** redis:// or rediss:// URL (else REDIS_URL, the .env's REDIS_HOST/PORT/PASSWORD/DB, or 127.0.0.1:6379). */
  redis?: string;
  /** A PEM file of the CA that signed a rediss:// server's certificate (else REDIS_CA). */
  redisCa?: string;
  /** Seed nodes of a Redis Cluster, as a list or comma-separated (else REDIS_CLUSTER). */
  cluster?: string | string[];
  /**
   * The key prefix (Laravel's `database.redis.options.prefix`): else REDIS_PREFIX (empty: none),
   * else what the app's default config gives, .env or not: `{slug of APP_NAME}_database_`
   * (`laravel_database_` with no APP_NAME; 13's `-database-` with `laravel: '13'`). `''` for none.
   */
  prefix?: string;
  /** The connection's own queue (else REDIS_QUEUE, or `default`). */
  defaultQueue?: string;
  /** The cache connection's Redis database (else REDIS_CACHE_DB, 1 with a .env, the queue's without). */
  cacheDb?: string | number;
  /** Laravel's `cache.prefix` (else CACHE_PREFIX, or APP_NAME's). */
  cachePrefix?: string;
  /**
   * The Redis database of the cache store's lock connection (else LQB_CACHE_LOCK_DB, else the
   * connection REDIS_CACHE_LOCK_CONNECTION names: `default`, the queue's, unless it says `cache`).
   */
  cacheLockDb?: string | number;
  /** The failed-jobs database URL (else LQB_FAILED_DB, the .env's DB_*, the database connection's database, or failed-jobs.sqlite). */
  failedDb?: string;
  /** The failed-jobs table (else LQB_FAILED_TABLE, or failed_jobs). */
  failedTable?: string;
  /** The queue connection, as `queue:work CONNECTION` names it: `redis` or `database` (else QUEUE_CONNECTION, else redis). */
  connection?: string;
  /** The `database` connection's database URL (else LQB_QUEUE_DB, else the .env's DB_*). */
  queueDb?: string;
  /** The jobs table of the `database` connection (else DB_QUEUE_TABLE, or jobs). */
  jobsTable?: string;
  /** Laravel's APP_KEY, for ShouldBeEncrypted jobs. */
  key?: string;
  /** Laravel's cipher (else APP_CIPHER, or AES-256-CBC). */
  cipher?: string;
  /** The app's Laravel version, when its vendor/ folder is not beside the .env (it picks the prefixes' style). */
  laravel?: string;
}

/** Resolves the settings; a value that cannot be used throws a ConnectionSettingsError naming it. */
export function resolveConnection(options: ConnectionOptions = {}): ConnectionSettings {
  return resolveFromEnv(options, envFileOf(options));
}

/** The `.env` the options name, read; undefined when they name none. */
export function envFileOf(options: ConnectionOptions): LaravelEnv | undefined {
  return options.env !== undefined ? readEnvFile(options.env) : undefined;
}

/** resolveConnection for a `.env` already read (connect() reads it once, for these settings and its cache store). */
export function resolveFromEnv(options: ConnectionOptions, fromFile: LaravelEnv | undefined): ConnectionSettings {
  // As in Laravel, the process's environment wins over the .env file.
  const env = (name: string) => envValue(process.env[name] ?? fromFile?.[name]);
  // With a .env, Redis is Laravel's `default` connection unless `redis` names one.
  const laravel = fromFile !== undefined && options.redis === undefined;
  const url = redisUrl(
    options.redis ?? (laravel ? laravelRedisUrl(env, env('REDIS_DB') ?? '0') : env('REDIS_URL')) ?? 'redis://127.0.0.1:6379',
  );
  // A relative SQLite path is the app's (its .env's folder), as Laravel's database_path() is.
  const appDir = options.env !== undefined ? dirname(resolve(options.env)) : process.cwd();
  const style = fromFile ? prefixStyle(appDir, options.laravel) : undefined;
  const appName = env('APP_NAME') ?? 'laravel';
  const prefix =
    options.prefix ??
    env('REDIS_PREFIX') ??
    defaultRedisPrefix(appName, style, appLaravelVersion(options.laravel, fromFile ? options.env : undefined));
  const queueConnection = queueConnectionOf(options.connection ?? env('QUEUE_CONNECTION'), options.connection !== undefined);
  // Each connection of the app's config/queue.php has its own queue: REDIS_QUEUE, or 11+'s DB_QUEUE.
  const defaultQueue = options.defaultQueue ?? (env(queueConnection === 'database' ? 'DB_QUEUE' : 'REDIS_QUEUE') || 'default');
  const queueDb = options.queueDb ?? process.env.LQB_QUEUE_DB ?? databaseUrlFrom(fromFile, appDir);
  const jobsTable = options.jobsTable ?? (env('DB_QUEUE_TABLE') || 'jobs');
  const redisNamed =
    options.redis !== undefined || options.cluster !== undefined || ['REDIS_URL', 'REDIS_CLUSTER'].some((name) => env(name) !== undefined);
  // Laravel's config keeps the cache on database 1 (REDIS_CACHE_DB); without a .env, the queue's own.
  const givenCacheDb = options.cacheDb === undefined ? undefined : String(options.cacheDb);
  const cacheDb = givenCacheDb ?? env('REDIS_CACHE_DB') ?? (fromFile ? '1' : undefined);
  const cacheUrl = cacheConnectionUrl(
    givenCacheDb,
    cacheDb,
    env('REDIS_CACHE_CONNECTION'),
    url,
    laravel ? (db) => redisUrl(laravelRedisUrl(env, db)) : undefined,
  );
  const lockUrl = lockConnectionUrl(
    options.cacheLockDb ?? process.env.LQB_CACHE_LOCK_DB,
    env('REDIS_CACHE_LOCK_CONNECTION'),
    url,
    cacheUrl,
  );
  const cachePrefix = options.cachePrefix ?? env('CACHE_PREFIX') ?? (style ?? PREFIX_STYLES.colon).cache(appName);
  const cacheSeparator = (style ?? PREFIX_STYLES.colon).separator;
  // The app's database (DB_CONNECTION) keeps failed_jobs; a database connection's own database is that one when nothing else names it.
  const failedDb =
    options.failedDb ??
    process.env.LQB_FAILED_DB ??
    databaseUrlFrom(fromFile, appDir) ??
    (queueConnection === 'database' ? queueDb : undefined) ??
    'failed-jobs.sqlite';
  const appKey = options.key ?? env('APP_KEY');
  const cipher = options.cipher ?? env('APP_CIPHER') ?? 'AES-256-CBC';
  const nodes = options.cluster ?? env('REDIS_CLUSTER');
  const cluster = nodes ? (Array.isArray(nodes) ? nodes : nodes.split(',')).map((n) => n.trim()).filter(Boolean) : undefined;
  const failedTable = options.failedTable ?? process.env.LQB_FAILED_TABLE ?? 'failed_jobs';
  const caFile = options.redisCa ?? env('REDIS_CA');
  const redisCa = caFile ? { file: caFile, from: options.redisCa === undefined ? 'REDIS_CA' : 'redisCa' } : undefined;
  keepSecrets([
    passwordOf(url),
    passwordOf(cacheUrl),
    passwordOf(lockUrl),
    passwordOf(failedDb),
    passwordOf(queueDb ?? ''),
    env('REDIS_PASSWORD'),
    fromFile?.DB_PASSWORD,
    appKey,
  ]);
  return {
    url,
    prefix,
    defaultQueue,
    cacheUrl,
    lockUrl,
    cachePrefix,
    cacheSeparator,
    failedDb,
    failedTable,
    queueConnection,
    ...(queueDb !== undefined ? { queueDb } : {}),
    jobsTable,
    redisNamed,
    ...(appKey ? { appKey } : {}),
    cipher,
    ...(cluster?.length ? { cluster } : {}),
    ...(redisCa ? { redisCa } : {}),
  };
}

/**
 * The key prefix the app's default config/database.php gives when REDIS_PREFIX is not set, .env
 * or none: from skeleton 5.8.16 on, APP_NAME's (`laravel_database_` with no APP_NAME); before it,
 * none. Without a .env the style is the version's (`laravel`), else 8–12's `{slug}_database_`.
 */
function defaultRedisPrefix(appName: string, style: PrefixStyle | undefined, version: string | undefined): string {
  if (version !== undefined && before5816(version)) return '';
  return (style ?? styleOfVersion(laravelMajor(version))).database(appName);
}

/** A 5.x version before 5.8.16, whose skeleton gave Redis no prefix; a bare `5.8` is taken as 5.8's last. */
function before5816(version: string): boolean {
  const match = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version);
  if (!match || Number(match[1]) !== 5) return false;
  const minor = Number(match[2] ?? 8);
  return minor < 8 || (minor === 8 && match[3] !== undefined && Number(match[3]) < 16);
}

/** Laravel's default cache store as the app's environment names it, and the variable that does. */
export interface EnvCacheStore {
  store: string;
  /** `CACHE_DRIVER` or `CACHE_STORE`, with the .env that said it when the process's environment did not. */
  from: string;
}

/**
 * The cache store the environment names: CACHE_DRIVER (8–10), else 11+'s CACHE_STORE, the
 * process's environment winning over the .env, as env() reads them; undefined when neither is set.
 * `lqb --env` and `connect({ env })` both read it here.
 */
export function envCacheStore(fromFile: LaravelEnv | undefined, envPath?: string): EnvCacheStore | undefined {
  for (const name of ['CACHE_DRIVER', 'CACHE_STORE']) {
    const fromProcess = process.env[name];
    const store = envValue(fromProcess ?? fromFile?.[name]);
    if (store !== undefined && store !== '')
      return { store, from: fromProcess === undefined && envPath !== undefined ? `${name} in ${resolve(envPath)}` : name };
  }
  return undefined;
}

/**
 * Why an environment's cache store keeps locks Node cannot reach (file, array, memcached, …),
 * or undefined for redis and database. Not a refusal: a queue whose jobs are not unique needs
 * no lock, so only taking or releasing one is refused, with this reason.
 */
export function unreachableLockStore(found: EnvCacheStore | undefined): string | undefined {
  if (found === undefined || found.store === 'redis' || found.store === 'database') return undefined;
  return `the app's cache store is ${JSON.stringify(found.store)} (${found.from}), whose locks Node cannot reach: unique jobs' locks are taken and released only in the redis or the database store (--cache-store, cacheStore)`;
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
 * config of the app's version does (appLaravelVersion: vendor/composer/installed.json, else
 * `--laravel`). Neither known: 8–10's, as before.
 */
export function prefixStyle(appDir: string, laravel?: string): PrefixStyle {
  const style = cacheStyle(appDir, laravelMajor(installedLaravel(appDir) ?? laravel));
  return withDatabaseSpelling(style, readIfThere(resolve(appDir, 'config/database.php')));
}

/**
 * The Redis key prefix as the app's config/database.php spells it, where it has one: skeletons
 * from 12.x's "hyphenate prefixes" change write `-database-`, earlier ones `_database_`. The
 * framework's version cannot tell the two apart, and config/cache.php need not be there.
 */
function withDatabaseSpelling(style: PrefixStyle, config: string | undefined): PrefixStyle {
  if (config === undefined) return style;
  if (/['"]-database-['"]/.test(config)) return { ...style, database: PREFIX_STYLES.hyphen.database };
  if (/['"]_database_['"]/.test(config)) return { ...style, database: PREFIX_STYLES.underscore.database };
  return style;
}

/** The cache prefix's style: the app's config/cache.php, else the framework's config of its major version. */
function cacheStyle(appDir: string, major: number | undefined): PrefixStyle {
  const config = readIfThere(resolve(appDir, 'config/cache.php'));
  if (config !== undefined) {
    if (/['"]-cache-['"]/.test(config)) return PREFIX_STYLES.hyphen;
    if (/['"]_cache_['"]/.test(config)) return PREFIX_STYLES.underscore;
    if (/['"]_cache['"]/.test(config))
      return major !== undefined && major >= 11 ? { ...PREFIX_STYLES.colon, separator: '' } : PREFIX_STYLES.colon;
  }
  return styleOfVersion(major);
}

/** The prefixes the framework's own config of a major version gives (8–10's when unknown). */
function styleOfVersion(major: number | undefined): PrefixStyle {
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

/**
 * The app's Laravel version, the one answer the commands and connect() ask: laravel/framework
 * in vendor/composer/installed.json beside the .env (what the app runs, which a flag cannot
 * outdate), else the version given (`--laravel`, `laravel`); undefined when neither says, and
 * then each job is read as its payload shows (worker/laravelOfJob.ts).
 */
export function appLaravelVersion(given: string | undefined, envPath: string | undefined): string | undefined {
  return (envPath !== undefined ? installedLaravel(dirname(resolve(envPath))) : undefined) ?? given;
}

/**
 * Whether appLaravelVersion's answer is only the version given (`--laravel`, `laravel`), not the
 * app's installed.json: then what a job's payload shows of its Laravel outranks it (laravelOfJob.ts).
 */
export function laravelOnlyGiven(given: string | undefined, envPath: string | undefined): boolean {
  return given !== undefined && (envPath === undefined || installedLaravel(dirname(resolve(envPath))) === undefined);
}

/** laravel/framework's version as Composer installed it (Composer 2's {packages: […]} or 1's list). */
export function installedLaravel(appDir: string): string | undefined {
  const text = readIfThere(resolve(appDir, 'vendor/composer/installed.json'));
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as { packages?: unknown[] } | unknown[];
    const packages = (Array.isArray(parsed) ? parsed : (parsed.packages ?? [])) as { name?: string; version?: string }[];
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
 * ConfigurationUrlParser lets the URL's parts win, and its query's `database` over its path). 8.83's connectors take no username, so
 * REDIS_USERNAME means nothing to it; one in REDIS_URL is kept.
 */
function laravelRedisUrl(env: (name: string) => string | undefined, database: string): string {
  const given = new URL(env('REDIS_URL') || 'redis://');
  const password = given.password || (env('REDIS_PASSWORD') ? encodeURIComponent(env('REDIS_PASSWORD')!) : '');
  const auth = given.username || password ? `${given.username}${password ? `:${password}` : ''}@` : '';
  const host = given.hostname || env('REDIS_HOST') || '127.0.0.1';
  const port = given.port || env('REDIS_PORT') || '6379';
  // ConfigurationUrlParser merges the query's options last: `?database=3` wins over the path and REDIS_DB.
  const db = given.searchParams.get('database') ?? (given.pathname.length > 1 ? given.pathname.slice(1) : database);
  return `${given.protocol}//${auth}${host}:${port}/${db}`;
}

/** A Redis URL as given, refused at once when it is none: otherwise ioredis retries it and reports only that it gave up. */
function redisUrl(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  // tcp:// is what Laravel's own REDIS_URL examples may use; ioredis reads it as redis://.
  const protocol = parsed?.protocol;
  if (protocol !== 'redis:' && protocol !== 'rediss:' && protocol !== 'tcp:')
    throw new ConnectionSettingsError(`${JSON.stringify(redactUrl(url))} is not a redis:// or rediss:// URL`);
  // ioredis would SELECT NaN for /abc, and its refusal would come later, unhandled.
  if (parsed!.pathname.length > 1) databaseNumber(parsed!.pathname.slice(1), `the database of ${JSON.stringify(redactUrl(url))}`);
  return url;
}

/** A Redis database as Redis numbers them (SELECT takes a whole number), else the setting is refused. */
function databaseNumber(db: string, what: string): string {
  if (!/^\d+$/.test(db)) throw new ConnectionSettingsError(`${what} must be a whole number, not ${JSON.stringify(db)}`);
  return db;
}

/**
 * Where the cache store keeps its values: the `cache` connection (REDIS_CACHE_DB) unless 11+'s
 * REDIS_CACHE_CONNECTION says `default` (the queue's); a database given (--cache-db) on the
 * queue's server; without a .env, the queue's own. `laravelUrl` is the .env's connection URL for a database.
 */
function cacheConnectionUrl(
  givenDb: string | undefined,
  db: string | undefined,
  connection: string | undefined,
  url: string,
  laravelUrl: ((db: string) => string) | undefined,
): string {
  if (givenDb === undefined && connection === 'default') return url;
  if (givenDb === undefined && laravelUrl && db !== undefined) return laravelUrl(db);
  return db === undefined ? url : withDatabase(url, db, 'the cache database (--cache-db, REDIS_CACHE_DB)');
}

/**
 * Where the cache store takes its locks. Every skeleton since 8.x sets the Redis store's
 * `lock_connection` to `default` (the queue's connection and database), 11+ through
 * REDIS_CACHE_LOCK_CONNECTION, whose other stock connection is `cache`; a database given
 * (--cache-lock-db, LQB_CACHE_LOCK_DB) is taken on the queue's server.
 */
function lockConnectionUrl(givenDb: string | number | undefined, connection: string | undefined, url: string, cacheUrl: string): string {
  if (givenDb !== undefined) return withDatabase(url, String(givenDb), 'the lock database (--cache-lock-db, LQB_CACHE_LOCK_DB)');
  const name = connection ?? 'default';
  if (name === 'default') return url;
  if (name === 'cache') return cacheUrl;
  throw new ConnectionSettingsError(
    `REDIS_CACHE_LOCK_CONNECTION=${JSON.stringify(name)} names a Redis connection the stock config/database.php does not have (default or cache): give its database with --cache-lock-db`,
  );
}

function withDatabase(url: string, db: string, what: string): string {
  databaseNumber(db, what);
  const parsed = new URL(url);
  parsed.pathname = `/${db}`;
  return parsed.toString();
}

/**
 * The queue connection named: `redis` or `database`, the drivers Node speaks. Any other (Laravel's
 * `sync`, `sqs`, `beanstalkd`, or an app's own) is refused in one line, naming where it came from.
 */
function queueConnectionOf(name: string | undefined, given: boolean): 'redis' | 'database' {
  if (name === undefined || name === '') return 'redis';
  if (name === 'redis' || name === 'database') return name;
  const from = given ? 'the connection given' : 'QUEUE_CONNECTION';
  throw new ConnectionSettingsError(`${from} is ${JSON.stringify(name)}: Node speaks Laravel's redis and database queue connections`);
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
