/**
 * The lock dispatch takes: PendingDispatch's shouldDispatch() for a ShouldBeUnique job (8.67+),
 * named before it is taken (13.24+ writes its owner into the payload first), then taken in the
 * app's lock store. A duplicate, whose lock another holds, is not pushed.
 */
import { randomId, type LaravelProfile } from '../../laravel/index.js';
import { toJS, type PhpObject } from '../../php/index.js';
import type { ClassShape, ShapesFile } from '../../shapes/shape.js';
import { findShape } from '../../shapes/command.js';
import { translatedMethod } from '../../shapes/expression.js';
import type { UniqueLockStore } from './LockStore.js';
import { SHOULD_BE_UNIQUE, UnnamedLockError, uniqueIdOf } from './uniqueJob.js';
import { atLeast, parseVersion, uniqueLockKeys } from './uniqueKeys.js';

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

/** uniqueId() for a dispatch: one `lqb shapes` could not translate is refused, naming what to give instead. */
function uniqueIdOfDispatch(command: PhpObject, shape: ClassShape): Promise<string> {
  const translated = translatedMethod(shape, 'uniqueId');
  if (translated && 'untranslated' in translated)
    throw new UnnamedLockError(
      `${shape.name} defines uniqueId(), which lqb shapes could not translate (${translated.untranslated}): give the id it would return (--unique-id, or a uniqueId function)`,
    );
  return uniqueIdOf(command, shape);
}
