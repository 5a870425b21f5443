/**
 * The failures a worker records, named after Laravel's exceptions so a failed-jobs record
 * reads the same whichever side wrote it.
 */

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
 * The text a failed-jobs record keeps, laid out as PHP's (string) $e is: `Class: message in
 * FILE:LINE`, `Stack trace:`, numbered frames ending in `{main}`, so what reads Laravel's rows
 * reads ours.
 */
export function exceptionText(error: unknown): string {
  if (!(error instanceof Error)) return `Error: ${String(error)}`;
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)).map((line) => line.trim().replace(/^at /, ''));
  // Where it was thrown: the first frame's file and line (`fn (file:///x.js:12:5)` or `file:12:5`).
  const thrown = /\(?([^\s()]+):(\d+):\d+\)?$/.exec(frames[0] ?? '');
  const place = thrown ? ` in ${thrown[1]!.replace(/^file:\/\//, '')}:${thrown[2]}` : '';
  const trace = [...frames, '{main}'].map((frame, i) => `#${i} ${frame}`).join('\n');
  const cause = error.cause instanceof Error ? `\n\nCaused by: ${exceptionText(error.cause)}` : '';
  return `${error.name}: ${error.message}${place}\nStack trace:\n${trace}${cause}`;
}
