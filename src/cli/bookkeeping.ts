/**
 * Where `lqb work` keeps the application's bookkeeping (see CallQueuedHandler): the store unique
 * jobs' locks live in, the job_batches table, and the class shapes that say which classes are
 * unique and which Laravel the app runs.
 *
 *   --cache-store=redis|database  Laravel's default cache store (else CACHE_DRIVER, 11+'s
 *                                 CACHE_STORE, else redis): redis keeps locks on the store's
 *                                 lock connection under the cache prefix; database in `cache_locks`.
 *   --lock-db=URL                 the database store's database (default: the failed-jobs one,
 *                                 the app's database as DB_* names it)
 *   --lock-table=cache_locks      its lock table
 *   --batch-db=URL                job_batches' database (default: the failed-jobs one, the app's
 *                                 database as DB_* names it)
 *   --batch-table=job_batches
 */
import { databaseConfig } from '../database/index.js';
import type { Bookkeeping } from '../connect/buildWorker.js';
import { cacheStoreOf } from '../connect/drivers.js';
import {
  ConnectionSettingsError,
  envCacheStore,
  readEnvFile,
  unreachableLockStore,
  type ConnectionSettings,
  type LaravelEnv,
} from '../connect/settings.js';
import { UsageError, type Options } from './command.js';

export const bookkeepingFlags = {
  'cache-store': {
    type: 'string',
    value: 'redis|database',
    group: "The app's bookkeeping",
    description:
      "the cache store unique jobs' locks live in: redis (its lock connection, under the cache prefix) or database (cache_locks)",
    env: 'CACHE_DRIVER or CACHE_STORE',
    default: 'redis; database for the database connection with no Redis given or named',
  },
  'lock-db': {
    type: 'string',
    value: 'URL',
    group: "The app's bookkeeping",
    description: "the database store's database",
    default: 'the failed-jobs database',
  },
  'lock-table': {
    type: 'string',
    value: 'NAME',
    group: "The app's bookkeeping",
    description: "the database store's lock table",
    default: 'cache_locks',
  },
  'batch-db': {
    type: 'string',
    value: 'URL',
    group: "The app's bookkeeping",
    description: 'the job_batches database',
    default: 'the failed-jobs database',
  },
  'batch-table': {
    type: 'string',
    value: 'NAME',
    group: "The app's bookkeeping",
    description: 'the batches table',
    default: 'job_batches',
  },
} satisfies Options;

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** Where unique locks live, as connect() takes it: the store, and the database store's database and table. */
export type LockStoreFlags = Pick<Bookkeeping, 'cacheStore' | 'unreachableLocks' | 'lockDb'> & { lockTable: string };

/**
 * --cache-store, --lock-db and --lock-table; a malformed one is a usage error now, before Redis
 * is opened. Without --cache-store, CACHE_DRIVER / CACHE_STORE of the environment or the --env
 * file, as connect({ env }) reads them; one naming a store Node cannot reach (file, …) refuses
 * only the locks, not the command.
 */
export function lockStoreFrom(values: Values, connection?: Pick<ConnectionSettings, 'queueConnection' | 'redisNamed'>): LockStoreFlags {
  const given = text(values['cache-store']);
  if (given !== undefined && given !== 'redis' && given !== 'database')
    throw new UsageError(`--cache-store: unique locks are kept in the redis or the database store, not ${JSON.stringify(given)}`);
  const envPath = text(values.env);
  const fromEnv =
    given === undefined ? envCacheStore(envPath === undefined ? undefined : readEnvFileForUsage(envPath), envPath) : undefined;
  const unreachableLocks = unreachableLockStore(fromEnv);
  // A database connection with no Redis named keeps its cache in the database store (drivers.ts).
  const store = connection ? cacheStoreOf(connection, given, fromEnv) : (given ?? (fromEnv?.store === 'database' ? 'database' : 'redis'));
  const lockDb = text(values['lock-db']);
  // Given, it is checked now; by default it is the failed-jobs database, checked where it is used.
  if (store === 'database' && lockDb) databaseConfigOf('--lock-db', lockDb);
  return {
    cacheStore: store,
    ...(unreachableLocks ? { unreachableLocks } : {}),
    ...(store === 'database' && lockDb ? { lockDb } : {}),
    lockTable: text(values['lock-table']) ?? 'cache_locks',
  };
}

function readEnvFileForUsage(path: string): LaravelEnv {
  try {
    return readEnvFile(path);
  } catch (error) {
    if (error instanceof ConnectionSettingsError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * Where the worker keeps the app's bookkeeping, as the flags say; a malformed one is a usage
 * error now, before Redis is opened. A database not given is the app's (buildWorker.ts says why),
 * which the worker checks, and names in its refusal, as the failed-jobs database.
 */
export function bookkeepingFrom(values: Values, connection?: Pick<ConnectionSettings, 'queueConnection' | 'redisNamed'>): Bookkeeping {
  const { cacheStore, unreachableLocks, lockDb, lockTable } = lockStoreFrom(values, connection);
  const batchDb = text(values['batch-db']);
  if (batchDb) databaseConfigOf('--batch-db', batchDb);
  return {
    cacheStore,
    ...(unreachableLocks ? { unreachableLocks } : {}),
    ...(lockDb ? { lockDb } : {}),
    lockTable,
    ...(batchDb ? { batchDb } : {}),
    batchTable: text(values['batch-table']) ?? 'job_batches',
  };
}

/** A database URL read; one no driver here takes is a usage error naming the flag. */
export function databaseConfigOf(flag: string, url: string): ReturnType<typeof databaseConfig> {
  try {
    return databaseConfig(url);
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`);
  }
}
