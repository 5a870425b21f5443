/**
 * Laravel's RedisStore locks (RedisLock / PhpRedisLock) on the store's lock connection
 * (`lock_connection`: the queue's `default` connection in the stock config, not the cache's),
 * under the connection's prefix and `{cache prefix}:` (8–10; nothing after the prefix from
 * 11): an owner string set NX, deleted by force or by a compare-and-delete of the owner.
 */
import { QueueCache } from '../cache.js';
import type { RedisClient } from '../../redis/index.js';
import { RedisLock } from './RedisLock.js';
import type { UniqueLockStore } from './LockStore.js';

/** Laravel's RedisStore locks (RedisLock / PhpRedisLock), on the store's lock connection. */
export class RedisLockStore implements UniqueLockStore {
  /** Force releases waiting to go out together, and the DEL that sends them. */
  #pendingDeletes: { names: Set<string>; sent: Promise<void> } | undefined;

  /** The store's keys are named as the cache's: one rule for both. */
  readonly #cache: QueueCache;

  constructor(
    /**
     * The store's lock connection (`lock_connection`: `default`, the queue's, in the stock config),
     * whose client prefix (Laravel's `database.redis.options.prefix`) comes first.
     */
    private readonly client: RedisClient,
    /** Laravel's `cache.prefix`, e.g. `laravel_cache`. */
    prefix = 'laravel_cache',
    /** What RedisStore puts after a non-empty prefix: ':' in 8–10, nothing from 11. */
    separator = ':',
    readonly storeName = 'redis',
  ) {
    this.#cache = new QueueCache(client, prefix, separator);
  }

  private name(key: string): string {
    return this.#cache.key(key);
  }

  async forceRelease(key: string): Promise<void> {
    await this.client.del(this.name(key));
  }

  /**
   * The keys of every forceReleaseAll() asked for in the same turn of the event loop go out in
   * one DEL: the effect of one DEL each (a missing key is no error), at one command and one
   * socket write for all the jobs that finished together. A worker without shapes asks this
   * after every job. Each caller's promise settles once its keys are gone, so what it does
   * next (the job's delete) still comes after its lock's release, as in Laravel. A key asked
   * for twice in one batch (jobs of one class without a uniqueId, which a worker without shapes
   * releases by every spelling) is named once: deleting it once has the effect of both.
   */
  forceReleaseAll(keys: string[]): Promise<void> {
    if (keys.length === 0) return Promise.resolve();
    let batch = this.#pendingDeletes;
    if (!batch) {
      const names = new Set<string>();
      const sent = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.#pendingDeletes = undefined;
        return this.deleteKeys([...names]);
      });
      this.#pendingDeletes = batch = { names, sent };
    }
    for (const key of keys) batch.names.add(this.name(key));
    return batch.sent;
  }

  /** One DEL; on a cluster one per key, since a DEL's keys must share a slot there. */
  private async deleteKeys(names: string[]): Promise<void> {
    if ((this.client as { isCluster?: boolean }).isCluster === true) await Promise.all(names.map((name) => this.client.del(name)));
    else await this.client.del(...names);
  }

  release(key: string, owner: string): Promise<boolean> {
    return new RedisLock(this.#cache, key, 0, owner).release();
  }

  owner(key: string): Promise<string | null> {
    return this.client.get(this.name(key));
  }

  /** RedisLock::acquire, as the job middleware's locks take it. */
  acquire(key: string, owner: string, seconds: number): Promise<boolean> {
    return new RedisLock(this.#cache, key, seconds, owner).acquire();
  }
}
