/**
 * The worker: Laravel's `queue:work` loop and its lifecycle, running Node handlers.
 *
 * Each loop tries the queues in order and hands what it reserves to the job's run (runJob.ts),
 * which judges attempts, tries, retryUntil, maxExceptions, backoff and timeout as Laravel 8's
 * Worker does, so a job behaves the same whichever side runs it. This file keeps what is the
 * loop's alone: when to reserve and how many, the one map of jobs in hand and their renewals,
 * stop (with its deadline), pause, the stop conditions, and the watchdog's thread. It knows the
 * queue through its contract (src/queue/contract.ts) only; what it says goes through events.ts.
 */
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { throughOutage } from '../database/reach.js';
import type { Queue, ReservedJob, TakeOnly, WatchedClient } from '../queue/contract.js';
import { percentShares, type TakeShares } from '../queue/take.js';
import { PauseWatch, QueueCache, type WorkerCache } from './cache.js';
import { MiddlewareNotices } from './middleware.js';
import { LockKeyNotice, blockedEvent, rateLimiterWithoutRedis, shortRetryAfterWarning, unanswerableAtStart } from './startChecks.js';
import { describeError } from './errors.js';
import { takenClasses, type HandlerMap } from './handlers.js';
import { defaultWorkerOptions, workerOptionsProblem, type WorkerOptions } from './WorkerOptions.js';
import { describeLiveMemory, liveMemoryReaches, unwatchLiveHeap, watchLiveHeap } from './memory.js';
import { ConnectionWatch, type WorkerHealth } from './health.js';
import { handlerKeysProblem } from './handlerKeys.js';
import { startLine } from './startLine.js';
import { CallQueuedHandler } from './CallQueuedHandler.js';
import { Watchdog, type BlockedJob } from './watchdog.js';
import { WorkerEvents } from './events.js';
import { Slots } from '../internal/slots.js';
import { JobInHand } from './JobInHand.js';
import { JobRunner, ownHandler } from './runJob.js';
import { FinishedCopies } from './finishedCopies.js';
import {
  WorkerUsageError,
  type RecorderFactory,
  type StopOptions,
  type StopReason,
  type WorkerCounts,
  type WorkerDependencies,
  type WorkerEventMap,
  type WorkerStats,
} from './types.js';

export {
  WorkerUsageError,
  type ErrorSource,
  type FailedJobInfo,
  type JobRecord,
  type RecorderContext,
  type RecorderFactory,
  type StopOptions,
  type StopReason,
  type WorkerCounts,
  type WorkerDependencies,
  type WorkerEvent,
  type WorkerEventMap,
  type WorkerLogger,
  type WorkerRecorder,
  type WorkerStats,
} from './types.js';

/** How long a stopping worker still waits for Redis to answer what it was asked. */
const STOP_GRACE_MS = 1000;

// The listeners' types, beside EventEmitter's untyped ones (merged with the class, so its type parameter too).
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- merged with the class, whose parameter it must name
export interface Worker<Q extends Queue = Queue> {
  on<Name extends keyof WorkerEventMap>(name: Name, listener: (...args: WorkerEventMap[Name]) => void): this;
  once<Name extends keyof WorkerEventMap>(name: Name, listener: (...args: WorkerEventMap[Name]) => void): this;
  off<Name extends keyof WorkerEventMap>(name: Name, listener: (...args: WorkerEventMap[Name]) => void): this;
}

