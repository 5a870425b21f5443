/**
 * Unique jobs' locks (Laravel 8.67+), released where Laravel's CallQueuedHandler releases
 * them. `PendingDispatch` takes a cache lock before it pushes a ShouldBeUnique job and drops
 * the job when the lock is held; the worker that runs the job frees it again. A Node worker
 * that never freed it would leave every later dispatch of the job silently dropped.
 *
 * The lock's key is `laravel_unique_job:` + the job's name + its uniqueId, spelled per version:
 *
 * | Laravel        | key                                                                  |
 * |----------------|----------------------------------------------------------------------|
 * | 8.67 – 10.x    | `laravel_unique_job:` . class . uniqueId                              |
 * | 11.0+          | `laravel_unique_job:` . class . `:` . uniqueId                        |
 * | 12.41+         | displayName() instead of the class, when the class defines it         |
 * | 12.54+         | hash('xxh128', displayName()) instead                                 |
 * | 11.39+         | the store and key are in the payload's hidden context                 |
 * | 13.24+         | the job carries `uniqueLockOwner` (and the context the owner too):    |
 * |                | released by owner, not by force                                       |
 *
 * From 11.39, PendingDispatch writes that context for every unique job it locks, so a payload
 * of 12.11+ (whose envelope tells) without it took no lock, and the worker sends no release.
 *
 * It lives in the cache store: on Laravel's Redis store on its lock connection (`lock_connection`,
 * the queue's `default` connection in the stock config, not the cache's), under the connection's prefix and
 * `{cache prefix}:` (an owner string set NX, deleted by force or by a compare-and-delete of
 * the owner); on the `database` store as a row of `cache_locks (key, owner, expiration)`, the
 * key under the cache prefix with no separator.
 */
import { QueueCache } from './cache.js';
import { RedisLock } from './RedisLock.js';
import type { Database, DatabaseConfig } from '../database/index.js';
import { TableStore } from './tables.js';
import { PhpEnum, PhpFloat, PhpObject, deref, phpStringOfFloat, serialize, toJS, unserialize, type PhpValue } from '../php/index.js';
import { randomId, type DecodedPayload, type JsonObject, type LaravelProfile } from '../laravel/index.js';
import type { RedisClient } from '../redis/index.js';
import type { ClassShape, ShapesFile } from '../shapes/shape.js';
import { findShape } from '../shapes/command.js';
import { ExpressionError, evaluate, phpString as expressionString, translatedMethod, uniqueIdOfValue } from '../shapes/expression.js';
import type { JobMethods } from './handlers.js';

export const SHOULD_BE_UNIQUE = 'Illuminate\\Contracts\\Queue\\ShouldBeUnique';
export const SHOULD_BE_UNIQUE_UNTIL_PROCESSING = 'Illuminate\\Contracts\\Queue\\ShouldBeUniqueUntilProcessing';
const KEY_PREFIX = 'laravel_unique_job:';

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

/** Laravel's RedisStore locks (RedisLock / PhpRedisLock), on the store's lock connection. */
export class RedisLockStore implements UniqueLockStore {
  /** Force releases waiting to go out together, and the DEL that sends them. */
  #pendingDeletes: { names: string[]; sent: Promise<void> } | undefined;

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
   * next (the job's delete) still comes after its lock's release, as in Laravel.
   */
  forceReleaseAll(keys: string[]): Promise<void> {
    if (keys.length === 0) return Promise.resolve();
    let batch = this.#pendingDeletes;
    if (!batch) {
      const names: string[] = [];
      const sent = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.#pendingDeletes = undefined;
        return this.deleteKeys(names);
      });
      this.#pendingDeletes = batch = { names, sent };
    }
    for (const key of keys) batch.names.push(this.name(key));
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

/** Laravel's DatabaseStore locks: rows of `cache_locks (key, owner, expiration)`. */
export class DatabaseLockStore extends TableStore implements UniqueLockStore {
  constructor(
    db: Database | DatabaseConfig,
    /** Laravel's `cache.stores.database.lock_table`. */
    table = 'cache_locks',
    /** Laravel's `cache.prefix`; DatabaseStore puts nothing after it. */
    private readonly prefix = 'laravel_cache',
    readonly storeName = 'database',
  ) {
    super(db, table);
  }

