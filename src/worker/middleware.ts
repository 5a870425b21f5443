/**
 * Job middleware for Node handlers, under Laravel's own cache keys, so a job guarded in PHP
 * and one guarded in Node keep each other out:
 *
 *   import { withoutOverlapping, rateLimited } from 'laravel-queue-bridge';
 *   export default {
 *     // new WithoutOverlapping($this->order->id) ->releaseAfter(10)->expireAfter(180)
 *     'App\\Jobs\\ShipOrder': withoutOverlapping((job) => job.command.orderId, { releaseAfter: 10, expireAfter: 180 }, async (job) => { … }),
 *     // new RateLimited('backups'), with RateLimiter::for('backups', fn ($job) => Limit::perMinute(2)->by($job->user->id))
 *     'App\\Jobs\\Backup': rateLimited('backups', (job) => ({ maxAttempts: 2, key: job.command.user.id }), async (job) => { … }),
 *   };
 *
 * Both work on the worker's cache (`job.cache`: Laravel's Redis cache store, as `lqb work`
 * finds it), and do what Laravel 8.83's Illuminate\Queue\Middleware classes do.
 */
import { createHash } from 'node:crypto';
import { PhpArray, PhpObject, deref, type PhpValue } from '../php/index.js';
import { phpString } from '../php/string.js';
import { randomId, type JobView } from '../laravel/index.js';
import type { ShapesFile } from '../shapes/shape.js';
import { findShape } from '../shapes/command.js';
import type { QueueCache } from './cache.js';
import type { Handler, HandlerJob } from './handlers.js';
import { RateLimiter } from './RateLimiter.js';
import { RedisLock } from './locks/RedisLock.js';

/** A handler wrapped in guards; `guards` names them, outermost first. */
export type GuardedHandler = Handler & { guards: string[] };

/** A key PHP would concatenate into a string the same way: a string, a whole number, a boolean or null. */
export type GuardKey = string | number | bigint | boolean | null;

export interface WithoutOverlappingOptions {
  /** Seconds before a job that found the lock taken runs again (WithoutOverlapping's releaseAfter; 0 by default). */
  releaseAfter?: number;
  /** Seconds before the lock expires on its own (expireAfter; 0 by default: never, as in Laravel). */
  expireAfter?: number;
  /** A job that finds the lock taken is deleted, not released (dontRelease()). */
  dontRelease?: boolean;
  /** The lock key's prefix (withPrefix()); `laravel-queue-overlap:` by default. */
  prefix?: string;
}

/**
 * Laravel's WithoutOverlapping: the handler runs only while it holds the cache lock
 * `laravel-queue-overlap:{class}:{key}` (class: the command's, `Illuminate\Events\CallQueuedListener`
 * for a listener, as get_class($job) gives it in PHP), which it gives up when it is done, thrown
 * or not. A job that finds the lock taken is released after `releaseAfter` seconds (an attempt
 * used, as in Laravel), or with `dontRelease` deleted as if it had run.
 */
export function withoutOverlapping(key: GuardKey | ((job: HandlerJob) => GuardKey), handler: Handler): GuardedHandler;
export function withoutOverlapping(
  key: GuardKey | ((job: HandlerJob) => GuardKey),
  options: WithoutOverlappingOptions,
  handler: Handler,
): GuardedHandler;
export function withoutOverlapping(
  key: GuardKey | ((job: HandlerJob) => GuardKey),
  optionsOrHandler: WithoutOverlappingOptions | Handler,
  maybeHandler?: Handler,
): GuardedHandler {
  const [options, handler] = typeof optionsOrHandler === 'function' ? [{}, optionsOrHandler] : [optionsOrHandler, maybeHandler];
  if (typeof handler !== 'function') throw new TypeError('withoutOverlapping(key, options, handler): the handler is not a function');
  const releaseAfter = seconds(options.releaseAfter ?? 0, 'releaseAfter');
  const expireAfter = seconds(options.expireAfter ?? 0, 'expireAfter');
  const prefix = options.prefix ?? 'laravel-queue-overlap:';
  return guard('withoutOverlapping', handler, async (job) => {
    const lock = overlapLock(job, overlapLockName(job, typeof key === 'function' ? key(job) : key, prefix), expireAfter);
    if (await lock.acquire()) {
      try {
        return await handler(job);
      } finally {
        await lock.release();
      }
    }
    if (!options.dontRelease) await job.release(releaseAfter);
    return undefined;
  });
}