/**
 * Events: `processing`, `processed`, `released`, `deleted`, `failed`, `given-back`, `timed-out`,
 * `blocked`, `stopping`, `warning`, each with the WorkerEvent and the Error itself when there is one;
 * `error` as Node's convention has it, `(error, event)`, emitted only while someone listens
 * (an unheard `error` would otherwise end the process), else to the logger.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- the interface above only types EventEmitter's listeners
export class Worker<Q extends Queue = Queue> extends EventEmitter {
  /**
   * Recorders every worker opens for each run, before its own `recorders`: the package's entry
   * points put OpenTelemetry's here (src/worker/index.ts), so that the worker never imports it.
   */
  static readonly defaultRecorders: RecorderFactory[] = [];

  readonly options: WorkerOptions;
  private readonly now: () => number;
  private shouldQuit = false;
  /** What stop() asked the run to report. */
  private stopAs: 'stopped' | 'signal' = 'stopped';
  /** The run in progress, if one is: a second one at once is refused. */
  private running: Promise<StopReason> | undefined;
  /** Ends the wait for the jobs in hand when stop()'s deadline passes. */
  private deadline: { passed: boolean; promise: Promise<void>; timer: NodeJS.Timeout } | undefined;
  /**
   * The jobs in hand, each from its reserve to its end: the one record of them, from which the
   * slots, the renewals, the in-flight counts and a stop deadline's leftovers are all read.
   * Slots rather than a Map: an entry comes and goes per job (see slots.ts).
   */
  private readonly inHand = new Slots<JobInHand>();
  /** Everything the worker says: events, logs, counters, recorders. */
  private readonly events: WorkerEvents;
  /** One job's run, from reserve to end. */
  private readonly runner: JobRunner;
  private paused = false;
  private jobsProcessed = 0;
  /** When the restart signal was last read from the cache. */
  private restartCheckedAt = 0;
  /**
   * One promise for "a job in hand finished", shared by whoever waits, and renewed once it
   * settles. Racing every job's own promise instead would hang a reaction on each of them per
   * wait, which a busy worker pays for in garbage.
   */
  private jobFinished: { promise: Promise<void>; resolve: () => void } | undefined;
  /** A reserve sent before the jobs of the last one ran, and how many jobs it asked for. */
  private ahead: { count: number; jobs: Promise<ReservedJob[]> } | undefined;
  /** Wakes the loop early (a signal, a finished job) instead of sleeping out `--sleep`. */
  private wake: (() => void) | undefined;
  /**
   * The waits on the queue in progress, each ended by stop(). One entry per wait, removed when it
   * settles: a single promise that every wait hangs a reaction on would keep one per loop, for
   * the life of the worker.
   */
  private readonly stopWaiters = new Set<() => void>();
  /** queue:pause's switches (12.40+), read at most once a second. */
  private pauses: PauseWatch | undefined;
  /** With `share`: classes whose lock Node could not release, given back for PHP (see methods.ts). */
  private refused = new Map<string, string>();
  /**
   * With `share`, what each reserve takes: the classes Node has handlers for, chosen by the queue
   * in its reserve step, so a PHP job is never in this worker's hands. Without it, everything.
   */
  private readonly take: TakeOnly | undefined;
  /** Whether the queue's connections answer, for health() and the outage lines. */
  private readonly connectionWatch: ConnectionWatch;
  /** The thread that holds the timeout when a handler blocks the event loop, while running. */
  private watchdog: Watchdog | undefined;
  /** Reserves, less copies of jobs finished here whose delete came late (see finishedCopies.ts). */
  private readonly finishedCopies = new FinishedCopies(
    () => this.inHand.values(),
    (event, cause) => this.events.say(event, cause, 'queue'),
  );

  constructor(
    /** The queue it reserves from, as given (a RedisQueue, or any driver of the queue contract). */
    readonly queue: Q,
    readonly handlers: HandlerMap,
    options: Partial<WorkerOptions> = {},
    private readonly deps: WorkerDependencies = {},
  ) {
    super();
    const problem = workerOptionsProblem(options);
    if (problem) throw new WorkerUsageError(problem);
    // An option given as undefined keeps its default, as an option not given does.
    this.options = { ...defaultWorkerOptions, ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) };
    if (this.options.queues.length === 0)
      throw new WorkerUsageError('queues: [] names no queue to take jobs from: give at least one queue name');
    const keyProblem = handlerKeysProblem(Object.keys(handlers));
    if (keyProblem) throw new WorkerUsageError(keyProblem);
    if (deps.failer === undefined && deps.onFailed === undefined) {
      throw new WorkerUsageError(
        'a worker needs to know where failed jobs go: give a failer (a FailedJobProvider, e.g. DatabaseUuidFailedJobProvider), an onFailed callback, or failer: false to keep them only in the events',
      );
    }
    this.now = deps.now ?? (() => Math.floor(Date.now() / 1000));
    this.take = this.options.share ? takeOnly(takenClasses(handlers), percentShares(this.options.take)) : undefined;
    if (!this.options.share && Object.keys(this.options.take).length > 0)
      throw new WorkerUsageError('take shares a class with PHP, which needs share: true (--take without --no-share)');
    this.events = new WorkerEvents(this, deps);
    const bookkeeping = new CallQueuedHandler(
      queue,
      this.options,
      deps,
      (event) => this.events.say(event, undefined, 'bookkeeping'),
      (className) => ownHandler(this.handlers, className),
    );
    this.runner = new JobRunner({
      options: this.options,
      deps,
      events: this.events,
      handlerMap: handlers,
      bookkeeping,
      middlewareNotices: new MiddlewareNotices(),
      lockKeyNotice: new LockKeyNotice(deps),
      refused: () => this.refused,
      watchdog: () => this.watchdog,
      now: this.now,
      deleting: () => this.slotFreed(),
    });
    const clients = [...(queue.clients ?? [])];
    if (deps.cache instanceof QueueCache && !clients.includes(deps.cache.client)) clients.push(deps.cache.client);
    // The database cache store's server (DatabaseQueueCache), read every second for the restart signal.
    const cacheReach = (deps.cache as { reach?: WatchedClient } | undefined)?.reach;
    if (cacheReach && !clients.includes(cacheReach)) clients.push(cacheReach);
    this.connectionWatch = new ConnectionWatch(clients, {
      down: (error) => this.events.say({ event: 'error', error: error.message }, error, 'connection'),
      up: (downMs, what) =>
        this.events.say({ event: 'reconnected', reason: `${what} answers again, after ${(downMs / 1000).toFixed(1)} s` }),
    });
  }

  /** What the worker says at start: where it reads, what, and what becomes of a job with no Node handler. */
  startLine(): string {
    return startLine({
      queues: this.options.queues,
      handlers: Object.keys(this.handlers),
      share: this.options.share,
      take: this.take?.shares ?? {},
      ...(this.deps.connection ? { connection: this.deps.connection } : {}),
    });
  }

  /**
   * For a service's health check: whether Redis answers, when a reserve last got its answer, the
   * jobs in hand, and the error counts. A worker stuck on an outage shows `connected: false` and
   * a `lastPoll` that no longer moves.
   */
  health(): WorkerHealth {
    const watch = this.connectionWatch;
    return {
      connected: watch.connected,
      lastPoll: watch.lastPoll === undefined ? null : new Date(watch.lastPoll),
      jobsInHand: this.inHand.size,
      running: this.running !== undefined,
      errors: this.events.counts.errors,
      connectionErrors: watch.connectionErrors,
      downSince: watch.downSince === undefined ? null : new Date(watch.downSince),
    };
  }

  /** Counters since the worker was made: processed, failed, released, in flight, and per queue. */
  stats(): WorkerStats {
    const counts: WorkerCounts = { ...this.events.counts };
    return {
      ...counts,
      inFlight: this.inHand.size,
      running: this.running !== undefined,
      connected: this.connectionWatch.connected,
      connectionErrors: this.connectionWatch.connectionErrors,
      perQueue: this.events.perQueueCounts(),
    };
  }

  /**
   * Stop after the jobs in hand; resolves with what run() resolves (at once when not running).
   * Promptly, whatever Redis's state: a wait for a job (BLPOP) or for a connection that is gone
   * gives way at once. With `timeout` (ms), jobs still running past it are left reserved (their
   * reservations no longer renewed, their signals aborted): they come back after retry_after,
   * and the reason says how many. The CLI's SIGTERM passes `reason: 'signal'`.
   */
  stop(options: StopOptions = {}): Promise<StopReason> {
    const running = this.running;
    if (!running) return Promise.resolve({ status: 0, reason: options.reason ?? 'stopped' });
    if (!this.shouldQuit) this.stopAs = options.reason ?? 'stopped';
    this.shouldQuit = true;
    if (options.timeout !== undefined && !this.deadline) {
      let pass!: () => void;
      const promise = new Promise<void>((resolve) => (pass = resolve));
      const timer = setTimeout(
        () => {
          deadline.passed = true;
          pass();
        },
        Math.max(0, options.timeout),
      );
      const deadline = { passed: false, promise, timer };
      this.deadline = deadline;
    }
    for (const release of this.stopWaiters) release();
    this.queue.interruptWait();
    this.wake?.();
    // A loop waiting for a busy slot to free looks at the stop conditions now, so a deadline
    // is counted from here and not from whenever a job in hand ends.
    this.slotFreed();
    return running;
  }

  /** Stop taking jobs until resumed (SIGUSR2); jobs in hand go on. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.wake?.();
  }

  /**
   * Runs until a stop condition; resolves with the reason and exit status. One run at a time:
   * a second while one is going rejects. A finished worker may run again, counting --max-jobs
   * and --max-time afresh (its stats() go on counting).
   */
  run(): Promise<StopReason> {
    if (this.running)
      return Promise.reject(
        new WorkerUsageError('this worker is running already: one run() at a time (await stop() before running it again)'),
      );
    this.shouldQuit = false;
    this.stopAs = 'stopped';
    this.jobsProcessed = 0;
    this.restartCheckedAt = 0;
    const running = this.runOnce().finally(() => {
      this.running = undefined;
      clearTimeout(this.deadline?.timer);
      this.deadline = undefined;
    });
    this.running = running;
    return running;
  }

  private async runOnce(): Promise<StopReason> {
    this.deps.logger?.info(
      { event: 'starting', queues: this.options.queues, share: this.options.share, ...(this.deps.connection ?? {}) },
      this.startLine(),
    );
    this.connectionWatch.start();
    const signals = this.options.handleSignals ? this.handleSignals() : undefined;
    const refused = this.checkAtStart();
    if (refused) return refused;
    await this.events.open([...Worker.defaultRecorders, ...(this.deps.recorders ?? [])], {
      connectionName: this.options.connectionName,
      deps: this.deps,
      jobsInHand: () => this.inHandPerQueue(),
      options: this.options,
      warn: (reason) => this.events.say({ event: 'warning', reason }),
    });
    const renewing = this.renewReservations();
    if (this.options.memory > 0) watchLiveHeap();
    if (this.options.watchdog) {
      this.watchdog = new Watchdog(
        {
          exitOnBlock: this.options.exitOnBlock,
          onBlocked: (job) => this.reportBlocked(job),
          onError: (error) =>
            this.events.say({
              event: 'warning',
              reason: `the watchdog thread failed, so a handler that blocks the event loop outruns its timeout: ${describeError(error)}`,
            }),
          renewal: this.queue.threadRenewal?.(),
        },
        Math.max(1, this.options.concurrency),
      );
    }
    try {
      const stop = await this.loop();
      this.events.say({ event: 'stopping', reason: stop.reason, ...(stop.detail ? { detail: stop.detail } : {}) });
      return stop;
    } finally {
      signals?.();
      this.connectionWatch.stop();
      clearInterval(renewing);
      await this.watchdog?.close();
      this.watchdog = undefined;
      if (this.options.memory > 0) unwatchLiveHeap();
      await this.events.close();
    }
  }

  /**
   * `handleSignals`: SIGTERM and SIGINT stop the worker as lqb's do (the jobs in hand finish),
   * instead of killing the process mid-job. Returns what removes the listeners.
   */
  private handleSignals(): () => void {
    const stop = () => void this.stop({ reason: 'signal' });
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    return () => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
    };
  }

  /** The watchdog saw a handler block the event loop past its timeout: said now the loop turns again. */
  private reportBlocked(job: BlockedJob): void {
    this.events.say(blockedEvent(job));
  }

  /** Jobs in hand per queue, for the recorders' in-flight metric. */
  private inHandPerQueue(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { job } of this.inHand.values()) counts[job.queue] = (counts[job.queue] ?? 0) + 1;
    return counts;
  }

  /** What the worker says before its first job: a retry_after too short, classes it refuses (see startChecks.ts). */
  private checkAtStart(): StopReason | undefined {
    const short = shortRetryAfterWarning(this.queue.retryAfter, this.options.timeout);
    if (short) this.events.say(short);
    const limiter = rateLimiterWithoutRedis(this.handlers, !this.deps.cache || this.deps.cache instanceof QueueCache);
    if (limiter) this.events.say(limiter);
    const refusals = unanswerableAtStart(this.handlers, this.deps, this.options.share);
    this.refused = refusals.refused;
    for (const event of refusals.events) this.events.say(event);
    return refusals.stop;
  }

  /**
   * Renews the reservations of running jobs every third of retry_after (at least every 100
   * ms), so a job still running is never taken by another worker, or by this one.
   */
  private renewReservations(): NodeJS.Timeout | undefined {
    const retryAfter = this.queue.retryAfter;
    if (retryAfter === null || retryAfter <= 0) return undefined;
    const timer = setInterval(() => void this.renew(this.renewedJobs()), Math.max(100, (retryAfter * 1000) / 3));
    timer.unref();
    return timer;
  }

  /**
   * The jobs in hand whose reservations are still this worker's to keep: not one whose delete is
   * out. A renewal tells the queue which jobs this worker runs, and a copy of such a job handed
   * back by a reserve before its late delete would be taken for a running one: its reservation
   * restored (RedisQueue.reclaimOwn), after the delete went by, and run again when it ran out.
   */
  private renewedJobs(): ReservedJob[] {
    const jobs: ReservedJob[] = [];
    for (const inHand of this.inHand.values()) if (inHand.renewed && !inHand.deleting && !inHand.deleted) jobs.push(inHand.job);
    return jobs;
  }

  private async renew(jobs: Iterable<ReservedJob>): Promise<void> {
    try {
      await this.queue.renew(jobs);
    } catch (error) {
      // An outage is said once, by the connection watch, not once per renewal.
      if (!this.connectionWatch.connected && this.connectionWatch.downSince !== undefined) return;
      this.events.say({ event: 'error', error: `could not renew reservations: ${describeError(error)}` }, error, 'queue');
    }
  }

  /**
   * A wait on Redis that ends with `fallback` a moment after the worker is told to stop: a
   * Redis that answers (the usual case) still finishes what it was asked, one that is gone
   * does not hold the worker.
   */
  private untilStopped<T, F>(waiting: Promise<T>, fallback: F): Promise<T | F> {
    const grace = () => sleep(STOP_GRACE_MS, fallback, { ref: false });
    if (this.shouldQuit) return Promise.race([waiting, grace()]);
    let release!: () => void;
    const stopped = new Promise<F>((resolve) => (release = () => resolve(grace())));
    this.stopWaiters.add(release);
    return Promise.race([waiting, stopped]).finally(() => this.stopWaiters.delete(release));
  }

  /**
   * The restart signal as it stands at start. A cache that cannot be read at all (the database
   * store without its `cache` table) stops the worker here, in words naming the cache.
   */
  private async firstRestartRead(cache: WorkerCache): Promise<number | null> {
    try {
      // A server that does not answer yet is waited for (and said, by the connection watch): only
      // a cache that answers and cannot be read stops the worker.
      return await throughOutage(
        () => cache.lastRestart(),
        () => this.shouldQuit,
      );
    } catch (error) {
      const store =
        cache instanceof QueueCache
          ? 'the Redis cache store'
          : "the database cache store's table (Laravel's cache migration makes it: cache and cache_locks)";
      throw new Error(`the worker's cache cannot be read, in ${store}: ${describeError(error)}`, { cause: error });
    }
  }

  private async loop(): Promise<StopReason> {
    const startedAt = Date.now();
    const lastRestart = this.deps.cache ? await this.untilStopped(this.firstRestartRead(this.deps.cache), null) : null;
    const concurrency = Math.max(1, this.options.concurrency);
    // With room for more than one job, each reserve asks for at most half the slots, so the
    // next one can be on its way while this process reads and runs the last.
    const chunk = Math.ceil(concurrency / 2);
    for (;;) {
      const stop = await this.stopReason(startedAt, lastRestart);
      if (stop) {
        // Jobs reserved ahead are in hand: they run before the worker stops.
        this.start(await this.takeAhead());
        const left = await this.drainUntilDeadline();
        if (left === 0) return stop;
        return {
          ...stop,
          leftReserved: left,
          detail: `${left} job${left === 1 ? '' : 's'} still running when stop()'s deadline passed ${left === 1 ? 'is' : 'are'} left reserved: ${left === 1 ? 'it comes' : 'they come'} back after retry_after`,
        };
      }
      if (this.paused) {
        this.start(await this.takeAhead());
        await this.nap(this.options.sleep);
        continue;
      }
      // Take what was reserved ahead, or reserve as many as there are free slots, in one
      // round trip (one job for --once and --max-jobs' last ones).
      const wanted = this.ahead ? this.ahead.count : this.options.once ? 1 : this.freeSlots(concurrency);
      const fromAhead = this.ahead !== undefined;
      const jobs = this.ahead ? await this.takeAhead() : wanted > 0 ? await this.nextJobs(Math.min(wanted, chunk)) : [];
      // A reserve sent ahead answers for the moment it was sent: a job released since (a retry
      // due now) is not in its answer. Ask again before anything is decided on an empty queue.
      if (jobs.length === 0 && fromAhead) continue;
      if (jobs.length > 0) {
        const free = this.options.once ? 0 : Math.min(this.freeSlots(concurrency) - jobs.length, chunk);
        if (free > 0) this.ahead = { count: free, jobs: this.nextJobs(free) };
        this.start(jobs);
        if (this.options.once) {
          await this.drain();
          return { status: 0, reason: 'once' };
        }
        if (this.options.rest > 0) await this.nap(this.options.rest);
        continue;
      }
      if (wanted <= 0) {
        // Every slot is busy (or --max-jobs is spoken for): wait for one to finish. With none
        // in hand there is nothing to wait for: the stop conditions decide on the next turn.
        if (this.inHand.size > 0) await this.oneFinished();
        continue;
      }
      if (this.inHand.size > 0) {
        // Nothing to take, but work in hand: wait for some of it rather than poll.
        await this.napUnlessOneFinishes(this.options.sleep);
        continue;
      }
      if (this.options.stopWhenEmpty || this.options.once) return { status: 0, reason: this.options.once ? 'once' : 'empty' };
      await this.nap(this.options.sleep);
    }
  }

  /**
   * Slots neither running a handler nor spoken for by --max-jobs. A job whose handler has
   * returned and whose delete is on its way leaves its slot free: waiting for those answers
   * before reserving again would leave Node and Redis taking turns.
   */
  private freeSlots(concurrency: number): number {
    const free = concurrency - this.inHand.size + this.inHand.count(this.queue.driver === 'database' ? isDeleting : isSettling);
    return this.options.maxJobs > 0 ? Math.min(free, this.options.maxJobs - this.jobsProcessed - this.inHand.size) : free;
  }

  /** The jobs of the reserve sent ahead, if one was. */
  private async takeAhead(): Promise<ReservedJob[]> {
    const ahead = this.ahead;
    if (!ahead) return [];
    const jobs = await ahead.jobs;
    this.ahead = undefined;
    return jobs;
  }

  /** Runs reserved jobs, each in a slot of its own, their reservations renewed from now on. */
  private start(jobs: ReservedJob[]): void {
    if (jobs.length === 0) return;
    const taken = jobs.map((job) => new JobInHand(job));
    for (const inHand of taken) inHand.slot = this.inHand.add(inHand);
    // A reservation scored in whole seconds runs out up to a second early: with a retry_after
    // under two seconds that can be before the first renewal (a third of it later), so these
    // are renewed at once. Longer ones wait for the timer; most jobs are done by then.
    const retryAfter = this.queue.retryAfter;
    if (retryAfter !== null && retryAfter > 0 && retryAfter < 2) void this.renew(jobs);
    for (const inHand of taken) void this.runInSlot(inHand);
  }

  /**
   * One job's run in its slot, to its end: a job whose delete or release could not reach the
   * queue stays reserved and comes back after retry_after; that is said, and the worker lives on.
   * One async function rather than a .catch().finally() chain: one promise per job, not three.
   */
  private async runInSlot(inHand: JobInHand): Promise<void> {
    const job = inHand.job;
    try {
      await this.runner.run(inHand);
    } catch (error) {
      this.events.outcome(
        inHand,
        { event: 'error', job: job.id, queue: job.queue, error: `could not finish the job: ${describeError(error)}` },
        error,
        'queue',
      );
    } finally {
      this.events.finished(inHand);
      this.inHand.remove(inHand.slot, inHand);
      this.finishedCopies.finished(inHand);
      this.jobsProcessed++;
      this.slotFreed();
    }
  }

  /** Up to `count` jobs from the first queue that has any, in the order the queues were given. */
  private async nextJobs(count: number): Promise<ReservedJob[]> {
    // As Laravel 12.40+'s worker, a paused queue is skipped when reserving.
    if (this.deps.cache) this.pauses ??= new PauseWatch(this.deps.cache, this.options.connectionName, this.options.queues);
    // No await while the last read is fresh: the reserve is written before the jobs just taken
    // start their work, so Redis reserves the next while this process runs them.
    const paused = this.pauses ? (this.pauses.fresh() ?? (await this.untilStopped(this.pauses.paused(), new Set<string>()))) : undefined;
    for (const name of this.options.queues) {
      if (this.shouldQuit) return [];
      if (paused?.has(name)) continue;
      try {
        const popping = this.finishedCopies.reserve(this.queue, name, count, this.take);
        const jobs = await this.untilStopped(popping, undefined);
        if (jobs !== undefined) this.connectionWatch.polled();
        if (jobs === undefined) {
          // Told to stop while Redis had not answered (it may be gone): jobs it reserves after
          // all are given back as they were pushed, or come back after retry_after.
          popping.then((late) => Promise.all(late.map((job) => job.giveBack()))).catch(() => undefined);
          return [];
        }
        if (jobs.length > 0) return jobs;
      } catch (error) {
        // Redis went away or refused: say so, pause, and try again; never lose the loop. A
        // wait cut short by stop() is no error.
        if (this.shouldQuit) return [];
        // A server that does not answer was said once by the connection watch (health() says it
        // too): the loop backs off and tries again, with no line per try.
        const outage = !this.connectionWatch.connected && this.connectionWatch.downSince !== undefined;
        if (!outage) this.events.say({ event: 'error', queue: name, error: describeError(error) }, error, 'queue');
        const unreserved = this.deps.failReserveErrors ? reserveErrorJob(error) : undefined;
        if (unreserved) {
          await this.failUnreserved(unreserved, error as Error);
          return [];
        }
        await this.nap(1);
        return [];
      }
    }
    return [];
  }

  private async stopReason(startedAt: number, lastRestart: number | null): Promise<StopReason | undefined> {
    if (this.shouldQuit) return { status: 0, reason: this.stopAs };
    if (this.options.maxJobs > 0 && this.jobsProcessed >= this.options.maxJobs) return { status: 0, reason: 'max-jobs' };
    if (this.options.maxTime > 0 && Date.now() - startedAt >= this.options.maxTime * 1000) return { status: 0, reason: 'max-time' };
    if (await this.memoryExceeded())
      return {
        status: 12,
        reason: 'memory',
        detail: `${describeLiveMemory()}, at or past the memory limit of ${this.options.memory} MB`,
      };
    // Laravel asks its cache after every job; one round trip per loop would cost a busy worker a
    // good part of its throughput, so the signal is read at most once a second.
    if (this.deps.cache && Date.now() - this.restartCheckedAt >= 1000) {
      this.restartCheckedAt = Date.now();
      const restart = await this.untilStopped(
        this.deps.cache.lastRestart().catch(() => lastRestart),
        lastRestart,
      );
      if (this.shouldQuit) return { status: 0, reason: this.stopAs };
      if (restart !== lastRestart) return { status: 0, reason: 'restart' };
    }
    return undefined;
  }

  /**
   * Laravel's memoryExceeded compares memory_get_usage(): what PHP holds for the script's live
   * values, not the process's size. What is live after the last full collections is that here:
   * the JS heaps of the main thread and of every sandbox thread, and the Buffers they hold (see
   * memory.ts), confirmed by a full collection before it stops; the RSS also holds V8's code and whatever an embedding service keeps, and would
   * stop an idle worker at half its limit. 0 is no limit.
   */
  private async memoryExceeded(): Promise<boolean> {
    return this.options.memory > 0 && (await liveMemoryReaches(this.options.memory));
  }

  private async drain(): Promise<void> {
    while (this.inHand.size > 0) await this.oneFinished();
  }

  /**
   * Waits for the jobs in hand, up to stop()'s deadline if it set one; then leaves those still
   * running reserved (no longer renewed, their signals aborted, what their handlers do later
   * ignored) and says how many.
   */
  private async drainUntilDeadline(): Promise<number> {
    while (this.inHand.size > 0 && !this.deadline?.passed) {
      await (this.deadline ? Promise.race([this.oneFinished(), this.deadline.promise]) : this.oneFinished());
    }
    if (this.inHand.size === 0) return 0;
    const left = this.inHand.size;
    const error = new Error(
      'the worker stopped at its deadline with this job still running: it is left reserved and comes back after retry_after',
    );
    for (const inHand of this.inHand.values()) {
      inHand.expire(error);
      inHand.abandoned = true;
      inHand.renewed = false;
    }
    return left;
  }

  /** Wakes the loop waiting for a job to finish (oneFinished): a slot is free, or the stop conditions changed. */
  private slotFreed(): void {
    this.jobFinished?.resolve();
    this.jobFinished = undefined;
  }

  /** Resolves when any job in hand finishes, or its delete is asked for (its slot then counts as free). */
  private oneFinished(): Promise<void> {
    if (!this.jobFinished) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      this.jobFinished = { promise, resolve };
    }
    return this.jobFinished.promise;
  }

  /** Sleeps `seconds`, or less when a job in hand finishes; no timer outlives the wait. */
  private async napUnlessOneFinishes(seconds: number): Promise<void> {
    const finished = this.oneFinished().then(() => this.wake?.());
    await Promise.race([finished, this.nap(seconds)]);
    this.wake?.();
  }

  private async nap(seconds: number): Promise<void> {
    if (seconds <= 0 || this.shouldQuit) return;
    const controller = new AbortController();
    this.wake = () => controller.abort();
    await sleep(seconds * 1000, undefined, { signal: controller.signal }).catch(() => undefined);
    this.wake = undefined;
  }

  /** Runs one reserved job to its end: done, released, given back or failed (see runJob.ts). */
  /** A job whose reserve threw, failed as Laravel 12.54+ fails it (failReserveErrors). */
  private async failUnreserved(job: ReservedJob, error: Error): Promise<void> {
    const inHand = new JobInHand(job);
    try {
      await this.runner.failUnreserved(inHand, error);
    } catch (failure) {
      this.events.say(
        { event: 'error', job: job.id, queue: job.queue, error: `could not fail the job: ${describeError(failure)}` },
        failure,
        'queue',
      );
    } finally {
      this.events.finished(inHand);
    }
  }

  async process(job: ReservedJob): Promise<void> {
    const inHand = new JobInHand(job);
    inHand.slot = this.inHand.add(inHand);
    try {
      await this.runner.run(inHand);
    } finally {
      this.inHand.remove(inHand.slot, inHand);
    }
  }
}

