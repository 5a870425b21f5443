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
  const decoded = asPhpArray(decodeJson(payload));
  // isset(): an attempts of null stays null.
  if (decoded instanceof Map && decoded.get('attempts') != null) decoded.set('attempts', 0);
  // RetryCommand decodes and encodes the payload a second time (refreshRetryUntil), and that
  // pass reads back what the first one wrote: a -0.0, written "-0", becomes the int 0.
  return phpJson(asPhpArray(decodeJson(phpJson(decoded))));
}

const phpJson = (value: JsonValue) => encodeJson(value, { unescapedUnicode: false });

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * What json_decode(…, true) then json_encode does to a value: objects become PHP arrays, so
 * an empty one is written `[]` and one keyed 0..n-1 in order is written as a list; integers
 * beyond 64 bits become floats; "-0" is the int 0.
 */
function asPhpArray(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(asPhpArray);
  if (typeof value === 'bigint') return value >= INT64_MIN && value <= INT64_MAX ? value : new PhpFloat(Number(value));
  // PHP keeps only the float's value, and writes it in its own spelling. The one float read
  // here from an integer's spelling is "-0", which PHP reads as the int 0.
  if (value instanceof PhpFloat) return value.source === undefined && Object.is(value.value, -0) ? 0 : new PhpFloat(value.value);
  if (value === null || typeof value !== 'object') return value;
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
