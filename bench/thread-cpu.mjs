/**
 * The main thread's CPU time so far, in µs (Linux: /proc's schedstat for it, nanoseconds on a
 * CPU), or NaN elsewhere: a figure that leaves out V8's compiler and collector threads, whose
 * share moves from run to run.
 */
import { readFileSync } from 'node:fs';

/** @returns {number} */
export function mainThreadCpu() {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
  } catch {
    return Number.NaN;
  }
}
