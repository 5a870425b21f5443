/**
 * Laravel's RedisLock (`Cache::lock($name, $seconds)` on the Redis cache store), in the same
 * key with the same value and TTL, so a lock PHP holds keeps Node out and the other way round.
 *
 * The key is the store's: `{cache prefix}:{name}` on the store's lock connection (`lock_connection`,
 * whose client prefix comes first), which is not the cache connection in the stock config. The value is the owner, a random 16-character string (Str::random()); the lock
 * is released only by its owner. A lock of 0 seconds never expires, as in Laravel.
 */
import { releaseLockStep } from '../../redis/index.js';
import { randomId } from '../../laravel/index.js';
import type { QueueCache } from '../cache.js';

export class RedisLock {
  /** The lock's Redis key, without the client's own prefix. */
  readonly key: string;

  constructor(
    private readonly cache: QueueCache,
    /** The lock's name, as given to Cache::lock() (the store's prefix is added to it). */
    readonly name: string,
    /** Seconds until it expires on its own; 0 never. */
    readonly seconds = 0,
    /** Who holds it: Str::random() unless given (restoreLock). */
    readonly owner = randomId(16),
  ) {
    this.key = cache.key(name);
  }

  /** Takes the lock if it is free: SET NX with EX when it expires, SETNX when it does not. */
  async acquire(): Promise<boolean> {
    const client = this.cache.lockClient;
    if (this.seconds > 0) return (await client.set(this.key, this.owner, 'EX', this.seconds, 'NX')) === 'OK';
    return (await client.setnx(this.key, this.owner)) === 1;
  }

  /** Gives the lock up, if it is still ours. */
  async release(): Promise<boolean> {
    return (await releaseLockStep(this.cache.lockClient, this.key, this.owner)) > 0;
  }

  /** Who holds the lock now, or null when nobody does. */
  currentOwner(): Promise<string | null> {
    return this.cache.lockClient.get(this.key);
  }
}
