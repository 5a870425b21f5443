/**
 * `queue:retry`: a failed job goes back onto its queue with its attempts reset, the payload
 * decoded and encoded again the way PHP's json_decode($payload, true) + json_encode does it
 * (default flags, so non-ASCII is escaped), and its record is forgotten.
 */
import { PhpFloat } from '../php/index.js';
import { decodeJson, encodeJson, isJsonRecord, type JsonValue } from '../laravel/index.js';
import type { RedisQueue } from '../redis/index.js';
import type { FailedJob, FailedJobProvider } from './FailedJobProvider.js';

/** The payload with attempts 0, as Laravel's RetryCommand writes it. */
export function resetAttempts(payload: string): string {
  const decoded = decodeJson(payload);
  if (!isJsonRecord(decoded)) return payload;
  const assoc = asPhpArray(decoded);
  if (assoc instanceof Map && assoc.has('attempts')) assoc.set('attempts', 0);
  return encodeJson(assoc, { unescapedUnicode: false });
}

/**
 * What json_decode(…, true) then json_encode does to a value: objects become PHP arrays, so
 * an empty one is written `[]` and one keyed 0..n-1 in order is written as a list.
 */
function asPhpArray(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(asPhpArray);
  // PHP keeps only the float's value, and writes it in its own spelling.
  if (value instanceof PhpFloat) return new PhpFloat(value.value);
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
