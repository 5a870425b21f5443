/**
 * The record in Redis (the layout is NodeRecord.ts's): a flush's writes in one MULTI, and what a
 * reader asks of them. The client is the queue's, which carries the app's prefix.
 */
import { isCluster, type RedisClient } from '../redis/scripts.js';
import {
  RECORD_KEYS,
  byQueueAndClass,
  isLive,
  minuteField,
  readCompletedJob,
  readHeartbeat,
  readMinuteField,
  type CompletedJob,
  type MinuteRow,
  type WorkerHeartbeat,
} from './NodeRecord.js';
import type { RecordBatch, RecordStore } from './store.js';

/** Minute hashes read per pipeline by a reader. */
const MINUTES_PER_READ = 1_000;

type Command = [name: string, ...args: (string | number)[]];

export class RedisRecord implements RecordStore {
  constructor(readonly client: RedisClient) {}

  /**
   * One flush: the minutes' counts added and their expiry set, the completed jobs pushed and the
   * list trimmed, the heartbeat set (or, at the run's end, deleted). One MULTI; on a Cluster, one
   * per key, sent together.
   */
  async write(batch: RecordBatch): Promise<void> {
    const { keepSeconds, recent } = batch.options;
    const groups: Command[][] = [];
    for (const [minute, counts] of groupByMinute(batch)) {
      const key = RECORD_KEYS.minute(minute);
      const commands: Command[] = [];
      for (const count of counts) {
        if (count.jobs > 0) commands.push(['hincrby', key, minuteField(count.queue, count.className, count.outcome, 'jobs'), count.jobs]);
        const ms = Math.round(count.ms);
        if (ms > 0) commands.push(['hincrby', key, minuteField(count.queue, count.className, count.outcome, 'ms'), ms]);
      }
      commands.push(['expireat', key, minute + 60 + keepSeconds]);
      groups.push(commands);
    }
    if (batch.completed.length > 0 && recent > 0) {
      const kept = batch.completed.slice(-recent).map((job) => JSON.stringify(job));
      groups.push([
        ['lpush', RECORD_KEYS.completed, ...kept],
        ['ltrim', RECORD_KEYS.completed, 0, recent - 1],
        ['expire', RECORD_KEYS.completed, keepSeconds],
      ]);
    }
    const beat = batch.heartbeat;
    groups.push(
      batch.ended
        ? [['hdel', RECORD_KEYS.workers, beat.id]]
        : [
            ['hset', RECORD_KEYS.workers, beat.id, JSON.stringify(beat)],
            ['expire', RECORD_KEYS.workers, keepSeconds],
          ],
    );
    if (isCluster(this.client)) await Promise.all(groups.map((commands) => this.exec(commands)));
    else await this.exec(groups.flat());
  }

  /** Deletes the heartbeats of workers gone without their end (older than three of their intervals). */
  async prune(now: number): Promise<void> {
    const all = await this.client.hgetall(RECORD_KEYS.workers);
    const gone = Object.entries(all)
      .filter(([, text]) => {
        const beat = readHeartbeat(text);
        return beat === undefined || !isLive(beat, now);
      })
      .map(([id]) => id);
    if (gone.length > 0) await this.client.hdel(RECORD_KEYS.workers, ...gone);
  }

  /** The rows of the minutes from `since` to `until` (UNIX seconds), in order of minute, queue and class. */
  async minutes(since: number, until: number): Promise<MinuteRow[]> {
    const rows: MinuteRow[] = [];
    const first = Math.floor(since / 60) * 60;
    const last = Math.floor(until / 60) * 60;
    for (let start = first; start <= last; start += MINUTES_PER_READ * 60) {
      const minutes: number[] = [];
      for (let minute = start; minute <= last && minutes.length < MINUTES_PER_READ; minute += 60) minutes.push(minute);
      // Sent together (ioredis writes each at once), and each to its own node on a Cluster.
      const hashes = await Promise.all(minutes.map((minute) => this.client.hgetall(RECORD_KEYS.minute(minute))));
      minutes.forEach((minute, index) => rows.push(...rowsOf(minute, hashes[index]!)));
    }
    return rows;
  }

  /** The latest completed jobs, newest first, from `offset`; and how many are kept. */
  async recent(offset: number, limit: number): Promise<{ total: number; jobs: CompletedJob[] }> {
    if (limit <= 0) return { total: await this.client.llen(RECORD_KEYS.completed), jobs: [] };
    const [total, texts] = await Promise.all([
      this.client.llen(RECORD_KEYS.completed),
      this.client.lrange(RECORD_KEYS.completed, offset, offset + limit - 1),
    ]);
    return { total, jobs: texts.map(readCompletedJob).filter((job): job is CompletedJob => job !== undefined) };
  }

  /** The heartbeats of the workers running at `now` (UNIX seconds), oldest run first. */
  async workers(now: number): Promise<WorkerHeartbeat[]> {
    const all = await this.client.hgetall(RECORD_KEYS.workers);
    return Object.values(all)
      .map(readHeartbeat)
      .filter((beat): beat is WorkerHeartbeat => beat !== undefined && isLive(beat, now))
      .sort((a, b) => a.since - b.since || a.id.localeCompare(b.id));
  }

  private async exec(commands: Command[]): Promise<void> {
    const answers = await this.client.multi(commands).exec();
    if (answers === null) throw new Error('the MULTI of the record was discarded');
    const failed = answers.find(([error]) => error);
    if (failed) throw failed[0]!;
  }
}

/** A batch's counts grouped by minute (a minute's key gets its expiry once). */
function groupByMinute(batch: RecordBatch): Map<number, RecordBatch['minutes']> {
  const byMinute = new Map<number, RecordBatch['minutes']>();
  for (const count of batch.minutes) {
    let counts = byMinute.get(count.minute);
    if (!counts) byMinute.set(count.minute, (counts = []));
    counts.push(count);
  }
  return byMinute;
}

/** A minute hash as rows, one per queue and class, in order of queue and class. */
function rowsOf(minute: number, hash: Record<string, string>): MinuteRow[] {
  const rows = new Map<string, MinuteRow>();
  for (const [field, value] of Object.entries(hash)) {
    const read = readMinuteField(field);
    if (!read) continue;
    const key = `${read.queue}\0${read.className}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { minute, queue: read.queue, className: read.className, completed: 0, failed: 0, runtimeMs: 0 }));
    const amount = Number(value) || 0;
    if (read.measure === 'ms') row.runtimeMs += amount;
    else row[read.outcome] += amount;
  }
  return [...rows.values()].sort(byQueueAndClass);
}
