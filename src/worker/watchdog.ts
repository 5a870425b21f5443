/**
 * The watchdog: the job timeout that holds whatever the handler does.
 *
 * The worker's own timeout is a timer on the event loop, so a handler that blocks the loop
 * (CPU-bound code, a `for (;;)`) outruns it: no timer fires, no reservation is renewed, and
 * other workers take the jobs in hand. Laravel's worker has no such hole: its timeout is
 * SIGALRM, which interrupts whatever PHP is doing, runs the timeout handler and then kills the
 * process (Worker::kill: SIGKILL to itself when posix is loaded, else exit 1).
 *
 * Here a thread of its own watches the jobs' deadlines and a heartbeat the event loop writes
 * into shared memory. When a job is past its deadline and the loop has not turned since, the
 * loop is blocked by it; the thread then writes one line to standard error and either ends the
 * process as Laravel's alarm does (`exitOnBlock`, what `lqb work` turns on: SIGKILL, so the
 * job's reservation comes back once, after retry_after) or reports the job to the worker, which
 * emits `blocked` once its loop turns again (an embedded worker must not end its host unasked).
 */
import { Worker as Thread } from 'node:worker_threads';
import { threadSource } from './sandbox/thread.js';

/** The job a watched slot holds, as the report names it. */
export interface WatchedJob {
  job: string;
  id: string;
  uuid: string | undefined;
  queue: string;
  attempts: number;
  /** Its timeout, in seconds. */
  timeout: number;
}

/** A job that blocked the event loop past its timeout. */
export interface BlockedJob extends WatchedJob {
  /** How long the loop had not turned when the thread saw it, in ms. */
  blockedMs: number;
}

export interface WatchdogOptions {
  /** End the process (SIGKILL, as Laravel's alarm) rather than report. */
  exitOnBlock: boolean;
  /** Told of each blocked job, on the main thread, once its loop turns again. */
  onBlocked: (job: BlockedJob) => void;
}

/** How often the loop writes its heartbeat, and the thread looks, in ms. */
const BEAT_MS = 100;
/** How long past a deadline the loop has to show it is not blocked, in ms. */
const GRACE_MS = 200;

/**
 * The thread's code, run with `eval` so that it needs no file of its own beside the compiled
 * one (the tests run the TypeScript sources). It reads only Node's own modules.
 */
function watchdogThread(): void {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
  const { writeSync } = require('node:fs') as typeof import('node:fs');
  const { heartbeat, exitOnBlock, beatMs, graceMs } = workerData as { heartbeat: SharedArrayBuffer; exitOnBlock: boolean; beatMs: number; graceMs: number };
  const beat = new BigInt64Array(heartbeat);
  const watched = new Map<number, { deadline: number; info: WatchedJob; reported: boolean }>();
  parentPort!.on('message', (message: { watch?: number; unwatch?: number; deadline?: number; info?: WatchedJob }) => {
    if (message.watch !== undefined) watched.set(message.watch, { deadline: message.deadline!, info: message.info!, reported: false });
    else if (message.unwatch !== undefined) watched.delete(message.unwatch);
  });
  setInterval(() => {
    const now = Date.now();
    // The loop's last turn (Date.now()), written by the main thread.
    const lastBeat = Number(Atomics.load(beat, 0));
    for (const [slot, entry] of watched) {
      // Past its deadline, and the loop has not turned since: the worker's own timer cannot fire.
      if (entry.reported || now < entry.deadline + graceMs || lastBeat >= entry.deadline) continue;
      entry.reported = true;
      const blockedMs = now - lastBeat;
      const { job, id, timeout } = entry.info;
      const what = `job ${job} [${id}] has blocked the event loop for ${(blockedMs / 1000).toFixed(1)} s, past its timeout of ${timeout} s`;
      if (exitOnBlock) {
        writeSync(2, `lqb watchdog: ${what}: ending the process as Laravel's timeout does (SIGKILL); the job comes back after retry_after\n`);
        process.kill(process.pid, 'SIGKILL');
      }
      writeSync(2, `lqb watchdog: ${what} (exitOnBlock is off: the process goes on)\n`);
      parentPort!.postMessage({ blocked: slot, job: { ...entry.info, blockedMs } });
    }
  }, beatMs);
}

/** The watchdog thread and the heartbeat that tells it the loop still turns. */
export class Watchdog {
  private thread: Thread | undefined;
  private readonly heartbeat = new SharedArrayBuffer(8);
  private readonly beat = new BigInt64Array(this.heartbeat);
  private ticker: NodeJS.Timeout | undefined;
  private nextSlot = 1;

  constructor(private readonly options: WatchdogOptions) {}

  /**
   * Watches a job until unwatch(): `deadline` in performance.now()'s milliseconds. The thread
   * starts with the first job watched, so a worker that never runs one costs no thread.
   */
  watch(deadline: number, info: WatchedJob): number {
    const thread = this.start();
    const slot = this.nextSlot++;
    thread.postMessage({ watch: slot, deadline: Date.now() + (deadline - performance.now()), info });
    return slot;
  }

  unwatch(slot: number): void {
    this.thread?.postMessage({ unwatch: slot });
  }

  /** Ends the thread and the heartbeat (the end of a run). */
  async close(): Promise<void> {
    clearInterval(this.ticker);
    this.ticker = undefined;
    const thread = this.thread;
    this.thread = undefined;
    await thread?.terminate();
  }

  private start(): Thread {
    if (this.thread) return this.thread;
    this.tick();
    const thread = new Thread(threadSource(watchdogThread), {
      eval: true,
      workerData: { heartbeat: this.heartbeat, exitOnBlock: this.options.exitOnBlock, beatMs: BEAT_MS, graceMs: GRACE_MS },
      // The thread needs little: a small heap keeps its cost to a few MB.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
      stdout: false,
      stderr: false,
    });
    thread.on('message', (message: { blocked?: number; job?: BlockedJob }) => {
      if (message.job) this.options.onBlocked(message.job);
    });
    // A thread that fails is one watchdog less, never the worker's end.
    thread.on('error', () => undefined);
    // Neither holds the process open: an embedding service exits when it is done.
    thread.unref();
    this.ticker = setInterval(() => this.tick(), BEAT_MS);
    this.ticker.unref();
    this.thread = thread;
    return thread;
  }

  private tick(): void {
    Atomics.store(this.beat, 0, BigInt(Date.now()));
  }
}
