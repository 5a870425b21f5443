/**
 * The worker's side of the record (NodeRecord.ts): a recorder of its runs that hears what became
 * of each job, adds it up in memory, and writes what it added up in one round trip every
 * `flushEvery` seconds and at the run's end, with the worker's heartbeat. A job's own path pays
 * for a clock read and a map update; no write waits on it, and no write is made per job.
 *
 * Counted: a job the queue removed after it ran (`processed`, or `deleted` by its handler) as
 * completed; one whose failure was recorded (failed_jobs, onFailed), whatever event ends it (a
 * timeout's too), as failed. A job released, given back to PHP, or left reserved has not
 * finished and is not counted. Its runtime runs from when the worker took it up to its outcome;
 * its class is its command's (`data.commandName`), else the name its events give it.
 *
 * A write that fails is said once as the worker's warning (until one succeeds again), and what
 * it carried is added back for the next one: the record may lag through an outage, a job never
 * waits for it.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { JobRecord, RecorderContext, RecorderFactory, WorkerEvent, WorkerRecorder } from '../worker/types.js';
import { resolveRecordOptions, type CompletedJob, type RecordOptions, type RecordOutcome, type WorkerHeartbeat } from './NodeRecord.js';
import { recordStore, type MinuteCount, type RecordBatch, type RecordSource, type RecordStore } from './store.js';

/** How long the run's end waits, at most, for its last write: a store that does not answer does not hold the worker. */
const CLOSE_WAIT_MS = 5_000;

/** What the recorder is told of the worker besides its options; tests set the clock and the host. */
export interface RecorderDetails {
  /** The job classes the worker's handlers are for (takenClasses), said in its heartbeat. */
  classes?: readonly string[];
  /** Milliseconds since the epoch (Date.now). */
  now?: () => number;
  host?: string;
}

/**
 * The record as a recorder of a worker's runs, written beside its queue: to the queue's Redis
 * client, or its database. Throws a TypeError naming the option that is wrong.
 */
export function nodeRecorder(source: RecordSource, options: RecordOptions = {}, details: RecorderDetails = {}): RecorderFactory {
  const resolved = resolveRecordOptions(options);
  const store = recordStore(source);
  return async (context) => {
    const recorder = new NodeRecorder(store, resolved, context, details);
    recorder.start();
    return recorder;
  };
}

