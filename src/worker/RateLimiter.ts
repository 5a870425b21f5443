/**
 * Laravel 8's Illuminate\Cache\RateLimiter over the Redis cache store, step for step, so PHP
 * and Node count against one budget.
 *
 * Per key it keeps two cache items: `{key}` (the hits, a number) and `{key}:timer` (the UNIX
 * time the window ends), both living `decaySeconds`. A key of hits at or over the limit counts
 * only while its timer lives; otherwise the hits are forgotten.
 *
 * Keys are used as given. Laravel passes each through cleanRateLimiterKey (htmlentities, then
 * `&eacute;` to `e`), which leaves the md5 keys of the RateLimited middleware as they are; a key
 * holding any of `&<>"'` or a byte above 0x7f is refused here rather than spelled differently.
 */
import type { QueueCache } from './cache.js';

export class RateLimiter {
  constructor(
    private readonly cache: QueueCache,
    /** UNIX seconds. */
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  /** True when `key` has had `maxAttempts` hits and its window is still open. */
  async tooManyAttempts(key: string, maxAttempts: number): Promise<boolean> {
    const item = this.item(key);
    if ((await this.attempts(key)) >= maxAttempts) {
      if ((await this.cache.client.get(`${item}:timer`)) !== null) return true;
      await this.cache.client.del(item);
    }
    return false;
  }

  /**
   * Counts one hit, opening the window if there is none: `{key}:timer` and `{key}` (0) are
   * added if missing, the count incremented, and reset to 1 when its item had expired between
   * the two. Returns the hits so far.
   */
  async hit(key: string, decaySeconds = 60): Promise<number> {
    const item = this.item(key);
    const client = this.cache.client;
    // Repository::add refuses a TTL of 0 or less; the store's add is "set if missing" (atomic).
    const add = async (name: string, value: number) =>
      decaySeconds > 0 && (await client.set(name, String(value), 'EX', Math.max(1, decaySeconds), 'NX')) === 'OK';
    await add(`${item}:timer`, this.now() + decaySeconds);
    const added = await add(item, 0);
    const hits = await client.incrby(item, 1);
    if (!added && hits === 1) {
      if (decaySeconds > 0) await client.setex(item, Math.max(1, decaySeconds), '1');
      else await client.del(item);
    }
    return hits;
  }

  /** The hits counted for `key` in its window (0 when none). */
  async attempts(key: string): Promise<number> {
    const value = await this.cache.client.get(this.item(key));
    if (value === null) return 0;
    const hits = Number(value);
    if (!Number.isFinite(hits))
      throw new Error(
        `the rate limiter's count ${JSON.stringify(this.cache.key(this.item(key)))} holds ${JSON.stringify(value.slice(0, 40))}, not a number`,
      );
    return hits;
  }

  /** Seconds until the window of `key` ends (0 when it has none). */
  async availableIn(key: string): Promise<number> {
    const timer = await this.cache.client.get(`${this.item(key)}:timer`);
    return Math.max(0, (timer === null ? 0 : Number(timer) || 0) - this.now());
  }

  /** Forgets the hits and the window of `key`. */
  async clear(key: string): Promise<void> {
    const item = this.item(key);
    await this.cache.client.del(item, `${item}:timer`);
  }

  /** The cache key of `key` in full (store prefix included). */
  private item(key: string): string {
    checkKey(key);
    return this.cache.key(key);
  }
}

/** A key that htmlentities() would leave as it is. */
function checkKey(key: string): void {
  if (/[&<>"'\u0080-\uffff]/.test(key)) {
    throw new Error(
      `rate limiter key ${JSON.stringify(key)}: Laravel rewrites & < > " ' and non-ASCII characters in keys (cleanRateLimiterKey); use a key without them, or RateLimited's md5 keys`,
    );
  }
}
