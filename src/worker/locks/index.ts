/**
 * Cache locks as Laravel's stores keep them, and unique jobs' locks: the stores (one contract,
 * the Redis and the database store), the key each Laravel version spells, what a payload
 * carries of its lock, the lock dispatch takes and the one the worker releases.
 */
export type { UniqueLockStore } from './LockStore.js';
export { RedisLock } from './RedisLock.js';
export { RedisLockStore } from './RedisLockStore.js';
export { DatabaseLockStore } from './DatabaseLockStore.js';
export { UNIQUE_KEY_PREFIX, atLeast, parseVersion, uniqueLockKeys, xxh128 } from './uniqueKeys.js';
export {
  LOG_CONTEXT,
  hiddenContextKey,
  hiddenUniqueContext,
  namesThisJob,
  uniqueLockFields,
  writesUniqueContext,
  type UniqueContext,
} from './uniqueContext.js';
export { SHOULD_BE_UNIQUE, SHOULD_BE_UNIQUE_UNTIL_PROCESSING, UnnamedLockError, uniqueIdOf } from './uniqueJob.js';
export { acquireUniqueLock, planUniqueLock, type DispatchLock, type PlanOptions, type PlannedLock } from './dispatchLock.js';
export { uniquenessNow, uniquenessOf, type Uniqueness } from './uniqueness.js';