  async forceRelease(key: string): Promise<void> {
    await this.db.query(`delete from ${this.tableName} where ${this.columns(['key'])} = ?`, [this.prefix + key]);
  }

  async forceReleaseAll(keys: string[]): Promise<void> {
    if (keys.length > 0)
      await this.db.query(
        `delete from ${this.tableName} where ${this.columns(['key'])} in (${keys.map(() => '?').join(', ')})`,
        keys.map((key) => this.prefix + key),
      );
  }

  async release(key: string, owner: string): Promise<boolean> {
    return (
      (
        await this.db.query(`delete from ${this.tableName} where ${this.columns(['key'])} = ? and ${this.columns(['owner'])} = ?`, [
          this.prefix + key,
          owner,
        ])
      ).affected > 0
    );
  }

  async owner(key: string): Promise<string | null> {
    const [row] = (
      await this.db.query<{ owner?: unknown; expiration?: unknown }>(
        `select * from ${this.tableName} where ${this.columns(['key'])} = ? limit 1`,
        [this.prefix + key],
      )
    ).rows;
    if (!row || Number(row.expiration) <= Math.floor(Date.now() / 1000)) return null;
    return String(row.owner);
  }

  /**
   * DatabaseLock::acquire: insert the row; when the key is there, take it over only if it is
   * this owner's or has expired. A lock with no expiry is kept a day, as Laravel keeps it.
   */
  async acquire(key: string, owner: string, seconds: number): Promise<boolean> {
    const now = Math.floor(Date.now() / 1000);
    const expiration = seconds > 0 ? now + seconds : now + 86_400;
    const name = this.prefix + key;
    const [keyColumn, ownerColumn, expirationColumn] = [this.columns(['key']), this.columns(['owner']), this.columns(['expiration'])];
    try {
      await this.db.query(`insert into ${this.tableName} (${keyColumn}, ${ownerColumn}, ${expirationColumn}) values (?, ?, ?)`, [
        name,
        owner,
        expiration,
      ]);
      return true;
    } catch {
      const updated = await this.db.query(
        `update ${this.tableName} set ${ownerColumn} = ?, ${expirationColumn} = ? where ${keyColumn} = ? and (${ownerColumn} = ? or ${expirationColumn} <= ?)`,
        [owner, expiration, name, owner, now],
      );
      return updated.affected >= 1;
    }
  }
}

/** How a job is unique, as far as the worker can tell. */
export interface Uniqueness {
  /** ShouldBeUniqueUntilProcessing: released before the handler runs, never on failure. */
  untilProcessing: boolean;
  /**
   * True when a class's shape says it is ShouldBeUnique; false when the worker was given no
   * shape for the class (or no version said which) and releases the keys it would have: a
   * job that is not unique has no lock under them, so the release changes nothing.
   */
  known: boolean;
  /** The keys to release: one when the version is known, every spelling the payload allows when not. */
  keys: string[];
  /** 13.24+: the owner the lock was taken with. */
  owner?: string;
  /** 11.39+: the cache store the payload says the lock is in. */
  store?: string;
}

/** Why a unique job's lock cannot be named: its uniqueId() is PHP that Node cannot run. */
export class UnnamedLockError extends Error {
  override name = 'UnnamedLockError';
}

/** A Laravel version as [major, minor]; null when unknown. */
export function parseVersion(version: string | null | undefined): [number, number] | null {
  const match = /^v?(\d+)\.(\d+)/.exec(version ?? '');
  return match ? [Number(match[1]), Number(match[2])] : null;
}

const atLeast = (v: [number, number], major: number, minor: number) => v[0] > major || (v[0] === major && v[1] >= minor);

/**
 * The key spellings a version (or, without one, a payload profile) allows, for a job named
 * `className` whose displayName() is `displayName` when the class defines one.
 */
export async function uniqueLockKeys(
  className: string,
  uniqueId: string,
  version: [number, number] | null,
  profile: LaravelProfile,
  displayName: string | undefined,
): Promise<string[]> {
  const old = KEY_PREFIX + className + uniqueId;
  const eleven = (name: string) => `${KEY_PREFIX}${name}:${uniqueId}`;
  if (version) {
    if (!atLeast(version, 8, 67)) return [];
    if (!atLeast(version, 11, 0)) return [old];
    if (displayName === undefined || !atLeast(version, 12, 41)) return [eleven(className)];
    return [eleven(atLeast(version, 12, 54) ? await xxh128(displayName) : displayName)];
  }
  // The payload's profile names a family of versions; every spelling within it is released.
  switch (profile) {
    case '5.8':
    case '7':
      return [];
    case '8':
    case '9':
      // 8.43 to 12.10 write these envelopes; 11.0 and 11.1 among them.
      return [old, eleven(className)];
    default: {
      const keys = [eleven(className)];
      if (displayName !== undefined && Number(profile) >= 12) keys.push(eleven(displayName), eleven(await xxh128(displayName)));
      return keys;
    }
  }
}

let hasher: Promise<(text: string) => Promise<string>> | undefined;
/** PHP's hash('xxh128', …), from hash-wasm (WebAssembly, loaded when first needed). */
export async function xxh128(text: string): Promise<string> {
  hasher ??= import('hash-wasm').then((module) => (input: string) => module.xxhash128(input));
  return (await hasher)(text);
}

/**
 * PHP's string conversion of a uniqueId, as `'…'.$uniqueId` makes it: a PhpValue (ints are
 * numbers, floats PhpFloat), or JSON from a shape's declared value (a non-integral number is a float).
 */
export function phpString(value: PhpValue | undefined): string {
  const v = value === undefined ? null : deref(value);
  if (v === null || v === false) return '';
  if (v === true) return '1';
  if (v instanceof PhpFloat) return phpStringOfFloat(v.value);
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : phpStringOfFloat(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('latin1');
  if (v instanceof PhpEnum) throw new UnnamedLockError(`a uniqueId that is an enum (${v.className}) has no string form in PHP`);
  throw new UnnamedLockError('a uniqueId that is an array or an object has no string form Node can know');
}

/**
 * What the payload and the shapes say of the job's lock, or undefined when it has none to
 * release. Throws UnnamedLockError when the class is unique but its key cannot be known.
 */
export async function uniquenessOf(
  payload: DecodedPayload,
  command: PhpValue | undefined,
  shapes: ShapesFile | undefined,
  methods?: JobMethods,
): Promise<Uniqueness | undefined> {
  const object = command === undefined ? undefined : deref(command);
  if (!(object instanceof PhpObject)) return undefined;
  const className = object.className;
  const shape = findShape(shapes, className);
  if (shape && !shape.interfaces.includes(SHOULD_BE_UNIQUE)) return undefined;
  const untilProcessing = shape?.interfaces.includes(SHOULD_BE_UNIQUE_UNTIL_PROCESSING) ?? false;
  const ownerValue = toJS(object.get('uniqueLockOwner') ?? null);
  const owner = typeof ownerValue === 'string' && ownerValue !== '' ? ownerValue : undefined;
  const base = { untilProcessing, known: shape !== undefined, ...(owner ? { owner } : {}) };
  // 11.39+: PendingDispatch wrote the store and key it locked into the hidden context (13.24+ the owner too).
  const context = hiddenUniqueContext(payload);
  if (context.key !== undefined && (await namesThisJob(context.key, className, payload))) {
    const lockOwner = owner ?? context.owner;
    return {
      ...base,
      keys: [context.key],
      ...(lockOwner ? { owner: lockOwner } : {}),
      ...(context.store !== undefined ? { store: context.store } : {}),
    };
  }
  // A 12.11+ envelope without that context was not locked by its dispatch; a shape saying unique is released as Laravel's worker would.
  if (!shape && writesUniqueContext(payload.profile)) return undefined;
  const version = parseVersion(shapes?.laravel);
  const uniqueId = await uniqueIdOf(object, shape, methods?.uniqueId);
  const displayName = displayNameMethod(payload, shape, className);
  const keys = await uniqueLockKeys(className, uniqueId, version, payload.profile, displayName);
  return keys.length > 0 ? { ...base, keys } : undefined;
}

/**
 * The uniqueId Laravel appends: the handler's uniqueId function when it has one; else uniqueId()
 * as `lqb shapes` translated it (refused when it could not); else the property.
 */
async function uniqueIdOf(command: PhpObject, shape: ClassShape | undefined, given?: JobMethods['uniqueId']): Promise<string> {
  if (given) return givenUniqueId(command, given);
  const translated = translatedMethod(shape, 'uniqueId');
  if (translated && 'untranslated' in translated) {
    throw new UnnamedLockError(
      `${command.className} defines uniqueId(), which lqb shapes could not translate (${translated.untranslated}), its handler gives no uniqueId function, and the payload carries no lock key (Laravel 11.39+ does): its unique lock cannot be released`,
    );
  }
  if (translated) {
    try {
      return uniqueIdOfValue(evaluate(translated.expression, command));
    } catch (error) {
      if (error instanceof ExpressionError)
        throw new UnnamedLockError(`${command.className}'s uniqueId() as translated cannot be evaluated on this job: ${error.message}`);
      throw error;
    }
  }
  const property = command.get('uniqueId');
  if (property !== undefined) return phpString(property);
  if (shape && Object.hasOwn(shape.declared, 'uniqueId')) return phpString(shape.declared.uniqueId as PhpValue);
  return '';
}

/**
 * displayName() when the class defines one: the envelope's displayName is its result. A shape
 * says whether the class defines it; without one, a displayName other than the class's name does.
 */
function displayNameMethod(payload: DecodedPayload, shape: ClassShape | undefined, className: string): string | undefined {
  const displayName = payload.envelope.displayName;
  if (typeof displayName !== 'string') return undefined;
  if (shape) return shape.methods.includes('displayName') ? displayName : undefined;
  return displayName !== className ? displayName : undefined;
}

/** Where the payload's hidden context (`illuminate:log:context`, 11.39+) keeps a unique job's lock. */
const CONTEXT_KEYS = {
  store: 'laravel_unique_job_cache_store',
  key: 'laravel_unique_job_key',
  owner: 'laravel_unique_job_lock_owner',
} as const;
export const LOG_CONTEXT = 'illuminate:log:context';

/** A unique job's lock as the payload's hidden context names it; each part only when there. */
export interface UniqueContext {
  store?: string;
  key?: string;
  owner?: string;
}

/** The store, key and (13.24+) owner in the payload's hidden context; a value that is not a serialized string is left out. */
export function hiddenUniqueContext(payload: DecodedPayload): UniqueContext {
  const context = payload.envelope[LOG_CONTEXT];
  if (context === null || typeof context !== 'object' || Array.isArray(context)) return {};
  const hidden = (context as Record<string, unknown>).hidden;
  if (hidden === null || typeof hidden !== 'object' || Array.isArray(hidden)) return {};
  const found: UniqueContext = {};
  for (const [part, name] of Object.entries(CONTEXT_KEYS) as [keyof UniqueContext, string][]) {
    const value = serializedString((hidden as Record<string, unknown>)[name]);
    if (value !== undefined) found[part] = value;
  }
  return found;
}

/** A hidden context value (PHP-serialized, as Context keeps hidden values), when it is a non-empty string. */
function serializedString(serialized: unknown): string | undefined {
  if (typeof serialized !== 'string') return undefined;
  try {
    const value = toJS(unserialize(serialized));
    return typeof value === 'string' && value !== '' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a context's key is this job's own lock. Laravel hydrates the context of the job it runs
 * and writes it into every job that job dispatches (its chain's next link too), so a job that is
 * not unique may carry the key of the unique job that dispatched it; a unique job's own dispatch
 * writes its own. The key names the job by its class, or (12.41+) its displayName() or that
 * name's xxh128 (12.54+), which the envelope's displayName gives.
 */
async function namesThisJob(key: string, className: string, payload: DecodedPayload): Promise<boolean> {
  const names = [className];
  const displayName = payload.envelope.displayName;
  if (typeof displayName === 'string' && displayName !== className) names.push(displayName, await xxh128(displayName));
  return names.some((name) => key.startsWith(`${KEY_PREFIX}${name}:`));
}

/** `laravel_unique_job_key` in the payload's hidden context (`illuminate:log:context`), 11.39+. */
export function hiddenContextKey(payload: DecodedPayload): string | undefined {
  return hiddenUniqueContext(payload).key;
}

/** Envelopes every version of which (12.11+) writes the hidden context for the unique jobs it locks. */
function writesUniqueContext(profile: LaravelProfile): boolean {
  return profile === '12' || profile === '13';
}

/**
 * What the app's version writes of a lock its dispatch took: the hidden context (11.39+: store
 * and key; 13.24+ the owner too), an envelope key that goes where createPayloadUsing hooks'
 * keys go, and (13.24+) the command's `uniqueLockOwner`. Without a version, the profile's
 * family decides: 12 writes the context, 13 the owner too; 11 and before nothing (11.0–11.38 did not).
 */
export function uniqueLockFields(
  lock: { key: string; owner: string; store: string },
  version: [number, number] | null,
  profile: LaravelProfile,
): { extra: JsonObject; queueable: { uniqueLockOwner?: string } } | undefined {
  const context = version ? atLeast(version, 11, 39) : writesUniqueContext(profile);
  if (!context) return undefined;
  const owner = version ? atLeast(version, 13, 24) : profile === '13';
  const hidden: JsonObject = { [CONTEXT_KEYS.store]: phpSerialized(lock.store), [CONTEXT_KEYS.key]: phpSerialized(lock.key) };
  if (owner) hidden[CONTEXT_KEYS.owner] = phpSerialized(lock.owner);
  return { extra: { [LOG_CONTEXT]: { data: [], hidden } }, queueable: owner ? { uniqueLockOwner: lock.owner } : {} };
}

const phpSerialized = (value: string): string => Buffer.from(serialize(value)).toString('utf8');

/** A unique job's lock as its dispatch will take it: the key, a fresh owner, and for how long (0: until released). */
export interface PlannedLock {
  key: string;
  owner: string;
  seconds: number;
}

/** A unique job's lock as its dispatch takes it: the key, and whether this dispatch got it. */
export interface DispatchLock {
  key: string;
  owner: string;
  /** False: another holds the lock, and the job is a duplicate Laravel would not push. */
  acquired: boolean;
}

/**
 * PendingDispatch's shouldDispatch() for a ShouldBeUnique job (8.67+): the lock under the key
 * the app's version spells, held `uniqueFor` seconds (none: until released) by a fresh owner.
 * Undefined for a class that is not unique (or a version before unique jobs). A uniqueId(),
 * uniqueVia() or (12.41+) displayName() method is PHP that Node cannot run: refused, unless the
 * caller gives the uniqueId.
 */
export async function acquireUniqueLock(
  store: UniqueLockStore,
  shapes: ShapesFile,
  command: PhpObject,
  profile: LaravelProfile,
  options: PlanOptions = {},
): Promise<DispatchLock | undefined> {
  const lock = await planUniqueLock(shapes, command, profile, options);
  return lock && { key: lock.key, owner: lock.owner, acquired: await store.acquire(lock.key, lock.owner, lock.seconds) };
}

/** What a dispatch knows besides the shapes: the id and the displayName it was given, the app's Laravel. */
export interface PlanOptions {
  /** uniqueId()'s result, given (--unique-id, a uniqueId function). */
  uniqueId?: string;
  /** displayName()'s result, given or translated: the envelope's displayName, which 12.41+ name the lock by. */
  displayName?: string;
  /** The app's Laravel version (dispatch's `laravel`), over the shapes'. */
  laravel?: string;
}

/** The lock acquireUniqueLock takes, named before it is taken (13.24+ writes its owner into the payload first). */
export async function planUniqueLock(
  shapes: ShapesFile,
  command: PhpObject,
  profile: LaravelProfile,
  options: PlanOptions = {},
): Promise<PlannedLock | undefined> {
  const shape = findShape(shapes, command.className);
  if (!shape?.interfaces.includes(SHOULD_BE_UNIQUE)) return undefined;
  if (shape.methods.includes('uniqueVia'))
    throw new UnnamedLockError(`${shape.name} defines uniqueVia(), PHP that Node cannot run: the store its lock belongs in is unknown`);
  // The version the payload is written for names the lock too: one version for both.
  const version = parseVersion(options.laravel ?? shapes.laravel);
  const namedByDisplayName = shape.methods.includes('displayName') && (!version || atLeast(version, 12, 41));
  // 12.41 named it by displayName(), 12.54 by its hash: without the version, which one is unknown.
  if (namedByDisplayName && !version)
    throw new UnnamedLockError(
      `${shape.name} defines displayName(), and its lock is named by it from Laravel 12.41 (by its xxh128 from 12.54): give the app's Laravel version (laravel, or the shapes' own)`,
    );
  if (namedByDisplayName && options.displayName === undefined)
    throw new UnnamedLockError(
      `${shape.name} defines displayName(), PHP that Node cannot run, and its lock is named by it: give the name it would return (a displayName option or function)`,
    );
  const uniqueId = options.uniqueId ?? (await uniqueIdOfDispatch(command, shape));
  const [key] = await uniqueLockKeys(shape.name, uniqueId, version, profile, namedByDisplayName ? options.displayName : undefined);
  if (key === undefined) return undefined;
  const uniqueFor = Number(toJS(command.get('uniqueFor') ?? null) ?? shape.declared.uniqueFor ?? 0) || 0;
  return { key, owner: randomId(16), seconds: Math.max(0, Math.floor(uniqueFor)) };
}

function uniqueIdOfDispatch(command: PhpObject, shape: ClassShape): Promise<string> {
  const translated = translatedMethod(shape, 'uniqueId');
  if (translated && 'untranslated' in translated)
    throw new UnnamedLockError(
      `${shape.name} defines uniqueId(), which lqb shapes could not translate (${translated.untranslated}): give the id it would return (--unique-id, or a uniqueId function)`,
    );
  return uniqueIdOf(command, shape);
}

/** A handler's (or dispatch's) uniqueId function, its result as PHP's string conversion makes it. */
async function givenUniqueId(command: PhpObject, given: NonNullable<JobMethods['uniqueId']>): Promise<string> {
  let value: unknown;
  try {
    value = await given({ name: command.className, command: toJS(command) as Record<string, unknown> });
  } catch (error) {
    // The job has run: a throw here names the lock as unknown, and never fails the job.
    throw new UnnamedLockError(`the uniqueId function given for ${command.className} threw: ${(error as Error)?.message ?? String(error)}`);
  }
  try {
    return expressionString(typeof value === 'number' && !Number.isInteger(value) ? new PhpFloat(value) : (value as PhpValue));
  } catch (error) {
    throw new UnnamedLockError(
      `the uniqueId function given for ${command.className} returned what has no string form: ${(error as Error).message}`,
    );
  }
}
