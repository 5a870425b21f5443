/**
 * What Laravel's worker keeps in its cache, kept where Laravel's Redis cache store keeps them so
 * PHP and Node workers share them: `illuminate:queue:restart` (the time of the last
 * `queue:restart`), `job-exceptions:{uuid}` (the count `maxExceptions` checks), and the pause
 * switches of `queue:pause` (12.40+: `illuminate:queue:paused:{connection}:{queue}`; 13.25+ also
 * `illuminate:queues:paused` for every queue), PHP's `true` while paused, gone once resumed.
 *
 * Laravel's RedisStore puts the cache prefix before each key, with ':' after it in 8–10 (the
 * prefix defaulting to `{APP_NAME slug}_cache`) and nothing from 11 (`{slug}_cache_`, or the
 * later skeletons' `{slug}-cache-`), on the cache connection, whose client prefix comes first.
 * Locks (RedisLock) use the same names on the store's lock connection.
 */
import { PhpArray, PhpFloat, deref, unserialize, type PhpValue } from '../php/index.js';
import type { RedisClient } from '../redis/index.js';

export const RESTART_KEY = 'illuminate:queue:restart';
/** `queue:pause --all` (13.25+): every queue of every connection. */
export const ALL_PAUSED_KEY = 'illuminate:queues:paused';
/** `queue:pause CONNECTION:QUEUE` (12.40+). */
export const pausedKey = (connection: string, queue: string): string => `illuminate:queue:paused:${connection}:${queue}`;

/** What RedisStore writes for `true` (a non-numeric value is PHP-serialized). */
const PHP_TRUE = 'b:1;';

/**
 * What the worker keeps in the app's cache store, whichever store that is: QueueCache on Redis,
 * DatabaseQueueCache on the `cache` table.
 */
export interface WorkerCache {
  /** The time of the last restart signal, or null when there was none. */
  lastRestart(): Promise<number | null>;
  /** Signals every worker to stop after its current job, as `queue:restart` does. */
  signalRestart(now?: number): Promise<number>;
  /** Counts one more exception for a job (maxExceptions); the count lives a day. */
  countException(uuid: string): Promise<number>;
  forgetExceptions(uuid: string): Promise<void>;
  /** Pauses a queue as `queue:pause` does, forever or for `seconds`. */
  pause(connection: string, queue: string, seconds?: number): Promise<void>;
  resume(connection: string, queue: string): Promise<void>;
  /** `queue:pause --all` / `queue:resume --all` (13.25+). */
  pauseAll(paused: boolean): Promise<void>;
  /** Which of these queues are paused, as Laravel's worker reads it. */
  pausedQueues(connection: string, queues: readonly string[]): Promise<Set<string>>;
}

export class QueueCache implements WorkerCache {
  constructor(
    /** The cache connection (Laravel's `cache` Redis connection: database 1 by default). */
    readonly client: RedisClient,
    /** Laravel's `cache.prefix`, e.g. `laravel_cache` (8–10), `laravel_cache_` (11), `laravel-cache-`. */
    readonly prefix = 'laravel_cache',
    /** What RedisStore puts after a non-empty prefix: ':' in 8–10, nothing from 11. */
    readonly separator = ':',
    /**
     * The store's lock connection (`lock_connection`, the `default` connection in the stock
     * config): where Cache::lock() keys go, under the same names. The cache connection when not given.
     */
    readonly lockClient: RedisClient = client,
  ) {}

  /** The Redis key of a cache item, as RedisStore names it: `{cache prefix}{separator}{name}` (the client adds its own prefix). */
  key(name: string): string {
    return this.prefix ? `${this.prefix}${this.separator}${name}` : name;
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

  /** Pauses a queue as `queue:pause` does: PHP's true, forever, or for `seconds` (QueueManager::pauseFor). */
  async pause(connection: string, queue: string, seconds?: number): Promise<void> {
    const key = this.key(pausedKey(connection, queue));
    if (seconds !== undefined) await this.client.set(key, PHP_TRUE, 'EX', Math.max(1, Math.ceil(seconds)));
    else await this.client.set(key, PHP_TRUE);
  }

  /** Resumes a queue as `queue:resume` does: the switch is forgotten. */
  async resume(connection: string, queue: string): Promise<void> {
    await this.client.del(this.key(pausedKey(connection, queue)));
  }

  /** `queue:pause --all` / `queue:resume --all` (13.25+): the switch for every queue; queues paused one by one stay so. */
  async pauseAll(paused: boolean): Promise<void> {
    if (paused) await this.client.set(this.key(ALL_PAUSED_KEY), PHP_TRUE);
    else await this.client.del(this.key(ALL_PAUSED_KEY));
  }

  /**
   * Which of these queues are paused, as Laravel's worker reads it: the switch for all, else
   * each queue's own, true as PHP reads a cached value. One GET per key (not MGET): on a
   * cluster the keys lie in different slots.
   */
  async pausedQueues(connection: string, queues: readonly string[]): Promise<Set<string>> {
    const keys = [ALL_PAUSED_KEY, ...queues.map((queue) => pausedKey(connection, queue))].map((key) => this.key(key));
    const values = await Promise.all(keys.map((key) => this.client.get(key)));
    if (phpTruthy(values[0]!)) return new Set(queues);
    return new Set(queues.filter((_, i) => phpTruthy(values[i + 1]!)));
  }
}

/**
 * A cached value as `(bool) $cache->get($key)` reads it: RedisStore keeps numbers as they are
 * and serializes anything else; PHP's falsy values (false, 0, '', '0', null, []) are not paused.
 */
export function phpTruthy(stored: string | null): boolean {
  if (stored === null) return false;
  if (/^-?\d+(\.\d+)?$/.test(stored)) return Number(stored) !== 0;
  let value: PhpValue;
  try {
    value = deref(unserialize(stored));
  } catch {
    // Not serialized: RedisStore would not read it back; a string is true unless '' or '0'.
    return stored !== '' && stored !== '0';
  }
  return phpTruthyValue(value);
}

/** `(bool) $value` as PHP casts a cached value (undefined: no value at all). */
export function phpTruthyValue(value: PhpValue | undefined): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === 0n || value === '' || value === '0')
    return false;
  if (value instanceof PhpFloat) return value.value !== 0;
  if (value instanceof PhpArray) return value.keys.length > 0;
  return true;
}

/**
 * The worker's view of the pause switches: read at most once a second (as the restart signal
 * is), the last answer kept in between and when the cache does not answer.
 */
export class PauseWatch {
  #checkedAt = -Infinity;
  #paused = new Set<string>();

  constructor(
    private readonly cache: WorkerCache,
    private readonly connection: string,
    private readonly queues: readonly string[],
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The paused queues as last read, while that read is under a second old; else undefined, and
   * paused() reads them again. A worker asks this before every reserve: answering at once
   * lets the reserve go out in the same turn as the jobs it follows, ahead of their work.
   */
  fresh(): Set<string> | undefined {
    return this.now() - this.#checkedAt < 1000 ? this.#paused : undefined;
  }

  async paused(): Promise<Set<string>> {
    const fresh = this.fresh();
    if (fresh) return fresh;
    this.#checkedAt = this.now();
    try {
      this.#paused = await this.cache.pausedQueues(this.connection, this.queues);
    } catch {
      // The cache is away: keep the last answer; the restart check reports the cache itself.
    }
    return this.#paused;
  }
}
