/**
 * Horizon's records, when they are there, as the dashboard reads them: Horizon 5's keys under its
 * prefix (see src/horizon/), on the queue's Redis without the app's prefix. Written by Horizon's
 * PHP listeners and, for Node's work, by `lqb work --horizon` and `lqb dispatch --horizon`.
 *
 * They say more than the queue's keys: each job's status as Horizon saw it (pending, reserved,
 * completed, failed) and when; the jobs that finished, which a Redis queue forgets; and each
 * queue's throughput and mean runtime (measured_queues, `queue:NAME` since the last snapshot,
 * `snapshot:queue:NAME` before it), exact where the dashboard's own samples are a lower bound.
 *
 * Which side ran a job: Node's recorder writes Horizon's records byte for byte as PHP's
 * listeners do (src/horizon/lua/), so a record's status, times and payload do not say. A failed
 * record's exception does: its trace's frames are PHP's or JavaScript's (src/ui/side.ts), and
 * the dashboard names the side from them; of any other record it claims none.
 */
import type { RedisClient } from '../redis/index.js';
import { HOUR } from './history.js';

/** What Horizon's hash of a job says of it. */
export interface HorizonJob {
  id: string;
  status: string | null;
  queue: string | null;
  connection: string | null;
  name: string | null;
  /** UNIX seconds with a fraction, as Horizon writes microtime(true); null when not yet. */
  createdAt: number | null;
  reservedAt: number | null;
  completedAt: number | null;
  failedAt: number | null;
}

/** A job of one of Horizon's lists: its record, with the payload and the exception Horizon kept. */
export interface HorizonListedJob extends HorizonJob {
  payload: string | null;
  exception: string | null;
}

/** A retry of a failed job, as the failed record's `retried_by` lists it (Horizon's Retry). */
export interface HorizonRetry {
  id: string;
  status: string;
  /** UNIX seconds it was retried at. */
  retriedAt: number | null;
}

/** Everything Horizon's hash says of one job, for its page: its record, and its retries either way. */
export interface HorizonDetails extends HorizonListedJob {
  /** The jobs that retried this one (a failed record's `retried_by`), oldest first. */
  retriedBy: HorizonRetry[];
  /** The failed job this one retries (its payload's `retry_of`), if any. */
  retryOf: string | null;
}

/** One of Horizon's supervisors as its records say (PHP's, or a Node worker's shown as one). */
export interface HorizonSupervisorRecord {
  name: string;
  master: string;
  pid: number | null;
  status: string;
  /** Processes per `connection:queue`, as the supervisor's record counts them. */
  processes: Record<string, number>;
}

/** One of Horizon's master supervisors: a machine's Horizon (or a Node worker's stand-in) and its supervisors. */
export interface HorizonMaster {
  name: string;
  pid: number | null;
  status: string;
  environment: string | null;
  supervisors: HorizonSupervisorRecord[];
}

/** Horizon shows the masters and supervisors seen within the last 14 s (its ExpireSupervisors' window). */
const SEEN_WITHIN = 14;

/** Horizon's lists, by the sorted set each is (scored minus the time: newest first by rank). */
export const HORIZON_LISTS = {
  recent: 'recent_jobs',
  pending: 'pending_jobs',
  completed: 'completed_jobs',
  silenced: 'silenced_jobs',
  failed: 'failed_jobs',
} as const;

/** A tag Horizon monitors, with how many of its jobs Horizon keeps, and how many failed. */
export interface MonitoredTag {
  tag: string;
  jobs: number;
  failed: number;
}
export type HorizonList = keyof typeof HORIZON_LISTS;

/** One queue's metrics as Horizon measured them, over the last hour. */
export interface HorizonQueueMetrics {
  /** Jobs finished (not failed) in the last hour: snapshots taken in it, and the count since the last one. */
  throughput: number;
  /** The mean runtime of those jobs, in ms; null when none. */
  runtime: number | null;
  /** Each count and its mean runtime (ms) with the UNIX second it was taken at (a snapshot, or now for the count since the last). */
  points: { at: number; throughput: number; runtime: number }[];
}

const FIELDS = ['id', 'status', 'queue', 'connection', 'name', 'created_at', 'reserved_at', 'completed_at', 'failed_at'] as const;
/** Keys one of which Horizon (or Node's recorder) always leaves once it has recorded anything. */
const MARKERS = ['recent_jobs', 'pending_jobs', 'completed_jobs', 'failed_jobs', 'measured_queues', 'masters'];

export class HorizonView {
  #present: { at: number; yes: boolean } | undefined;

  constructor(
    /** The queue's Redis, without the app's key prefix (Horizon replaces it with its own). */
    readonly client: RedisClient,
    /** Horizon's prefix, e.g. `laravel_horizon:`. */
    readonly prefix: string,
  ) {}