/** The lock's name as WithoutOverlapping::getLockKey makes it (the store adds its prefix). */
export function overlapLockName(job: HandlerJob, key: GuardKey, prefix = 'laravel-queue-overlap:'): string {
  return `${prefix}${commandClass(job.view, job.decoded.name)}:${keyString(key, 'withoutOverlapping')}`;
}

/** One limit, as Laravel's Illuminate\Cache\RateLimiting\Limit: `maxAttempts` per `decayMinutes` (1), counted per `key` (''). */
export interface Limit {
  key?: GuardKey;
  maxAttempts: number;
  decayMinutes?: number;
}

/** What a named limiter gives for a job: a limit, several (each must allow it), or null for none (Limit::none()). */
export type Limits = Limit | Limit[] | null;

export interface RateLimitedOptions {
  /** A job over the limit is deleted, not released (dontRelease()). */
  dontRelease?: boolean;
}

/**
 * Laravel's RateLimited middleware with the limiter `name`: `limits` is what the PHP app's
 * `RateLimiter::for(name, …)` returns for the job, given here as data or as a function of the
 * job. Each limit is counted under md5(name . limit key) in Laravel's RateLimiter, so PHP and
 * Node jobs limited by the same name and key share one count. A job over a limit is released
 * until the window ends, plus 3 seconds (as Laravel), or with `dontRelease` deleted.
 */
export function rateLimited(name: string, limits: Limits | ((job: HandlerJob) => Limits), handler: Handler): GuardedHandler;
export function rateLimited(
  name: string,
  limits: Limits | ((job: HandlerJob) => Limits),
  options: RateLimitedOptions,
  handler: Handler,
): GuardedHandler;
export function rateLimited(
  name: string,
  limits: Limits | ((job: HandlerJob) => Limits),
  optionsOrHandler: RateLimitedOptions | Handler,
  maybeHandler?: Handler,
): GuardedHandler {
  const [options, handler] = typeof optionsOrHandler === 'function' ? [{}, optionsOrHandler] : [optionsOrHandler, maybeHandler];
  if (typeof handler !== 'function') throw new TypeError('rateLimited(name, limits, options, handler): the handler is not a function');
  if (typeof name !== 'string') throw new TypeError('rateLimited(name, …): the limiter name is not a string');
  if (typeof limits !== 'function') rateLimitKeys(name, limits);
  return guard('rateLimited', handler, async (job) => {
    const keyed = rateLimitKeys(name, typeof limits === 'function' ? limits(job) : limits);
    const limiter = new RateLimiter(cacheOf(job, 'rateLimited'));
    for (const limit of keyed) {
      if (await limiter.tooManyAttempts(limit.key, limit.maxAttempts)) {
        if (!options.dontRelease) await job.release((await limiter.availableIn(limit.key)) + 3);
        return undefined;
      }
      await limiter.hit(limit.key, limit.decayMinutes * 60);
    }
    return handler(job);
  });
}

/** Each limit with the key RateLimited counts it under: md5 of the limiter's name and the limit's key. */
export function rateLimitKeys(name: string, limits: Limits): { key: string; maxAttempts: number; decayMinutes: number }[] {
  if (limits === null || limits === undefined) return [];
  return (Array.isArray(limits) ? limits : [limits]).map((limit) => {
    if (limit === null || typeof limit !== 'object')
      throw new TypeError(`rate limiter ${JSON.stringify(name)}: a limit is { maxAttempts, decayMinutes?, key? }, got ${String(limit)}`);
    const maxAttempts = wholeNumber(limit.maxAttempts, `rate limiter ${JSON.stringify(name)}: maxAttempts`);
    const decayMinutes = wholeNumber(limit.decayMinutes ?? 1, `rate limiter ${JSON.stringify(name)}: decayMinutes`);
    const key = createHash('md5')
      .update(name + keyString(limit.key ?? '', `rate limiter ${JSON.stringify(name)}`))
      .digest('hex');
    return { key, maxAttempts, decayMinutes };
  });
}

/** Wraps a handler, keeping its failed() hook and naming the guard. */
function guard(name: string, inner: Handler, run: (job: HandlerJob) => Promise<unknown>): GuardedHandler {
  const wrapped = Object.assign((job: HandlerJob) => run(job), { guards: [name, ...((inner as Partial<GuardedHandler>).guards ?? [])] });
  if (typeof inner.failed === 'function') Object.assign(wrapped, { failed: inner.failed });
  return wrapped;
}

/**
 * Cache::lock() of the app's cache store: the worker's lock store when it has one (the database
 * store keeps the lock in `cache_locks`, where PHP's WithoutOverlapping looks), else a RedisLock
 * on the cache's lock connection.
 */