export class NodeRecorder implements WorkerRecorder {
  /** What has been added up since the last write, per minute, queue, class and outcome. */
  private tallies = new Map<string, MinuteCount>();
  private completed: CompletedJob[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The write on its way, if one is: the next waits for the one after it. */
  private writing: Promise<void> | undefined;
  /** The first start-up step (removing gone workers' heartbeats): the end waits for it too. */
  private pruning: Promise<void> | undefined;
  /** When the write on its way was handed to the store (performance.now()). */
  private writingSince = 0;
  /** A write failed and was said: the next failures are not, until one succeeds again. */
  private failing = false;
  /** The run is over: nothing more is said. */
  private closed = false;
  private readonly heartbeat: Omit<WorkerHeartbeat, 'inHand' | 'lastPoll'>;
  private readonly now: () => number;

  constructor(
    private readonly store: RecordStore,
    private readonly options: Required<RecordOptions>,
    private readonly context: RecorderContext,
    details: RecorderDetails = {},
  ) {
    this.now = details.now ?? Date.now;
    const host = details.host ?? hostname();
    const since = Math.floor(this.now() / 1000);
    this.heartbeat = {
      id: `${host}:${process.pid}:${randomBytes(4).toString('hex')}`,
      host,
      pid: process.pid,
      connection: context.connectionName,
      queues: [...(context.options?.queues ?? [])],
      concurrency: context.options?.concurrency ?? 1,
      since,
      every: options.flushEvery,
      ...(details.classes ? { classes: [...details.classes] } : {}),
    };
  }

  /** The worker's id in the record (its heartbeat's). */
  get id(): string {
    return this.heartbeat.id;
  }

  /** The first heartbeat now, gone workers' removed beside it; then a write every `flushEvery` seconds. */
  start(): void {
    this.pruning = this.store.prune(Math.floor(this.now() / 1000)).then(
      () => undefined,
      (error: unknown) => this.failed(error),
    );
    this.flush();
    this.timer = setInterval(() => this.flush(), this.options.flushEvery * 1000);
    // The record never keeps a process alive that has nothing else to do.
    this.timer.unref();
  }

  outcome(record: JobRecord, event: WorkerEvent): void {
    const outcome = outcomeOf(record, event);
    if (!outcome) return;
    const nowMs = this.now();
    const ms = performance.now() - record.startedAt;
    const queue = record.job.queue;
    const className = record.payload?.name ?? record.name;
    this.add({ minute: Math.floor(nowMs / 60_000) * 60, queue, className, outcome, jobs: 1, ms });
    if (outcome !== 'completed' || this.options.recent === 0) return;
    this.completed.push({
      uuid: record.job.uuid ?? null,
      name: record.name,
      className,
      queue,
      connection: this.context.connectionName,
      runtimeMs: Math.round(ms),
      finishedAt: nowMs / 1000,
    });
    // Only the last `recent` are ever kept: a busy interval's older ones go now, a few at a time.
    if (this.completed.length >= this.options.recent * 2) this.completed.splice(0, this.completed.length - this.options.recent);
  }

  /**
   * The run is over: its last counts written and its heartbeat removed, waited for a few seconds
   * at most; not at all when the store has not answered the write before (an outage: the worker
   * stops now, and its heartbeat is taken for gone once late).
   */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.writing && performance.now() - this.writingSince > Math.max(1_000, this.options.flushEvery * 1_000)) {
      this.closed = true;
      this.context.warn(
        `the record of this worker's last jobs was not written: its store has not answered for ${Math.round((performance.now() - this.writingSince) / 1000)}s`,
      );
      return;
    }
    const last = (async () => {
      await this.pruning;
      while (this.writing) await this.writing;
      await this.write(true);
    })();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), CLOSE_WAIT_MS);
    });
    try {
      if ((await Promise.race([last, late])) === 'late')
        this.context.warn(
          `the record of this worker's last jobs was not written within ${CLOSE_WAIT_MS / 1000}s of its end; its heartbeat is taken for gone once late`,
        );
    } finally {
      clearTimeout(timer);
      // What fails from now on (a write cut off as the worker's clients close) is not the run's to say.
      this.closed = true;
    }
  }

  /** A write now, unless one is on its way (what is added up meanwhile goes with the next). */
  flush(): void {
    if (this.writing) return;
    void this.write(false);
  }

  /** Writes what was added up since the last write, and the heartbeat; a failure adds it back for the next. */
  private write(ended: boolean): Promise<void> {
    const batch = this.take(ended);
    const written = this.store.write(batch).then(
      () => {
        this.failing = false;
      },
      (error: unknown) => {
        this.putBack(batch);
        this.failed(error);
      },
    );
    const tracked: Promise<void> = written.finally(() => {
      if (this.writing === tracked) this.writing = undefined;
    });
    this.writing = tracked;
    this.writingSince = performance.now();
    return tracked;
  }

  /** What the next write carries: the tallies and jobs taken, the heartbeat as it is now. */
  private take(ended: boolean): RecordBatch {
    const minutes: MinuteCount[] = [...this.tallies.values()];
    this.tallies = new Map();
    const completed = this.completed.length > this.options.recent ? this.completed.slice(-this.options.recent) : this.completed;
    this.completed = [];
    const nowMs = this.now();
    const inHand = Object.values(this.context.jobsInHand()).reduce((sum, count) => sum + count, 0);
    return {
      minutes,
      completed,
      heartbeat: { ...this.heartbeat, inHand, lastPoll: Math.floor(nowMs / 1000) },
      ended,
      now: Math.floor(nowMs / 1000),
      options: this.options,
    };
  }

  /**
   * A batch that was not written, added back for the next write: its counts added to those made
   * since, its jobs before theirs (the last `recent` kept). Minutes past `keepSeconds` are dropped,
   * so an outage cannot grow what is kept in memory beyond what the store would keep.
   */
  private putBack(batch: RecordBatch): void {
    const oldest = batch.now - this.options.keepSeconds;
    for (const count of batch.minutes) if (count.minute >= oldest) this.add(count);
    this.completed = [...batch.completed, ...this.completed].slice(-this.options.recent);
  }

  /** Adds a count to the tally of its minute, queue, class and outcome. */
  private add(count: MinuteCount): void {
    const key = `${count.minute}\0${count.queue}\0${count.className}\0${count.outcome}`;
    const tally = this.tallies.get(key);
    if (tally) {
      tally.jobs += count.jobs;
      tally.ms += count.ms;
    } else this.tallies.set(key, { ...count });
  }

  /** A write that failed: said once, until one succeeds again. */
  private failed(error: unknown): void {
    if (this.failing || this.closed) return;
    this.failing = true;
    this.context.warn(`the record of this worker's jobs was not written: ${(error as Error)?.message ?? String(error)}`);
  }
}

/** Whether the record counts the job as completed or failed, or not at all (it has not finished). */
function outcomeOf(record: JobRecord, event: WorkerEvent): RecordOutcome | undefined {
  if (record.failedRecorded) return 'failed';
  if ((event.event === 'processed' || event.event === 'deleted') && record.deleted) return 'completed';
  return undefined;
}
