/**
 * Errors every driver may throw to the worker, with a meaning the worker acts on whatever keeps the jobs.
 */

/**
 * A finished job's bookkeeping (its delete) that the queue did not take: the job ran, and stays
 * reserved to come back after retry_after, never failed for it.
 */
export class BookkeepingError extends Error {
  override name = 'BookkeepingError';
}

/** Whether a thrown value is a BookkeepingError; never throws itself (a handler may throw a hostile Proxy). */
export function isBookkeepingError(error: unknown): boolean {
  try {
    return error instanceof BookkeepingError;
  } catch {
    return false;
  }
}
