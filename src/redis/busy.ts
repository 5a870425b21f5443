/**
 * Redis busy: while a script runs past `busy-reply-threshold` (`lua-time-limit`, 5 s by
 * default), or while it loads its data, Redis answers every other command with BUSY or LOADING
 * and runs none of them. Such a command never ran, so sending it again is safe, even a push; and
 * a job that ran fine must not be failed for the bookkeeping Redis refused meanwhile.
 */

/** A reply that says Redis did not run the command, and will once the script or the load is over. */
export function isBusyError(error: unknown): boolean {
  const message = (error as Error | undefined)?.message;
  return typeof message === 'string' && /^(BUSY|LOADING) /.test(message);
}

/** How long a command is sent again while Redis is busy before its error is given up to the caller. */
export const BUSY_RETRY_MS = 60_000;

/**
 * Runs a command, and again while Redis answers that it is busy, pausing a little longer each
 * time (up to half a second), for at most `limitMs`; any other outcome is the caller's.
 */
export async function whileBusy<T>(command: () => Promise<T>, limitMs = BUSY_RETRY_MS): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (let pause = 25; ; pause = Math.min(pause * 2, 500)) {
    try {
      return await command();
    } catch (error) {
      if (!isBusyError(error) || Date.now() + pause > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

// The worker acts on it whatever the driver: it lives with the queue contract.
export { BookkeepingError, isBookkeepingError } from '../queue/errors.js';
