/**
 * The lock a job the worker runs holds, to be released where Laravel's CallQueuedHandler
 * releases it. PendingDispatch takes a cache lock before it pushes a ShouldBeUnique job and
 * drops the job when the lock is held; the worker that runs the job frees it again. A Node
 * worker that never freed it would leave every later dispatch of the job silently dropped.
 *
 * The payload's hidden context names the lock when the version wrote it (11.39+); else the key
 * is spelled as the app's version spells it, or every spelling the payload's profile allows.
 */
import { PhpObject, deref, toJS, type PhpValue } from '../../php/index.js';
import type { DecodedPayload } from '../../laravel/index.js';
import type { ClassShape, ShapesFile } from '../../shapes/shape.js';
import { findShape } from '../../shapes/command.js';
import type { JobMethods } from '../handlers.js';
import { hiddenUniqueContext, namesThisJob, writesUniqueContext, type UniqueContext } from './uniqueContext.js';
import { SHOULD_BE_UNIQUE, SHOULD_BE_UNIQUE_UNTIL_PROCESSING, uniqueIdFromCommand, uniqueIdOf } from './uniqueJob.js';
import { parseVersion, uniqueLockKeys, uniqueLockKeysNow } from './uniqueKeys.js';

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
  return uniquenessNow(payload, command, shapes, methods);
}

/**
 * uniquenessOf, at once when nothing in it waits (the common case: no lock key in the payload's
 * context, no uniqueId function, no hash not worked out before); else a promise. May throw
 * UnnamedLockError as it is called, as well as reject with it.
 */
export function uniquenessNow(
  payload: DecodedPayload,
  command: PhpValue | undefined,
  shapes: ShapesFile | undefined,
  methods?: JobMethods,
): Uniqueness | undefined | Promise<Uniqueness | undefined> {
  const object = command === undefined ? undefined : deref(command);
  if (!(object instanceof PhpObject)) return undefined;
  const className = object.className;
  const shape = findShape(shapes, className);
  if (shape && !shape.interfaces.includes(SHOULD_BE_UNIQUE)) return undefined;
  const untilProcessing = shape?.interfaces.includes(SHOULD_BE_UNIQUE_UNTIL_PROCESSING) ?? false;
  const ownerValue = toJS(object.get('uniqueLockOwner') ?? null);
  const owner = typeof ownerValue === 'string' && ownerValue !== '' ? ownerValue : undefined;
  const known = shape !== undefined;
  // 11.39+: PendingDispatch wrote the store and key it locked into the hidden context (13.24+ the owner too).
  const context = hiddenUniqueContext(payload);
  if (context.key !== undefined)
    return fromContextOrKeys(payload, object, shape, shapes, methods, { untilProcessing, known, owner }, context);
  return fromKeys(payload, object, shape, shapes, methods, { untilProcessing, known, owner });
}

/** What every Uniqueness of the job carries, whichever way its keys are found. */
interface Base {
  untilProcessing: boolean;
  known: boolean;
  owner: string | undefined;
}

/** The lock the hidden context names, when it names this job's; else the keys the version spells. */
async function fromContextOrKeys(
  payload: DecodedPayload,
  object: PhpObject,
  shape: ClassShape | undefined,
  shapes: ShapesFile | undefined,
  methods: JobMethods | undefined,
  base: Base,
  context: UniqueContext,
): Promise<Uniqueness | undefined> {
  if (await namesThisJob(context.key!, object.className, payload)) {
    const unique: Uniqueness = { untilProcessing: base.untilProcessing, known: base.known, keys: [context.key!] };
    const lockOwner = base.owner ?? context.owner;
    if (lockOwner) unique.owner = lockOwner;
    if (context.store !== undefined) unique.store = context.store;
    return unique;
  }
  return fromKeys(payload, object, shape, shapes, methods, base);
}

/** The keys the app's version (or the payload's profile) spells for the job, at once unless a uniqueId function or a hash must be waited for. */
function fromKeys(
  payload: DecodedPayload,
  object: PhpObject,
  shape: ClassShape | undefined,
  shapes: ShapesFile | undefined,
  methods: JobMethods | undefined,
  base: Base,
): Uniqueness | undefined | Promise<Uniqueness | undefined> {
  // A 12.11+ envelope without that context was not locked by its dispatch; a shape saying unique is released as Laravel's worker would.
  if (!shape && writesUniqueContext(payload.profile)) return undefined;
  const className = object.className;
  const version = parseVersion(shapes?.laravel);
  const displayName = displayNameMethod(payload, shape, className);
  if (methods?.uniqueId) {
    return uniqueIdOf(object, shape, methods.uniqueId).then(async (uniqueId) =>
      withKeys(base, await uniqueLockKeys(className, uniqueId, version, payload.profile, displayName)),
    );
  }
  const uniqueId = uniqueIdFromCommand(object, shape);
  const keys = uniqueLockKeysNow(className, uniqueId, version, payload.profile, displayName);
  if (keys) return withKeys(base, keys);
  return uniqueLockKeys(className, uniqueId, version, payload.profile, displayName).then((hashed) => withKeys(base, hashed));
}

/** The Uniqueness of a job whose lock goes by `keys`; undefined when its version spells none. */
function withKeys(base: Base, keys: string[]): Uniqueness | undefined {
  if (keys.length === 0) return undefined;
  return base.owner
    ? { untilProcessing: base.untilProcessing, known: base.known, owner: base.owner, keys }
    : { untilProcessing: base.untilProcessing, known: base.known, keys };
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