  /** Whether Horizon's records are there (asked again every 10 s): without them, the dashboard says what it says without Horizon. */
  async present(): Promise<boolean> {
    if (this.#present && Date.now() - this.#present.at < 10_000) return this.#present.yes;
    const found = await this.client.exists(...MARKERS.map((key) => this.prefix + key));
    this.#present = { at: Date.now(), yes: found > 0 };
    return this.#present.yes;
  }

  /** Horizon's record of each job id that has one (a job pushed by Horizon's queue has its uuid as id). */
  async jobs(ids: readonly string[]): Promise<Map<string, HorizonJob>> {
    const found = new Map<string, HorizonJob>();
    if (ids.length === 0) return found;
    const pipeline = this.client.pipeline();
    for (const id of ids) pipeline.hmget(this.prefix + id, ...FIELDS);
    const replies = (await pipeline.exec()) ?? [];
    replies.forEach(([error, values], i) => {
      if (error || !Array.isArray(values) || values.every((v) => v === null)) return;
      found.set(ids[i]!, horizonJob(ids[i]!, values as (string | null)[]));
    });
    return found;
  }

  /** A page of one of Horizon's lists, newest first, each with its record. */
  list(list: HorizonList, offset: number, limit: number): Promise<{ total: number; jobs: HorizonListedJob[] }> {
    // Horizon scores its lists by minus the time: the lowest rank is the newest.
    return this.page(this.prefix + HORIZON_LISTS[list], offset, limit, false);
  }

  /** The tags Horizon monitors (its Monitoring page), each with its jobs kept and its failed jobs. */
  async monitored(): Promise<MonitoredTag[]> {
    const tags = (await this.client.smembers(`${this.prefix}monitoring`)).sort();
    const pipeline = this.client.pipeline();
    for (const tag of tags) pipeline.zcard(this.prefix + tag).zcard(`${this.prefix}failed:${tag}`);
    const counts = ((await pipeline.exec()) ?? []).map(([, n]) => Number(n) || 0);
    return tags.map((tag, i) => ({ tag, jobs: counts[2 * i]!, failed: counts[2 * i + 1]! }));
  }

  /** A page of a tag's jobs as Horizon keeps them (the tag's own sorted set, or `failed:TAG`), newest first. */
  tagged(tag: string, failed: boolean, offset: number, limit: number): Promise<{ total: number; jobs: HorizonListedJob[] }> {
    // A tag's sets are scored by the time itself: the highest rank is the newest, as Horizon pages them (ZREVRANGE).
    return this.page(`${this.prefix}${failed ? 'failed:' : ''}${tag}`, offset, limit, true);
  }

  private async page(key: string, offset: number, limit: number, reverse: boolean): Promise<{ total: number; jobs: HorizonListedJob[] }> {
    const last = offset + limit - 1;
    const [total, ids] = await Promise.all([
      this.client.zcard(key),
      reverse ? this.client.zrevrange(key, offset, last) : this.client.zrange(key, offset, last),
    ]);
    const pipeline = this.client.pipeline();
    for (const id of ids) pipeline.hmget(this.prefix + id, ...FIELDS, 'payload', 'exception');
    const replies = (await pipeline.exec()) ?? [];
    const jobs = ids.map((id, i) => {
      const values = (replies[i]?.[1] ?? []) as (string | null)[];
      return { ...horizonJob(id, values), payload: values[FIELDS.length] ?? null, exception: values[FIELDS.length + 1] ?? null };
    });
    return { total, jobs };
  }

  /** The job classes Horizon measures (measured_jobs), each with its last hour as `metrics` reads a queue's. */
  async jobMetrics(now = Date.now() / 1000): Promise<Map<string, HorizonQueueMetrics>> {
    const names = (await this.client.smembers(`${this.prefix}measured_jobs`)).map((key) => key.slice(`${this.prefix}job:`.length));
    const found = new Map<string, HorizonQueueMetrics>();
    for (const name of names.sort()) {
      const measured = await this.metrics(name, now, 'job');
      if (measured) found.set(name, measured);
    }
    return found;
  }

  /** The masters and their supervisors seen in the last 14 s, as Horizon's dashboard lists them (its `masters` and `supervisors` sets). */
  async masters(now = Date.now() / 1000): Promise<HorizonMaster[]> {
    const p = this.prefix;
    const since = Math.floor(now - SEEN_WITHIN);
    const [masterNames, supervisorNames] = await Promise.all([
      this.client.zrangebyscore(`${p}masters`, since, '+inf'),
      this.client.zrangebyscore(`${p}supervisors`, since, '+inf'),
    ]);
    const pipeline = this.client.pipeline();
    for (const name of masterNames) pipeline.hmget(`${p}master:${name}`, 'name', 'pid', 'status', 'environment');
    for (const name of supervisorNames) pipeline.hmget(`${p}supervisor:${name}`, 'name', 'master', 'pid', 'status', 'processes');
    const replies = ((await pipeline.exec()) ?? []).map(([, values]) => (values ?? []) as (string | null)[]);
    const supervisors = replies
      .slice(masterNames.length)
      .filter((values) => values[0] !== null)
      .map((values) => ({
        name: values[0]!,
        master: values[1] ?? '',
        pid: values[2] === null ? null : Number(values[2]),
        status: values[3] ?? 'unknown',
        processes: processesOf(values[4] ?? null),
      }));
    return replies
      .slice(0, masterNames.length)
      .filter((values) => values[0] !== null)
      .map((values) => ({
        name: values[0]!,
        pid: values[1] === null ? null : Number(values[1]),
        status: values[2] ?? 'unknown',
        environment: values[3] ?? null,
        supervisors: supervisors.filter((supervisor) => supervisor.master === values[0]),
      }));
  }

  /** Horizon's hash of one job, with its retries; null when Horizon has none (never recorded, or trimmed). */
  async details(id: string): Promise<HorizonDetails | null> {
    const values = await this.client.hmget(this.prefix + id, ...FIELDS, 'payload', 'exception', 'retried_by');
    if (values.every((value) => value === null)) return null;
    const payload = values[FIELDS.length] ?? null;
    return {
      ...horizonJob(id, values),
      payload,
      exception: values[FIELDS.length + 1] ?? null,
      retriedBy: retriesOf(values[FIELDS.length + 2] ?? null),
      retryOf: retryOfPayload(payload),
    };
  }

  /**
   * A queue's last hour as Horizon measured it, or undefined when Horizon measures it not (it
   * is not among measured_queues and has no snapshot): the counters since the last snapshot,
   * and the snapshots taken within the hour.
   */
  async metrics(queue: string, now = Date.now() / 1000, kind: 'queue' | 'job' = 'queue'): Promise<HorizonQueueMetrics | undefined> {
    const p = this.prefix;
    const [measured, current, snapshots] = await Promise.all([
      this.client.sismember(`${p}measured_${kind === 'queue' ? 'queues' : 'jobs'}`, `${p}${kind}:${queue}`),
      this.client.hmget(`${p}${kind}:${queue}`, 'throughput', 'runtime'),
      this.client.zrangebyscore(`${p}snapshot:${kind}:${queue}`, Math.floor(now - HOUR), '+inf'),
    ]);
    if (!measured && snapshots.length === 0) return undefined;
    const points: { at: number; throughput: number; runtime: number }[] = [];
    for (const member of snapshots) {
      const point = JSON.parse(member) as { throughput?: unknown; runtime?: unknown; time?: unknown };
      points.push({ at: Number(point.time), throughput: Number(point.throughput) || 0, runtime: Number(point.runtime) || 0 });
    }
    if (current[0] !== null) points.push({ at: Math.floor(now), throughput: Number(current[0]) || 0, runtime: Number(current[1]) || 0 });
    const throughput = points.reduce((sum, point) => sum + point.throughput, 0);
    const runtime = throughput === 0 ? null : points.reduce((sum, point) => sum + point.throughput * point.runtime, 0) / throughput;
    return { throughput, runtime, points };
  }
}

function horizonJob(id: string, values: (string | null)[]): HorizonJob {
  const field = (name: (typeof FIELDS)[number]) => values[FIELDS.indexOf(name)] ?? null;
  const time = (name: (typeof FIELDS)[number]) => {
    const value = field(name);
    return value === null || value === '' ? null : Number(value);
  };
  return {
    id: field('id') ?? id,
    status: field('status'),
    queue: field('queue'),
    connection: field('connection'),
    name: field('name'),
    createdAt: time('created_at'),
    reservedAt: time('reserved_at'),
    completedAt: time('completed_at'),
    failedAt: time('failed_at'),
  };
}

/** `retried_by` as Horizon writes it: a JSON list of {id, status, retried_at}; anything else reads as none. */
function retriesOf(text: string | null): HorizonRetry[] {
  if (text === null || text === '') return [];
  try {
    const list = JSON.parse(text) as unknown;
    if (!Array.isArray(list)) return [];
    return list
      .filter((entry): entry is Record<string, unknown> => typeof entry === 'object' && entry !== null)
      .map((entry) => ({
        id: String(entry.id),
        status: String(entry.status),
        retriedAt: typeof entry.retried_at === 'number' || typeof entry.retried_at === 'string' ? Number(entry.retried_at) : null,
      }));
  } catch {
    return [];
  }
}

/**
 * The payload's `retry_of` (set by Horizon's Retry, appended after the envelope's other keys).
 * Inside `data` every quote is escaped: an unescaped `"retry_of":"` is the envelope's own key.
 */
function retryOfPayload(payload: string | null): string | null {
  const at = payload?.lastIndexOf('"retry_of":"') ?? -1;
  if (payload === null || payload === undefined || at < 0) return null;
  const start = at + '"retry_of":"'.length;
  const end = payload.indexOf('"', start);
  return end > start ? payload.slice(start, end) : null;
}

/** A supervisor's `processes`: JSON of process counts per `connection:queue`; anything else reads as none. */
function processesOf(text: string | null): Record<string, number> {
  try {
    const parsed = JSON.parse(text ?? '{}') as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).map(([queue, count]) => [queue, Number(count) || 0]));
  } catch {
    return {};
  }
}
