/**
 * Where the dashboard reads queues from: Laravel's Redis queue here, the database driver's jobs
 * table in DatabaseQueueSource.ts. The handler only ever asks a source for names, counts and a
 * page of jobs, and has it cancel a delayed job or push a retried one.
 */
import type { RedisClient, RedisQueue } from '../redis/index.js';
import { cancelDelayed, type CancelOutcome } from '../redis/cancel.js';
import { DECODED_UP_TO, HEAD_READ, TAIL_READ, type JobState } from './jobs.js';

export interface QueueCounts {
  ready: number;
  delayed: number;
  reserved: number;
}

/** One job as a page holds it: the payload as stored and the time its state gives it. */
export interface StoredJob {
  payload: string;
  /** UNIX seconds: due (delayed), reservation end (reserved); null for a ready job. */
  until: number | null;
  /** The driver's id, where the payload has none (the database's row id). */
  id?: string;
  /** Attempts so far, where the driver keeps them beside the payload (the database's column). */
  attempts?: number;
  /** UNIX seconds it was pushed, where the driver keeps it beside the payload (the database's created_at). */
  pushedAt?: number;
  /** For a page read cut: the job was too large to send whole, `payload` is its head, and this its size and tail. */
  cut?: { bytes: number; tail: string };
}

/** How a page is read: whole (a download, a search, lqb record), or cut (a list: a job past DECODED_UP_TO as its two ends). */
export interface PageOptions {
  cut?: boolean;
}

export interface QueueSource {
  /** The connection name, as Laravel's config names it (`redis`): pause switches are kept per connection. */
  readonly connection: string;
  /** Every queue the source holds jobs for (or has keys of), sorted. */
  queueNames(): Promise<string[]>;
  counts(queue: string): Promise<QueueCounts>;
  /** Jobs `offset` to `offset + limit - 1` of a state, in the order workers meet them; never the whole queue. */
  page(queue: string, state: JobState, offset: number, limit: number, options?: PageOptions): Promise<{ total: number; jobs: StoredJob[] }>;
  /**
   * Since when (UNIX seconds) the job waiting longest among the ready ones has been ready: the
   * queue's wait is now less this. Undefined when no job is ready; null when its payload does
   * not say (a Redis job of Laravel before 12.11 pushed without Horizon carries no push time).
   */
  readySince(queue: string): Promise<number | null | undefined>;
  /** Where a job is on a queue, by its uuid: an operator's lookup (the queue keeps no index), as `lqb find` looks. */
  find(queue: string, uuid: string): Promise<FoundJob | undefined>;
  cancel(queue: string, uuid: string): Promise<CancelOutcome>;
  /** Pushes a payload as it is (a failed job's retry), as the driver's pushRaw does. */
  pushRaw(payload: string, queue: string): Promise<unknown>;
}

/** A job a lookup found: the job as a page holds it, and its state. */
export interface FoundJob extends StoredJob {
  state: JobState;
}

interface Scanner {
  scan(cursor: string, ...args: (string | number)[]): Promise<[string, string[]]>;
}

/** The suffixes of a queue's other keys, beside its list `queues:NAME`. */
const SUFFIXES = [':delayed', ':reserved', ':notify'];

/** Laravel's Redis queue: `queues:NAME` (list), `:delayed` and `:reserved` (zsets by UNIX time). */
export class RedisQueueSource implements QueueSource {
  readonly connection = 'redis';

  constructor(
    private readonly queue: RedisQueue,
    /** The client's key prefix: SCAN's pattern is not prefixed by ioredis, so it is added here. */
    private readonly prefix: string,
  ) {}

  private get client(): RedisClient {
    return this.queue.client;
  }

  /**
   * The queue names found by SCAN over `{prefix}queues:*`: bounded steps, so a large keyspace
   * never holds Redis. A name is its key less the prefix, `queues:` and a known suffix.
   */
  async queueNames(): Promise<string[]> {
    const names = new Set<string>();
    // A cluster's keys are spread over its masters: each is scanned.
    const cluster = this.client as unknown as { nodes?: (role: 'master') => Scanner[] };
    const scanners = typeof cluster.nodes === 'function' ? cluster.nodes('master') : [this.client as unknown as Scanner];
    for (const scanner of scanners) {
      let cursor = '0';
      do {
        const [next, keys] = await scanner.scan(cursor, 'MATCH', `${escapeGlob(this.prefix)}queues:*`, 'COUNT', 1000);
        for (const key of keys) names.add(queueNameOf(key.slice(this.prefix.length)));
        cursor = next;
      } while (cursor !== '0');
    }
    return [...names].filter(Boolean).sort();
  }

