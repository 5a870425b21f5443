/**
 * What Horizon's PHP side does on a schedule, for a fleet of Node workers with no PHP master:
 * the metrics snapshot (`horizon:snapshot`, which feeds the Metrics page's charts) and the
 * trimming of Horizon's job lists (which its master does as it loops). Each is one round trip.
 */
import type { RedisClient } from '../redis/scripts.js';
import { DEFAULT_TRIM, type HorizonTrim } from './HorizonRecorder.js';
import { runHorizonStep } from './steps.js';

export interface SnapshotOptions {
  prefix: string;
  /** `horizon.metrics.trim_snapshots`: points kept per job and per queue (24 each by default). */
  trimSnapshots?: { job?: number; queue?: number };
  /** `horizon.metrics.snapshot_lock` in seconds (300); the lock is held 30 s less, as Horizon holds it. */
  snapshotLock?: number;
  /** UNIX seconds; now by default. */
  now?: number;
}

/** horizon:snapshot: false when another snapshot (PHP's or Node's) took the lock within the lock's time. */
export async function horizonSnapshot(client: RedisClient, options: SnapshotOptions): Promise<boolean> {
  const p = options.prefix;
  const taken = await runHorizonStep<number>(
    client,
    'lqbHorizonSnapshot',
    [`${p}metrics:snapshot`, `${p}measured_jobs`, `${p}measured_queues`, `${p}last_snapshot_at`],
    [
      options.now ?? Math.floor(Date.now() / 1000),
      (options.snapshotLock ?? 300) - 30,
      options.trimSnapshots?.job ?? 24,
      options.trimSnapshots?.queue ?? 24,
      p,
    ],
  );
  return taken > 0;
}

export interface TrimOptions {
  prefix: string;
  /** Horizon's trim settings, in minutes. */
  trim?: Partial<HorizonTrim>;
  /** UNIX seconds; now by default. */
  now?: number;
}

/** Drops the jobs older than the trim settings from Horizon's lists; returns how many entries went. */
export async function trimHorizon(client: RedisClient, options: TrimOptions): Promise<number> {
  const t = { ...DEFAULT_TRIM, ...options.trim };
  const p = options.prefix;
  const lists = ['recent_jobs', 'recent_failed_jobs', 'pending_jobs', 'completed_jobs', 'silenced_jobs', 'failed_jobs', 'monitored_jobs'];
  return runHorizonStep<number>(
    client,
    'lqbHorizonTrim',
    lists.map((list) => p + list),
    [options.now ?? Math.floor(Date.now() / 1000), t.recent, t.recent_failed, t.pending, t.completed, t.completed, t.failed, t.monitored],
  );
}
