/**
 * The two things Laravel's worker keeps in its cache, kept where Laravel's Redis cache store
 * keeps them so PHP and Node workers share them: `illuminate:queue:restart` (the time of the
 * last `queue:restart`) and `job-exceptions:{uuid}` (the count `maxExceptions` checks).
 *
 * Laravel's RedisStore puts `{cache prefix}:` before each key (the cache prefix defaults to
 * `{APP_NAME slug}_cache`), on the cache connection, whose client prefix comes first.
 */
import type { RedisClient } from '../redis/index.js';

export const RESTART_KEY = 'illuminate:queue:restart';

export class QueueCache {
  constructor(
    /** The cache connection (Laravel's `cache` Redis connection: database 1 by default). */
    readonly client: RedisClient,
    /** Laravel's `cache.prefix`, e.g. `laravel_cache`. */
    readonly prefix = 'laravel_cache',
  ) {}

  /** The Redis key of a cache item, as RedisStore names it: `{cache prefix}:{name}` (the client adds its own prefix). */
  key(name: string): string {
    return this.prefix ? `${this.prefix}:${name}` : name;
  }

  /** The time of the last restart signal, or null when there was none. */
  async lastRestart(): Promise<number | null> {
    const value = await this.client.get(this.key(RESTART_KEY));
    return value === null ? null : Number(value);
  }

  /** Signals every worker to stop after its current job, as `queue:restart` does (a number, stored forever). */
  async signalRestart(now = Math.floor(Date.now() / 1000)): Promise<number> {
    await this.client.set(this.key(RESTART_KEY), String(now));
    return now;
  }

  /** Counts one more exception for a job; the count lives a day, as Laravel's does. */
  async countException(uuid: string): Promise<number> {
    const key = this.key(`job-exceptions:${uuid}`);
    // Laravel puts 0 with a day's expiry when the key is missing, then increments.
    await this.client.set(key, '0', 'EX', 86400, 'NX');
    return this.client.incr(key);
  }

  async forgetExceptions(uuid: string): Promise<void> {
    await this.client.del(this.key(`job-exceptions:${uuid}`));
  }
}