  async counts(queue: string): Promise<QueueCounts> {
    const key = this.queue.key(queue);
    const [ready, delayed, reserved] = await Promise.all([
      this.client.llen(key),
      this.client.zcard(`${key}:delayed`),
      this.client.zcard(`${key}:reserved`),
    ]);
    return { ready, delayed, reserved };
  }

  async page(
    queue: string,
    state: JobState,
    offset: number,
    limit: number,
    options: PageOptions = {},
  ): Promise<{ total: number; jobs: StoredJob[] }> {
    const key = this.queue.key(queue);
    const last = offset + limit - 1;
    if (options.cut) {
      const [total, jobs] = await Promise.all([
        state === 'ready' ? this.client.llen(key) : this.client.zcard(`${key}:${state}`),
        this.queue.pageEnds(queue, state, offset, last, { whole: DECODED_UP_TO, head: HEAD_READ, tail: TAIL_READ }),
      ]);
      return {
        total,
        jobs: jobs.map((job) => ({
          payload: job.payload,
          until: job.score,
          ...(job.tail !== null ? { cut: { bytes: job.bytes, tail: job.tail } } : {}),
        })),
      };
    }
    if (state === 'ready') {
      const [total, payloads] = await Promise.all([this.client.llen(key), this.client.lrange(key, offset, last)]);
      return { total, jobs: payloads.map((payload) => ({ payload, until: null })) };
    }
    const zset = `${key}:${state}`;
    const [total, flat] = await Promise.all([this.client.zcard(zset), this.client.zrange(zset, offset, last, 'WITHSCORES')]);
    const jobs: StoredJob[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) jobs.push({ payload: flat[i]!, until: Number(flat[i + 1]) });
    return { total, jobs };
  }

  /**
   * The head of the list is the job waiting longest (pushes go to the tail, pops take the
   * head). Its push time: Horizon's pushedAt, else 12.11+'s createdAt plus its dispatch delay
   * (a delayed job is ready from then), read from the payload's two ends only.
   */
  async readySince(queue: string): Promise<number | null | undefined> {
    // The head job's two ends only, whatever it weighs (page-ends.lua with nothing sent whole).
    const [ends] = await this.queue.pageEnds(queue, 'ready', 0, 0, { whole: 0, head: 512, tail: 512 });
    if (!ends) return undefined;
    const both = `${ends.payload}\n${ends.tail}`;
    const pushedAt = /"pushedAt":"(\d+(?:\.\d+)?)"/.exec(both);
    if (pushedAt) return Number(pushedAt[1]);
    const createdAt = /"createdAt":(\d+)[,}]/.exec(ends.tail ?? '');
    if (!createdAt) return null;
    const delay = /"delay":(\d+)[,}]/.exec(ends.tail ?? '');
    return Number(createdAt[1]) + (delay ? Number(delay[1]) : 0);
  }

  /** RedisQueue's own walk (`lqb find`): a short Lua step at a time, never holding Redis for a long queue. */
  async find(queue: string, uuid: string): Promise<FoundJob | undefined> {
    const found = await this.queue.find(uuid, queue);
    return found && { state: found.state, payload: found.payload, until: found.until ?? null };
  }

  cancel(queue: string, uuid: string): Promise<CancelOutcome> {
    return cancelDelayed(this.queue, uuid, queue);
  }

  pushRaw(payload: string, queue: string): Promise<unknown> {
    return this.queue.pushRaw(payload, queue);
  }
}

/** `queues:NAME[:suffix]` to NAME; a cluster's `queues:{NAME}` to NAME as well. */
export function queueNameOf(key: string): string {
  let name = key.startsWith('queues:') ? key.slice('queues:'.length) : key;
  for (const suffix of SUFFIXES) if (name.endsWith(suffix)) name = name.slice(0, -suffix.length);
  return /^\{[^{}]+\}$/.test(name) ? name.slice(1, -1) : name;
}

/** A prefix taken literally by SCAN's MATCH. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
