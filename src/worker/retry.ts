/**
 * `queue:retry`: a failed job goes back onto its queue with its attempts reset, the payload
 * decoded and encoded again the way PHP's json_decode($payload, true) + json_encode does it
 * (default flags, so non-ASCII is escaped), and its record is forgotten.
 *
 * Where PHP would push the payload "null" (a payload that is not JSON, or holds a number too
 * large for a float) we refuse with an error instead, and the record stays.
 */
import { PhpFloat } from '../php/index.js';
import { decodeJson, encodeJson, type JsonValue } from '../laravel/index.js';
import type { RedisQueue } from '../redis/index.js';
import type { FailedJob, FailedJobProvider } from './FailedJobProvider.js';

/** The payload with attempts 0, as Laravel's RetryCommand writes it. */
export function resetAttempts(payload: string): string {
  const decoded = asPhpArray(phpDecode(payload));
  // isset(): an attempts of null stays null.
  if (decoded instanceof Map && decoded.get('attempts') != null) decoded.set('attempts', 0);
  // RetryCommand decodes and encodes the payload a second time (refreshRetryUntil), and that
  // pass reads back what the first one wrote: a -0.0, written "-0", becomes the int 0.
  return phpJson(asPhpArray(phpDecode(phpJson(decoded))));
}

// Numbers as json_decode makes them (ints past 64 bits floats, "-0" the int 0, floats to be
// written in PHP's spelling), and written back as json_encode writes them.
const phpDecode = (json: string) => decodeJson(json, { numbers: 'php' });
const phpJson = (value: JsonValue) => encodeJson(value, { unescapedUnicode: false });

/**
 * What json_decode(…, true) does to objects: they become PHP arrays, so an empty one is
 * written `[]` and one keyed 0..n-1 in order is written as a list.
 */
function asPhpArray(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(asPhpArray);
  if (value === null || value instanceof PhpFloat || typeof value !== 'object') return value;
  const entries = value instanceof Map ? [...value] : Object.entries(value);
  if (entries.length === 0) return [];
  if (entries.every(([key], i) => key === String(i))) return entries.map(([, item]) => asPhpArray(item));
  return new Map(entries.map(([key, item]) => [key, asPhpArray(item)]));
}

/** Pushes a failed job back onto its queue and forgets its record. */
export async function retryFailedJob(failer: FailedJobProvider, queue: RedisQueue, job: FailedJob): Promise<void> {
  await queue.pushRaw(resetAttempts(job.payload), job.queue);
  await failer.forget(job.uuid);
}
