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
export async function withinTimeout(
  call: () => unknown,
  seconds: number,
  deadline: number = performance.now() + seconds * 1000,
): Promise<TimedOutcome> {
  if (seconds <= 0) {
    await call();
    return 'done';
  }
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - performance.now()));
  });
  const settle = (running: Promise<unknown>) =>
    running.then(
      () => (performance.now() < deadline ? ('done' as const) : ('late' as const)),
      (error: unknown) => {
        if (performance.now() < deadline) throw error;
        return 'late' as const;
      },
    );
  let settled: Promise<'done' | 'late'>;
  try {
    settled = settle(Promise.resolve(call()));
  } catch (error) {
    // A function that is no async function may throw as it is called.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- whatever the handler threw goes on as thrown
    settled = settle(Promise.reject(error));
  }
  try {
    return await Promise.race([settled, expired]);
  } finally {
    clearTimeout(timer);
  }
}
