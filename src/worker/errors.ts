/**
 * The failures a worker records, named after Laravel's exceptions so a failed-jobs record
 * reads the same whichever side wrote it.
 */
import { inspect } from 'node:util';

/** The job ran out of attempts (or of time, by its retryUntil). */
export class MaxAttemptsExceededError extends Error {
  override name = 'Illuminate\\Queue\\MaxAttemptsExceededException';
  constructor(displayName: string) {
    super(`${displayName} has been attempted too many times or run too long. The job may have previously timed out.`);
  }
}

/** The handler ran past its timeout. */
export class TimeoutExceededError extends Error {
  override name = 'Illuminate\\Queue\\TimeoutExceededException';
  constructor(displayName: string, seconds: number) {
    super(`${displayName} has timed out after ${seconds} seconds.`);
  }
}

/** `job.fail()` was called without a reason. */
export class ManuallyFailedError extends Error {
  override name = 'Illuminate\\Queue\\ManuallyFailedException';
  constructor() {
    super('This job was failed manually.');
  }
}

/** No handler in the handlers module for this job, and the queue is not shared with PHP. */
export class NoHandlerError extends Error {
  override name = 'LaravelQueueBridge\\NoHandlerException';
}

/** The payload or its command could not be read: the job cannot run anywhere as it is. */
export class UndecodableJobError extends Error {
  override name = 'LaravelQueueBridge\\UndecodableJobException';
}

/**
 * A one-line description of anything a handler may throw. JavaScript throws any value: null, a
 * string, a Symbol, an object with no prototype (which String() refuses), a Proxy whose every
 * trap throws, an Error whose `message` getter throws. None of them may stop a job from being
 * failed and recorded, so every read here is guarded.
 */
export function describeError(error: unknown): string {
  if (isError(error) || isErrorLike(error)) {
    const message = guarded(() => (error as Error).message, undefined);
    if (typeof message === 'string') return message;
  }
  return describeValue(error);
}

/** Text for a thrown value that is not an Error: its String() when it has one, else how Node would show it. */
function describeValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'symbol') return value.toString();
  const text = guarded(() => String(value), undefined);
  if (typeof text === 'string' && text !== '[object Object]') return text;
  return guarded(() => inspect(value, { depth: 2, breakLength: Infinity }), 'a thrown value that cannot be described');
}

/** instanceof, which a Proxy's getPrototypeOf trap may make throw. */
function isError(value: unknown): value is Error {
  return guarded(() => value instanceof Error, false);
}

function isErrorLike(value: unknown): boolean {
  return guarded(() => value !== null && typeof value === 'object' && 'message' in value, false);
}

/** What `read` returns, or `fallback` when reading throws. */
function guarded<T, F>(read: () => T, fallback: F): T | F {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/**
 * The text a failed-jobs record keeps, laid out as PHP's (string) $e is: `Class: message in
 * FILE:LINE`, `Stack trace:`, numbered frames ending in `{main}`, so what reads Laravel's rows
 * reads ours. Any thrown value has one (a non-Error is described, under the class `Error`), and
 * a chain of causes is followed only so far, since a cause may be its own error's cause.
 */
export function exceptionText(error: unknown, depth = 0): string {
  // Not an Error: no stack to show, but the same layout, so what reads PHP's rows reads it.
  if (!isError(error)) return `Error: ${describeError(error)}\nStack trace:\n#0 {main}`;
  const name = guarded(() => error.name, 'Error');
  const stack = guarded(() => error.stack, undefined);
  const frames = (typeof stack === 'string' ? stack : '').split('\n').filter((line) => /^\s+at /.test(line)).map((line) => line.trim().replace(/^at /, ''));
  // Where it was thrown: the first frame's file and line (`fn (file:///x.js:12:5)` or `file:12:5`).
  const thrown = /\(?([^\s()]+):(\d+):\d+\)?$/.exec(frames[0] ?? '');
  const place = thrown ? ` in ${thrown[1]!.replace(/^file:\/\//, '')}:${thrown[2]}` : '';
  const trace = [...frames, '{main}'].map((frame, i) => `#${i} ${frame}`).join('\n');
  const cause = guarded(() => error.cause, undefined);
  const causeText = isError(cause) && depth < MAX_CAUSES ? `\n\nCaused by: ${exceptionText(cause, depth + 1)}` : '';
  return `${typeof name === 'string' ? name : 'Error'}: ${describeError(error)}${place}\nStack trace:\n${trace}${causeText}`;
}

/** How many causes a record follows: enough for any real chain, finite for a cyclic one. */
const MAX_CAUSES = 10;
