/**
 * The failures a worker records, named after Laravel's exceptions so a failed-jobs record
 * reads the same whichever side wrote it.
 */
import { inspect } from 'node:util';
import { laravelOfJob } from './laravelOfJob.js';

/**
 * How the app's Laravel words the failures its worker records. 8.x to 10.9 record a timeout and
 * running out of attempts alike, as a MaxAttemptsExceededException "…or run too long"; from 10.10
 * a timeout is a TimeoutExceededException ("has timed out."), and running out of attempts loses
 * the tail ("has been attempted too many times.").
 */
export type FailureWording = 'before-10.10' | 'from-10.10';

/**
 * The wording of the version the job is read as (laravelOfJob.ts: the app's where known, else
 * what its payload shows); else the older words, which every version before 10.10 writes.
 */
export function failureWording(laravel: string | undefined, envelope?: object, onlyGiven = false): FailureWording {
  const known = versionParts(laravelOfJob(laravel, envelope, onlyGiven));
  return known && (known[0] > 10 || (known[0] === 10 && known[1] >= 10)) ? 'from-10.10' : 'before-10.10';
}

/** Major and minor of "12.67.0", "v10.10", "13" (minor 0); undefined for what is no version. */
function versionParts(version: string | undefined): [number, number] | undefined {
  const match = version === undefined ? null : /^v?(\d+)(?:\.(\d+))?/.exec(version.trim());
  return match ? [Number(match[1]), Number(match[2] ?? 0)] : undefined;
}

/** The job ran out of attempts (or of time, by its retryUntil; or, before 10.10, past its timeout). */
export class MaxAttemptsExceededError extends Error {
  override name = 'Illuminate\\Queue\\MaxAttemptsExceededException';
  constructor(displayName: string, wording: FailureWording = 'before-10.10') {
    super(
      wording === 'from-10.10'
        ? `${displayName} has been attempted too many times.`
        : `${displayName} has been attempted too many times or run too long. The job may have previously timed out.`,
    );
  }
}

/**
 * The handler ran past its timeout: what its `job.signal` is aborted with, and, from Laravel
 * 10.10, what the failure is recorded as (in Laravel's words, which name no seconds).
 */
export class TimeoutExceededError extends Error {
  override name = 'Illuminate\\Queue\\TimeoutExceededException';
  constructor(
    displayName: string,
    /** The timeout it ran past, in seconds. */
    readonly seconds?: number,
  ) {
    super(`${displayName} has timed out.`);
  }
}

/** What a job past its timeout is failed with: the exception the app's Laravel records for it. */
export function timedOutFailure(displayName: string, wording: FailureWording): Error {
  return wording === 'from-10.10' ? new TimeoutExceededError(displayName) : new MaxAttemptsExceededError(displayName, wording);
}

/**
 * `job.fail()` without an Error: no message, as Laravel's `fail()` leaves it, or the string
 * given, as Laravel 9+'s `fail('reason')` wraps one.
 */
export class ManuallyFailedError extends Error {
  override name = 'Illuminate\\Queue\\ManuallyFailedException';
  constructor(message = '') {
    super(message);
  }
}

/** What `job.fail(error?)` fails with: the Error given, a string as its message, nothing as no message. */
export function manualFailure(error?: unknown): unknown {
  if (error === undefined || error === null) return new ManuallyFailedError();
  return typeof error === 'string' ? new ManuallyFailedError(error) : error;
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
 * FILE:LINE` (`Class in FILE:LINE` when the message is empty), `Stack trace:`, numbered frames
 * ending in `{main}`, so what reads Laravel's rows reads ours. A chain of causes comes as PHP
 * writes previous exceptions: the deepest first, each outer one after `Next `, followed only so
 * far, since a cause may be its own error's cause. Any thrown value has a text (a non-Error is
 * described, under the class `Error`).
 */
export function exceptionText(error: unknown): string {
  const chain = [error];
  for (let cause = causeOf(error); cause !== undefined && chain.length <= MAX_CAUSES; cause = causeOf(cause)) chain.push(cause);
  return chain.reverse().map(oneExceptionText).join('\n\nNext ');
}

/** An Error's cause, when it is an Error too. */
function causeOf(error: unknown): Error | undefined {
  if (!isError(error)) return undefined;
  const cause = guarded(() => error.cause, undefined);
  return isError(cause) ? cause : undefined;
}

/** One exception of a chain, without its causes. */
function oneExceptionText(error: unknown): string {
  // Not an Error: no stack to show, but the same layout, so what reads PHP's rows reads it.
  if (!isError(error)) return `${headline('Error', describeError(error))}\nStack trace:\n#0 {main}`;
  const name = guarded(() => error.name, 'Error');
  const stack = guarded(() => error.stack, undefined);
  const frames = (typeof stack === 'string' ? stack : '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .map((line) => line.trim().replace(/^at /, ''));
  // Where it was thrown: the first frame's file and line (`fn (file:///x.js:12:5)` or `file:12:5`).
  const thrown = /\(?([^\s()]+):(\d+):\d+\)?$/.exec(frames[0] ?? '');
  const place = thrown ? ` in ${thrown[1]!.replace(/^file:\/\//, '')}:${thrown[2]}` : '';
  const trace = [...frames, '{main}'].map((frame, i) => `#${i} ${frame}`).join('\n');
  return `${headline(typeof name === 'string' ? name : 'Error', describeError(error))}${place}\nStack trace:\n${trace}`;
}

/** `Class: message`, or only `Class` when the message is empty, as PHP leaves it out. */
function headline(name: string, message: string): string {
  return message === '' ? name : `${name}: ${message}`;
}

/** How many causes a record follows: enough for any real chain, finite for a cyclic one. */
const MAX_CAUSES = 10;
