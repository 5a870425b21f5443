/**
 * What ran in the last hour, per job class and per queue, as the records that count it say:
 * Node's workers' own record (src/record: every job a Node worker finished, exact), Horizon's
 * metrics where Horizon runs (PHP's workers, and Node's under `--horizon`), and failed_jobs
 * (every failure, whichever side; its trace names the side: src/ui/side.ts).
 *
 * PHP's finished jobs are counted only by Horizon. Without Horizon they cannot be known, and
 * the answer says so (`php: null`) rather than guess from the queue's samples. With Horizon, its
 * count of a class is every side's that Horizon measures: Node's workers under `--horizon` are
 * in it too, so it is given as Horizon's, beside Node's own, never as PHP's alone.
 */
import type { MinuteRow } from '../record/index.js';
import type { Side } from './side.js';

/** One class's (or one queue's) last hour. */
export interface ActivityRow {
  /** The class, or the queue. */
  name: string;
  node: { completed: number; failed: number; runtimeMs: number | null };
  /** Horizon's count and mean runtime, where Horizon measures it; null where it does not. */
  horizon: { throughput: number; runtimeMs: number | null; perMinute: number[]; runtimePerMinute: (number | null)[] } | null;
  /** Failures recorded in failed_jobs in the hour, by the side their trace names (unknown: no trace says). */
  failed: Record<Side | 'unknown', number>;
  /** Per minute, jobs Node's workers finished (60 values, oldest first). */
  perMinute: number[];
  /** Per minute, their mean runtime in ms; null in a minute with none. */
  runtimePerMinute: (number | null)[];
}

/** A failure of the hour: its class (or queue) and the side its trace names. */
export interface HourFailure {
  name: string;
  side: Side | null;
}

const MINUTES = 60;

/**
 * Rows for each class (or queue) any record names in the hour from `from` (UNIX seconds of the
 * first minute), sorted by name. `key` picks the class or the queue of a minute row.
 */
export function activityOf(
  minutes: MinuteRow[],
  from: number,
  key: (row: MinuteRow) => string,
  horizon: Map<string, { throughput: number; runtime: number | null; points?: { at: number; throughput: number; runtime: number }[] }>,
  failures: HourFailure[],
): ActivityRow[] {
  const rows = new Map<string, ActivityRow & { ms: number; msPerMinute: number[] }>();
  const rowOf = (name: string) => {
    let row = rows.get(name);
    if (!row) {
      row = {
        name,
        node: { completed: 0, failed: 0, runtimeMs: null },
        horizon: null,
        failed: { php: 0, node: 0, unknown: 0 },
        perMinute: new Array<number>(MINUTES).fill(0),
        runtimePerMinute: [],
        ms: 0,
        msPerMinute: new Array<number>(MINUTES).fill(0),
      };
      rows.set(name, row);
    }
    return row;
  };
  for (const minute of minutes) {
    const row = rowOf(key(minute));
    row.node.completed += minute.completed;
    row.node.failed += minute.failed;
    row.ms += minute.runtimeMs;
    const at = Math.floor((minute.minute - from) / 60);
    if (at >= 0 && at < MINUTES) {
      row.perMinute[at]! += minute.completed + minute.failed;
      row.msPerMinute[at]! += minute.runtimeMs;
    }
  }
  for (const [name, measured] of horizon) {
    // Horizon's counts over time: each snapshot's count in the minute it was taken (it covers the minutes before it).
    const perMinute = new Array<number>(MINUTES).fill(0);
    const msPerMinute = new Array<number>(MINUTES).fill(0);
    for (const point of measured.points ?? []) {
      const at = Math.min(MINUTES - 1, Math.floor((point.at - from) / 60));
      if (at < 0) continue;
      perMinute[at]! += point.throughput;
      msPerMinute[at]! += point.throughput * point.runtime;
    }
    rowOf(name).horizon = {
      throughput: measured.throughput,
      runtimeMs: measured.runtime,
      perMinute,
      runtimePerMinute: meansOf(msPerMinute, perMinute),
    };
  }
  for (const failure of failures) rowOf(failure.name).failed[failure.side ?? 'unknown']++;
  return [...rows.values()]
    .map(({ ms, msPerMinute, ...row }) => {
      const ran = row.node.completed + row.node.failed;
      return {
        ...row,
        node: { ...row.node, runtimeMs: ran === 0 ? null : Math.round((ms / ran) * 100) / 100 },
        runtimePerMinute: meansOf(msPerMinute, row.perMinute),
      };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Per minute, total ms over jobs, to two decimals; null in a minute with no job. */
function meansOf(ms: number[], jobs: number[]): (number | null)[] {
  return ms.map((total, i) => (jobs[i]! === 0 ? null : Math.round((total / jobs[i]!) * 100) / 100));
}
