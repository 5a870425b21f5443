/**
 * The job's timeout, written once: a handler and its failed() hook both run against it.
 *
 * The timer is on the event loop, so a call that blocks the loop past its deadline settles
 * before the timer can fire; it ran too long all the same (Laravel's alarm would have ended
 * it), whether it then returned or threw, so it is `late`, not `done`.
 */

/** How a call ended against its timeout: in time, after its deadline (the loop was blocked), or cut off by the timer. */
export type TimedOutcome = 'done' | 'late' | 'timeout';

/**
 * Runs `call` against `seconds` (0: no limit). A throw in time is thrown; one after the
 * deadline is `late`. `deadline` is performance.now()'s, when the caller needs it first (to
 * watch the same one from the watchdog's thread).
 */
export function withinTimeout(
  call: () => unknown,
  seconds: number,
  deadline: number = performance.now() + seconds * 1000,
): Promise<TimedOutcome> {
  let running: unknown;
  try {
    running = call();
  } catch (error) {
    // A function that is no async function may throw as it is called: in time, that is its throw.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- whatever the handler threw goes on as thrown
    return inTime(seconds, deadline) ? Promise.reject(error) : LATE;
  }
  // Returned without a promise: it has run to its end (one that blocked the loop past its
  // deadline is late). Most handlers of a busy worker end so: no timer is made for them. A value
  // whose `then` cannot even be read is left to Promise.resolve, which rejects with that throw.
  if (!isThenable(running)) return inTime(seconds, deadline) ? DONE : LATE;
  if (seconds <= 0) return Promise.resolve(running).then(() => 'done' as const);
  return new Promise<TimedOutcome>((resolve, reject) => {
    // Set after the call returned, to the same deadline: the timer is on the event loop either way.
    const timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - performance.now()));
    Promise.resolve(running).then(
      () => {
        clearTimeout(timer);
        resolve(inTime(seconds, deadline) ? 'done' : 'late');
      },
      (error: unknown) => {
        clearTimeout(timer);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- whatever the handler threw goes on as thrown
        if (inTime(seconds, deadline)) reject(error);
        else resolve('late');
      },
    );
  });
}

/** Before the deadline, or with no timeout at all (a module function: no closure made per job). */
function inTime(seconds: number, deadline: number): boolean {
  return seconds <= 0 || performance.now() < deadline;
}

/** Settled outcomes, shared: awaiting one costs no new promise. */
const DONE: Promise<TimedOutcome> = Promise.resolve('done');
const LATE: Promise<TimedOutcome> = Promise.resolve('late');

function isThenable(value: unknown): boolean {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  try {
    return typeof (value as { then?: unknown }).then === 'function';
  } catch {
    return true;
  }
}
