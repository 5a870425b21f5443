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
import type { Queue } from '../queue/contract.js';
import type { ShapesFile } from '../shapes/shape.js';
import { findShape } from '../shapes/command.js';
import type { FailedJob, FailedJobProvider } from './FailedJobProvider.js';

/**
 * The payload with attempts 0, as Laravel's RetryCommand writes it; with `retryUntil`, that
 * value set as refreshRetryUntil sets the result of the command's retryUntil() method.
 */
export function resetAttempts(payload: string, refresh?: { retryUntil: number | null }): string {
  const decoded = asPhpArray(phpDecode(payload));
  // isset(): an attempts of null stays null.
  if (decoded instanceof Map && decoded.get('attempts') != null) decoded.set('attempts', 0);
  // RetryCommand decodes and encodes the payload a second time (refreshRetryUntil), and that
  // pass reads back what the first one wrote: a -0.0, written "-0", becomes the int 0.
  const again = asPhpArray(phpDecode(phpJson(decoded)));
  if (refresh && again instanceof Map) again.set('retryUntil', refresh.retryUntil);
  return phpJson(again);
}

/** What `lqb retry --retry-until` says the new window is: seconds from now, none (null), or the payload's own. */
export type RetryUntilChoice = { seconds: number } | 'none' | 'keep';

/**
 * What queue:retry's refreshRetryUntil would write into a retried payload's `retryUntil`, as far
 * as Node can tell. Laravel calls the command's retryUntil() method again (a fresh window) and
 * leaves the value alone when the class has no such method (a `$retryUntil` property, a queued
 * listener's). Node cannot call PHP, so:
 * - a payload without a command, or whose retryUntil is null, keeps it (as the method would
 *   have to have given null at dispatch);
 * - the class shapes say no retryUntil() method (or it is a queued listener): kept, as Laravel keeps it;
 * - otherwise the new window is `choice` (seconds from now, none, keep); without one, the job is
 *   refused with the reason, so it never goes back with a window that has already closed.
 */
export function retryUntilFor(
  payload: string,
  options: { shapes?: ShapesFile; choice?: RetryUntilChoice; now?: number } = {},
): { keep: true } | { retryUntil: number | null } | { refuse: string } {
  let envelope: { retryUntil?: unknown; data?: { command?: unknown; commandName?: unknown } };
  try {
    envelope = JSON.parse(payload) as typeof envelope;
  } catch {
    return { keep: true }; // resetAttempts refuses it with its own reason
  }
  if (
    envelope === null ||
    typeof envelope !== 'object' ||
    envelope.data?.command === undefined ||
    envelope.retryUntil === null ||
    envelope.retryUntil === undefined
  )
    return { keep: true };
  const className = typeof envelope.data.commandName === 'string' ? envelope.data.commandName : undefined;
  if (className === CALL_QUEUED_LISTENER) return { keep: true };
  const shape = className ? findShape(options.shapes, className) : undefined;
  if (shape && !shape.methods.includes('retryUntil')) return { keep: true };
  const choice = options.choice;
  if (choice === 'keep') return { keep: true };
  if (choice === 'none') return { retryUntil: null };
  if (choice) return { retryUntil: (options.now ?? Math.floor(Date.now() / 1000)) + choice.seconds };
  const name = className ?? 'its command';
  const why = shape
    ? `${name} has a retryUntil() method, which queue:retry calls for a fresh window and Node cannot`
    : `its retryUntil may come from a retryUntil() method of ${name}, which queue:retry calls for a fresh window and Node cannot${options.shapes ? ` (${name} is not in the shapes)` : ' (give --shapes to tell)'}`;
  return { refuse: `${why}; say the new window with --retry-until=SECONDS, or --retry-until=none or keep` };
}

const CALL_QUEUED_LISTENER = 'Illuminate\\Events\\CallQueuedListener';

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

/**
 * Pushes a failed job back onto its queue and forgets its record; with `retryUntil`, its window
 * as retryUntilFor decides it. Returns the reason when the job is refused (its record stays).
 */
export async function retryFailedJob(
  failer: FailedJobProvider,
  /** The queue of the connection the record names (Laravel's `connection($job->connection)`). */
  queue: Queue,
  job: FailedJob,
  retryUntil?: { shapes?: ShapesFile; choice?: RetryUntilChoice; now?: number },
): Promise<string | undefined> {
  const window = retryUntil ? retryUntilFor(job.payload, retryUntil) : { keep: true as const };
  if ('refuse' in window) return window.refuse;
  await queue.pushRaw(resetAttempts(job.payload, 'retryUntil' in window ? window : undefined), job.queue);
  await failer.forget(job.uuid);
  return undefined;
}
