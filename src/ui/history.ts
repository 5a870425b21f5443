/**
 * The last hour, for the chart. Laravel's Redis queue keeps no history of what ran: a job that
 * finished is simply gone. So the dashboard keeps its own, honestly labelled:
 * - depth: the process samples each queue's counts every few seconds while it runs (history
 *   starts when the dashboard starts, and is kept in memory only);
 * - finished: per minute, how far the queue's total went down between two samples, summed: a
 *   lower bound of the jobs that finished (done or failed), since a push between two samples
 *   hides as many finished jobs;
 * - failed: per minute, from failed_jobs.failed_at, exact and for the whole hour whichever side failed it.
 * Where Horizon measures the queue, its counts replace the samples' finished jobs (see horizon.ts).
 */
import type { QueueCounts } from './source.js';

export const HOUR = 3600;
const MINUTES = 60;

interface Sample extends QueueCounts {
  at: number;
}

export interface QueueHistory {
  /** UNIX seconds of the first minute shown; each series has one value a minute, 60 of them. */
  from: number;
  finished: number[];
  failed: number[];
  /** The last depth (ready + delayed + reserved) sampled in each minute; null before sampling began. */
  depth: (number | null)[];
  /** Where `finished` comes from: the dashboard's samples (a lower bound), or Horizon's metrics (exact). */
  finishedFrom: 'samples' | 'horizon';
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
   * The last hour of one queue by minute, the failures given (UNIX seconds of each). With
   * Horizon's counts (each at the second it was taken: a snapshot's covers the minutes before
   * it), they are the finished jobs, each in the minute it was taken.
   */
  of(queue: string, failedAt: number[], now = Date.now() / 1000, horizon?: { at: number; throughput: number }[]): QueueHistory {
    const from = Math.floor(now / 60) * 60 - (MINUTES - 1) * 60;
    const minute = (at: number) => Math.floor((at - from) / 60);
    const finished = new Array<number>(MINUTES).fill(0);
    const failed = new Array<number>(MINUTES).fill(0);
    const depth = new Array<number | null>(MINUTES).fill(null);
    const samples = this.#samples.get(queue) ?? [];
    samples.forEach((sample, i) => {
      const m = minute(sample.at);
      if (m < 0 || m >= MINUTES) return;
      const total = sample.ready + sample.delayed + sample.reserved;
      depth[m] = total;
      const before = samples[i - 1];
      if (before && !horizon) finished[m]! += Math.max(0, before.ready + before.delayed + before.reserved - total);
    });
    for (const point of horizon ?? []) {
      const m = Math.min(MINUTES - 1, minute(point.at));
      if (m >= 0) finished[m]! += point.throughput;
    }
    for (const at of failedAt) {
      const m = minute(at);
      if (m >= 0 && m < MINUTES) failed[m]!++;
    }
    return { from, finished, failed, depth, finishedFrom: horizon ? 'horizon' : 'samples' };
  }
}
