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
  const old = UNIQUE_KEY_PREFIX + className + uniqueId;
  const eleven = (name: string) => `${UNIQUE_KEY_PREFIX}${name}:${uniqueId}`;
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
