/**
 * Where a cache store keeps its locks, as `Cache::lock($key)` reaches them: the contract each of
 * Laravel's lock-keeping stores meets here (RedisLockStore, DatabaseLockStore). Unique jobs'
 * locks go through it, taken by dispatch and released by the worker; a store is given keys as
 * Laravel names them (uniqueKeys.ts) and adds its own prefix, as Laravel's store does.
 *
 * A store shares its locks with the PHP app's: the same key, the same owner string, the same
 * expiry, so a lock either side holds keeps the other out. buildWorker.ts (openLockStore) picks
 * the store the app's cache config names; a new store is a branch there.
 */

/** Where unique locks are kept: Laravel's default cache store, as `lock($key)` reaches it. */
export interface UniqueLockStore {
  /** The store's name in the app's config/cache.php (`cache.default`), as 11.39+ payloads name it. */
  readonly storeName: string;
  /** Laravel's forceRelease(): the lock goes, whoever holds it. */
  forceRelease(key: string): Promise<void>;
  /** forceRelease() of several keys in one round trip (the spellings a payload allows). */
  forceReleaseAll(keys: string[]): Promise<void>;
  /** Laravel's restoreLock($key, $owner)->release(): the lock goes only when `owner` holds it. */
  release(key: string, owner: string): Promise<boolean>;
  /** The owner holding the lock, or null (for tests and the log). */
  owner(key: string): Promise<string | null>;
  /** Laravel's lock($key, $seconds)->get() with `owner`: true when this call took the lock (0 seconds: no expiry). */
  acquire(key: string, owner: string, seconds: number): Promise<boolean>;
}
