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

/** The text a failed-jobs record keeps: class, message, and where it came from, as PHP's (string) $e. */
export function exceptionText(error: unknown): string {
  if (!(error instanceof Error)) return `Error: ${String(error)}`;
  const stack = (error.stack ?? '').split('\n').slice(1).map((line) => line.trim());
  const cause = error.cause instanceof Error ? `\n\nCaused by: ${exceptionText(error.cause)}` : '';
  return `${error.name}: ${error.message}\nStack trace:\n${stack.map((line, i) => `#${i} ${line.replace(/^at /, '')}`).join('\n')}${cause}`;
}