function overlapLock(job: HandlerJob, name: string, seconds: number): { acquire(): Promise<boolean>; release(): Promise<boolean> } {
  const locks = job.locks;
  if (!locks) return new RedisLock(cacheOf(job, 'withoutOverlapping'), name, seconds);
  const owner = randomId(16);
  return { acquire: () => locks.acquire(name, owner, seconds), release: () => locks.release(name, owner) };
}

function cacheOf(job: HandlerJob, guardName: string): QueueCache {
  if (!job.cache) throw new Error(`${guardName}() needs the worker's cache (Laravel's Redis cache store), and this worker has none`);
  return job.cache;
}

/** The class get_class($job) gives the middleware: the command's (CallQueuedListener for a listener). */
function commandClass(view: JobView, name: string): string {
  return 'className' in view ? view.className : name;
}

/** The JavaScript types a guard's key may have: those PHP's concatenation takes as they are. */
const KEY_TYPES: string[] = ['string', 'number', 'bigint', 'boolean'];

/**
 * How PHP's string concatenation writes a key (src/php/string.ts). A fractional or huge JS
 * number is refused: it may be a PHP float, which PHP spells its own way, or an int JS rounded.
 */
function keyString(key: GuardKey, where: string): string {
  if (typeof key === 'number' && !Number.isSafeInteger(key))
    throw new TypeError(`${where}: the key ${key} is not a whole number; pass the string PHP would make of it`);
  // A key from JavaScript may be anything: what PHP's concatenation would not take is refused here, naming the guard.
  if (key !== null && key !== undefined && !KEY_TYPES.includes(typeof key))
    throw new TypeError(`${where}: a key is a string, a whole number, a boolean or null, got ${typeof key}`);
  return phpString(key ?? null);
}

function seconds(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0)
    throw new TypeError(`withoutOverlapping: ${name} must be a number of seconds, 0 or more; got ${value}`);
  return Math.floor(value);
}

function wholeNumber(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    throw new TypeError(`${what} must be a whole number, got ${String(value)}`);
  return value;
}

/**
 * Says, once per class, that PHP would run job middleware Node does not: when the class's
 * shape has a middleware() method or a `$middleware` default, or the payload's command carries
 * middleware (`->through()`, or a listener's middleware(), which Laravel copies into it).
 */
export class MiddlewareNotices {
  private readonly said = new Set<string>();

  /** The warning to log for this job, or undefined (nothing to say, or said already). */
  check(view: JobView, handler: Handler | undefined, shapes: ShapesFile | undefined): string | undefined {
    if (!('className' in view)) return undefined;
    const cls = view.kind === 'listener' ? view.listener : view.className;
    // Each class is looked at once: reading a command's middleware costs a busy worker per job.
    if (this.said.has(cls)) return undefined;
    this.said.add(cls);
    const where = middlewareOf(cls, view, shapes);
    if (!where) return undefined;
    const guards = (handler as Partial<GuardedHandler> | undefined)?.guards ?? [];
    const applied =
      guards.length > 0
        ? `; its Node handler applies ${guards.map((g) => `${g}()`).join(' and ')}`
        : '; wrap its Node handler in withoutOverlapping() or rateLimited() to share PHP’s WithoutOverlapping locks and RateLimited limits';
    return `${cls} has job middleware (${where}) that runs in PHP only: Node does not apply it${applied}`;
  }
}

/** Where the class's PHP job middleware is declared, if it has any. */
function middlewareOf(
  cls: string,
  view: JobView & { queueable: { middleware: PhpValue | undefined } },
  shapes: ShapesFile | undefined,
): string | undefined {
  const inPayload = middlewareInPayload(view.queueable.middleware);
  if (inPayload.length > 0) return `in its payload: ${inPayload.join(', ')}`;
  const shape = findShape(shapes, cls);
  if (!shape) return undefined;
  if (shape.methods.includes('middleware')) return 'its middleware() method';
  const property = shape.properties.find((p) => p.name === 'middleware');
  if (property?.default !== undefined && !EMPTY_DEFAULTS.has(property.default)) return 'its $middleware default';
  return undefined;
}

/** A serialized default that holds no middleware: an empty array, or null. */
const EMPTY_DEFAULTS = new Set(['a:0:{}', 'N;']);

/** The class of each middleware object in the command's `middleware` property. */
function middlewareInPayload(value: PhpValue | undefined): string[] {
  const list = value === undefined ? null : deref(value);
  if (!(list instanceof PhpArray)) return [];
  return list.values.map((item) => {
    const object = deref(item);
    return object instanceof PhpObject ? object.className : 'middleware';
  });
}
