/**
 * The last hour, for the chart. Laravel's Redis queue keeps no history of what ran: a job that
 * finished is simply gone. So the chart says only what something counted:
 * - depth: the process samples each queue's counts every few seconds while it runs (history
 *   starts when the dashboard starts, and is kept in memory only);
 * - left: per minute, how far the queue's total went down between two samples, summed: jobs
 *   that left the queue, done, failed, cancelled or cleared alike, and a lower bound, since a
 *   push between two samples hides as many;
 * - finished: per minute, jobs that ran to the end as a record counted them, exact: Horizon's
 *   metrics (PHP's and Node's workers under Horizon) and Node's own record (src/record); null
 *   when neither counts the queue, rather than the samples passed off as finished jobs;
 * - failed: per minute, from failed_jobs.failed_at, exact and for the whole hour whichever side failed it.
 */
import type { QueueCounts } from './source.js';

export const HOUR = 3600;
const MINUTES = 60;

interface Sample extends QueueCounts {
  at: number;
}

/** Who counted a queue's finished jobs. */
export type FinishedSource = 'horizon' | 'node';

export interface QueueHistory {
  /** UNIX seconds of the first minute shown; each series has one value a minute, 60 of them. */
  from: number;
  /** Jobs that left the queue (done, failed, cancelled or cleared) as the samples saw it shrink: a lower bound. */
  left: number[];
  /** Jobs that ran to the end, as `finishedFrom` counted them; null when nothing counts them. */
  finished: number[] | null;
  failed: number[];
  /** The last depth (ready + delayed + reserved) sampled in each minute; null before sampling began. */
  depth: (number | null)[];
  /** Who counted `finished`: Horizon's metrics, Node's record, both (their counts added), or none. */
  finishedFrom: FinishedSource[];
}

/** A count of finished jobs, taken at a UNIX second: it goes to that second's minute. */
export interface FinishedPoint {
  at: number;
  count: number;
}

export class History {
  readonly #samples = new Map<string, Sample[]>();

  /** Keeps one sample of a queue's counts, and drops those older than an hour. */
  record(queue: string, counts: QueueCounts, at = Date.now() / 1000): void {
    const samples = this.#samples.get(queue) ?? [];
    samples.push({ ...counts, at });
    while (samples.length > 0 && samples[0]!.at < at - HOUR) samples.shift();
    this.#samples.set(queue, samples);
  }

  /**
   * The last hour of one queue by minute, the failures given (how many at each UNIX second), and the
   * finished jobs counted by `finishedFrom` (each count in the minute it was taken: a Horizon
   * snapshot's covers the minutes before it).
   */
  of(
    queue: string,
    failedAt: FinishedPoint[],
    now = Date.now() / 1000,
    counted: FinishedPoint[] = [],
    finishedFrom: FinishedSource[] = [],
  ): QueueHistory {
    const from = Math.floor(now / 60) * 60 - (MINUTES - 1) * 60;
    const minute = (at: number) => Math.floor((at - from) / 60);
    const left = new Array<number>(MINUTES).fill(0);
    const failed = new Array<number>(MINUTES).fill(0);
    const depth = new Array<number | null>(MINUTES).fill(null);
    const samples = this.#samples.get(queue) ?? [];
    samples.forEach((sample, i) => {
      const m = minute(sample.at);
      if (m < 0 || m >= MINUTES) return;
      const total = sample.ready + sample.delayed + sample.reserved;
      depth[m] = total;
      const before = samples[i - 1];
      if (before) left[m]! += Math.max(0, before.ready + before.delayed + before.reserved - total);
    });
    const finished = finishedFrom.length > 0 ? new Array<number>(MINUTES).fill(0) : null;
    if (finished)
      for (const point of counted) {
        const m = Math.min(MINUTES - 1, minute(point.at));
        if (m >= 0) finished[m]! += point.count;
      }
    for (const { at, count } of failedAt) {
      const m = minute(at);
      if (m >= 0 && m < MINUTES) failed[m]! += count;
    }
    return { from, left, finished, failed, depth, finishedFrom };
  }
}