/** The job a reserve error carries (the database queue's DatabaseReserveError), if it carries one. */
function reserveErrorJob(error: unknown): ReservedJob | undefined {
  if (!(error instanceof Error) || error.name !== 'DatabaseReserveError') return undefined;
  const job = (error as Error & { job?: ReservedJob }).job;
  return job && typeof job.delete === 'function' ? job : undefined;
}

/**
 * On Redis, a job whose slot counts as free: its handler returned. The next reserve then goes
 * out while the job's bookkeeping (a unique lock's release, its chain's next link) and its
 * delete are on their way, overlapping them; a delete asked for before it goes with it.
 */
function isSettling(inHand: JobInHand): boolean {
  return inHand.settling;
}

/**
 * On a jobs table, a job whose slot counts as free: its handler returned, and it is not waiting
 * to be deleted. A job that ends in a delete frees its slot when the delete is asked for, after
 * its bookkeeping: the next reserve then commits that delete in its own transaction, one commit
 * (a disk flush) a job where going before it would cost two.
 */
function isDeleting(inHand: JobInHand): boolean {
  return inHand.settling && (inHand.deleting || inHand.deleted || inHand.released || inHand.failed || inHand.abandoned);
}

/** What each reserve takes with share on: the classes handled, and the canary shares of some; a share of a class with no handler is refused. */
function takeOnly(classes: string[], shares: TakeShares): TakeOnly {
  const unhandled = Object.keys(shares).filter((className) => !classes.includes(className));
  if (unhandled.length > 0)
    throw new WorkerUsageError(
      `take names ${unhandled.map((c) => JSON.stringify(c)).join(', ')}, which ${unhandled.length === 1 ? 'has' : 'have'} no handler: a share is of a class the worker handles (handler keys: ${classes.join(', ')})`,
    );
  return Object.keys(shares).length > 0 ? { classes, shares } : { classes };
}
