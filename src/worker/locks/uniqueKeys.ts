/**
 * The key of a unique job's lock, as each Laravel version spells it (Illuminate\Bus\UniqueLock):
 * `laravel_unique_job:` + the job's name + its uniqueId.
 *
 * | Laravel        | key                                                                  |
 * |----------------|----------------------------------------------------------------------|
 * | 8.67 – 10.x    | `laravel_unique_job:` . class . uniqueId                              |
 * | 11.0+          | `laravel_unique_job:` . class . `:` . uniqueId                        |
 * | 12.41+         | displayName() instead of the class, when the class defines it         |
 * | 12.54+         | hash('xxh128', displayName()) instead                                 |
 *
 * What else a version writes of the lock (the hidden context, the owner) is uniqueContext.ts's.
 */
import type { LaravelProfile } from '../../laravel/index.js';

export const UNIQUE_KEY_PREFIX = 'laravel_unique_job:';

/** A Laravel version as [major, minor]; null when unknown. */
export function parseVersion(version: string | null | undefined): [number, number] | null {
  const match = /^v?(\d+)\.(\d+)/.exec(version ?? '');
  return match ? [Number(match[1]), Number(match[2])] : null;
}

/** Whether the version is `major.minor` or later. */
export const atLeast = (v: [number, number], major: number, minor: number) => v[0] > major || (v[0] === major && v[1] >= minor);

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
  const hashed = displayName === undefined ? undefined : (hashedBefore(displayName) ?? (await xxh128(displayName)));
  return uniqueLockKeysNow(className, uniqueId, version, profile, displayName, hashed)!;
}

/**
 * uniqueLockKeys at once, given displayName's xxh128 when it has been worked out: undefined when
 * the spelling needs that hash and it was not given (the caller then hashes, which is async).
 * A worker without shapes asks this after every job, so most calls never wait.
 */
export function uniqueLockKeysNow(
  className: string,
  uniqueId: string,
  version: [number, number] | null,
  profile: LaravelProfile,
  displayName: string | undefined,
  hashed: string | undefined = displayName === undefined ? undefined : hashedBefore(displayName),
): string[] | undefined {
  const old = UNIQUE_KEY_PREFIX + className + uniqueId;
  if (version) {
    if (!atLeast(version, 8, 67)) return [];
    if (!atLeast(version, 11, 0)) return [old];
    if (displayName === undefined || !atLeast(version, 12, 41)) return [elevenKey(className, uniqueId)];
    if (!atLeast(version, 12, 54)) return [elevenKey(displayName, uniqueId)];
    return hashed === undefined ? undefined : [elevenKey(hashed, uniqueId)];
  }
  // The payload's profile names a family of versions; every spelling within it is released.
  switch (profile) {
    case '5.8':
    case '7':
      return [];
    case '8':
    case '9':
      // 8.43 to 12.10 write these envelopes; 11.0 and 11.1 among them.
      return [old, elevenKey(className, uniqueId)];
    default: {
      if (displayName === undefined || !(Number(profile) >= 12)) return [elevenKey(className, uniqueId)];
      if (hashed === undefined) return undefined;
      return [elevenKey(className, uniqueId), elevenKey(displayName, uniqueId), elevenKey(hashed, uniqueId)];
    }
  }
}

/** The 11.0+ spelling: `laravel_unique_job:` . name . `:` . uniqueId. */
const elevenKey = (name: string, uniqueId: string) => `${UNIQUE_KEY_PREFIX}${name}:${uniqueId}`;

let hasher: Promise<(text: string) => Promise<string>> | undefined;
/** PHP's hash('xxh128', …), from hash-wasm (WebAssembly, loaded when first needed). */
export async function xxh128(text: string): Promise<string> {
  const known = hashedBefore(text);
  if (known !== undefined) return known;
  hasher ??= import('hash-wasm').then((module) => (input: string) => module.xxhash128(input));
  const hash = await (await hasher)(text);
  rememberHash(text, hash);
  return hash;
}

/** The hashes of the last few thousand names (a job's displayName): most workers see a handful of classes. */
const HASHES_KEPT = 4096;
const hashes = new Map<string, string>();

/** xxh128 of `text` when worked out before, at once. */
export function hashedBefore(text: string): string | undefined {
  return hashes.get(text);
}

function rememberHash(text: string, hash: string): void {
  // Bounded: the oldest goes (a Map iterates in insertion order).
  if (hashes.size >= HASHES_KEPT) hashes.delete(hashes.keys().next().value!);
  hashes.set(text, hash);
}
