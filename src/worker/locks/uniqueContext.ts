/**
 * What a payload carries of its unique lock besides the key, per Laravel version: from 11.39
 * PendingDispatch writes the store and key it locked into the payload's hidden context
 * (`illuminate:log:context`), from 13.24 the owner too, and the command its `uniqueLockOwner`,
 * so the worker releases by owner rather than by force. A 12.11+ payload of a unique job
 * without that context took no lock. The worker reads these fields; dispatch writes them.
 */
import { serialize, toJS, unserialize } from '../../php/index.js';
import type { DecodedPayload, JsonObject, LaravelProfile } from '../../laravel/index.js';
import { UNIQUE_KEY_PREFIX, atLeast, xxh128 } from './uniqueKeys.js';

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
  return envelopeUniqueContext(payload.envelope);
}

/** hiddenUniqueContext of an envelope not yet decoded into a payload (what laravelOfJob.ts reads). */
export function envelopeUniqueContext(envelope: Record<string, unknown>): UniqueContext {
  const context = envelope[LOG_CONTEXT];
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
export async function namesThisJob(key: string, className: string, payload: DecodedPayload): Promise<boolean> {
  const names = [className];
  const displayName = payload.envelope.displayName;
  if (typeof displayName === 'string' && displayName !== className) names.push(displayName, await xxh128(displayName));
  return names.some((name) => key.startsWith(`${UNIQUE_KEY_PREFIX}${name}:`));
}

/** `laravel_unique_job_key` in the payload's hidden context (`illuminate:log:context`), 11.39+. */
export function hiddenContextKey(payload: DecodedPayload): string | undefined {
  return hiddenUniqueContext(payload).key;
}

/** Envelopes every version of which (12.11+) writes the hidden context for the unique jobs it locks. */
export function writesUniqueContext(profile: LaravelProfile): boolean {
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
