/**
 * One reserved job's run, from the worker's hands to its end, in the order of Laravel's
 * Worker::process and CallQueuedHandler::call: judged before it is read, read, its handler
 * found, its middleware named, run against its timeout, then released, failed (with its failed()
 * hook) or deleted. The rules are rules.ts's; the application's bookkeeping around the run
 * (unique locks, chains, batches) is CallQueuedHandler.ts's; what is said goes through events.ts.
 * Whether a job is PHP's to run rather than Node's (`share`) is decided in phpTakes() alone.
 */
import type { PhpValue } from '../php/index.js';
import { commandOf, type DecodedPayload, type Encrypter, type JobView } from '../laravel/index.js';
import { isConnectionError } from '../database/reach.js';
import { isBookkeepingError } from '../queue/errors.js';
import type { CallQueuedHandler } from './CallQueuedHandler.js';
import {
  MaxAttemptsExceededError,
  NoHandlerError,
  TimeoutExceededError,
  timedOutFailure,
  failureWording,
  type FailureWording,
  UndecodableJobError,
  describeError,
  exceptionText,
  manualFailure,
} from './errors.js';
import { handlerNames, jobName, type Handler, type HandlerJob, type HandlerMap } from './handlers.js';
import { nearestHandlerKey } from './handlerKeys.js';
import { JobContext, JobInHand, type JobActions } from './JobInHand.js';
import { QueueCache } from './cache.js';
import type { MiddlewareNotices } from './middleware.js';
import { alreadyExceedsMaxAttempts, attemptsUsedUp, backoffFor, timeoutOf } from './rules.js';
import { withinTimeout } from './timeout.js';
import type { WorkerEvents } from './events.js';
import type { WorkerDependencies, WorkerEvent } from './types.js';
import type { Watchdog } from './watchdog.js';
import type { WorkerOptions } from './WorkerOptions.js';
import type { LockKeyNotice } from './startChecks.js';

/** The handler a job is run with, and the key the handlers module gives it under. */
interface FoundHandler {
  key: string;
  handler: Handler;
}

/** When, in a job's run, Node may leave it to the PHP workers it shares the queue with. */
type PhpMoment =
  | { at: 'unreadable'; error: unknown }
  | { at: 'no-handler'; nearest: string }
  | { at: 'before-running'; key: string }
  | { at: 'out-of-attempts' };

/** What a job's run needs of the worker around it. */
export interface RunnerParts {
  options: WorkerOptions;
  deps: WorkerDependencies;
  events: WorkerEvents;
  handlerMap: HandlerMap;
  /** CallQueuedHandler's duties around the handler: unique locks, the chain, batches. */
  bookkeeping: CallQueuedHandler;
  middlewareNotices: MiddlewareNotices;
  /** Without shapes or a version: the 11.39 lock-key line, said at the first payload it applies to. */
  lockKeyNotice: LockKeyNotice;
  /** With `share`: classes whose lock Node could not release, given back for PHP (see methods.ts). */
  refused: () => ReadonlyMap<string, string>;
  /** The thread that holds the timeout while a handler blocks the event loop, while running. */
  watchdog: () => Watchdog | undefined;
  /** UNIX seconds. */
  now: () => number;
  /**
   * A job's delete has just been asked for: its slot counts as free from now (see Worker's
   * freeSlots), so the worker may reserve the next job at once, and the queue sends the
   * delete with that reserve, in one step (Redis) or one transaction (a jobs table).
   */
  deleting: () => void;
}

export class JobRunner {
  /** What every job's handler may do to its job, made once for the worker (see JobActions). */
  private readonly actions: JobActions;

  constructor(private readonly parts: RunnerParts) {
    this.actions = runnerActions(this, parts);
  }

  private get options(): WorkerOptions {
    return this.parts.options;
  }

  private get events(): WorkerEvents {
    return this.parts.events;
  }

  private get encrypter(): Encrypter | undefined {
    return this.parts.deps.encrypter;
  }

  /** Runs one reserved job to its end: done, released, given back or failed. */
  async run(inHand: JobInHand): Promise<void> {
    const job = inHand.job;
    // Judged before the command is read: a job the queue could not count, or one out of attempts,
    // is failed without decoding a command that may be what killed the last worker.
    const early = this.failsBeforeReading(inHand);
    if (early) return this.failUnread(inHand, early);
    let read: { view: JobView; command: PhpValue | undefined } | undefined;
    let payload!: DecodedPayload; // set whenever `read` is
    let unreadable: unknown;
    try {
      payload = job.payload;
      read = commandOf(payload, this.encrypter);
    } catch (error) {
      unreadable = error;
    }
    if (!read) {
      // What Node cannot read (an encrypted command and no APP_KEY here) a PHP worker may, and
      // one that cannot fails it by its own rules; else a payload that does not decode cannot run.
      const forPhp = await this.phpTakes(inHand, { at: 'unreadable', error: unreadable });
      if (forPhp) {
        this.events.processing(inHand, inHand.event('processing'));
        return this.leaveForPhp(inHand, forPhp, 'as pushed');
      }
      return this.failUnread(
        inHand,
        new UndecodableJobError(`the job cannot be read: ${describeError(unreadable)}`, { cause: unreadable }),
      );
    }
    const { view, command } = read;
    if (alreadyExceedsMaxAttempts(payload.envelope, job.attempts(), this.parts.now(), this.options)) {
      return this.failUnread(inHand, new MaxAttemptsExceededError(jobName(payload), this.wording(payload.envelope)));
    }
    inHand.read(payload, command, jobName(payload));
    // Said before the job's start, so a log a timeout cuts short still ends with that start.
    const lockKeys = this.parts.lockKeyNotice.check(payload.envelope);
    if (lockKeys) this.events.say(lockKeys);
    this.events.processing(inHand, inHand.event('processing'));

    const found = this.findHandler(payload, view);
    const context = found && this.context(inHand, found.key, payload, view, command);
    const middleware = found && this.parts.middlewareNotices.check(view, found.handler, this.parts.deps.shapes);
    if (middleware) this.events.say({ event: 'warning', job: inHand.name, reason: middleware });
    try {
      if (!found || !context) {
        const nearest = nearestHandlerKey(handlerNames(payload, view)[0] ?? inHand.name, Object.keys(this.parts.handlerMap));
        const near = nearest === undefined ? '' : ` (the nearest handler key is ${JSON.stringify(nearest)})`;
        const forPhp = await this.phpTakes(inHand, { at: 'no-handler', nearest: near });
        if (forPhp) return await this.leaveForPhp(inHand, forPhp, 'as pushed', true);
        const missing = `no handler for ${handlerNames(payload, view).join(' or ')} in the handlers module${near}`;
        // A closure's body is PHP: say so first, rather than only ask for a handler of Laravel's wrapper.
        throw new NoHandlerError(view.kind === 'closure' ? `${inHand.name}: ${view.reason} (${missing})` : missing);
      }
      // Asked at once: only a job in a batch (with `share`) has anything to wait for.
      const forPhpNow = this.phpTakesBeforeRunning(inHand, found.key);
      const forPhp = forPhpNow instanceof Promise ? await forPhpNow : forPhpNow;
      if (forPhp) return await this.leaveForPhp(inHand, forPhp, 'as pushed');
      // The bookkeeping says at once when it has nothing to do (undefined): only work is awaited.
      const { bookkeeping } = this.parts;
      const before = bookkeeping.beforeRunning(payload, command);
      if (before) await before;
      const timedOut = await this.runHandler(inHand, found.handler, context, payload);
      if (timedOut) return this.finish(inHand, 'timed-out', timedOut);
      inHand.settling = true;
      // As Laravel's CallQueuedHandler: a unique job not released frees its lock; a job that
      // neither failed nor was released pushes the next link of its chain, even when it deleted
      // itself; then it is deleted if it was not.
      if (!inHand.abandoned) {
        const after = bookkeeping.afterRunning(payload, command, inHand.released);
        if (after) await after;
      }
      if (!inHand.failed && !inHand.released && !inHand.abandoned) {
        const chained = bookkeeping.dispatchNextInChain(payload, command);
        if (chained) await chained;
        const batched = bookkeeping.recordSuccessfulBatchJob(payload, command, job.queue);
        if (batched) await batched;
        if (!inHand.deleted) {
          inHand.deleting = true;
          const deleted = job.delete({ runtimeMs: inHand.elapsed() });
          this.parts.deleting();
          await deleted;
          inHand.deleted = true;
        }
      }
      this.finish(inHand, inHand.outcome('processed'));
    } catch (error) {
      // The queue refused the delete of a job that ran (busy past the retries), or its database
      // went away after the handler returned: no exception of the job's, so it is not failed; it
      // stays reserved and comes back after retry_after.
      if (isBookkeepingError(error) || (inHand.settling && isConnectionError(error))) throw error;
      await this.handleException(inHand, payload, context, error);
      this.finish(inHand, inHand.outcome('deleted'), error);
    }
  }

  /** Puts the job back to run again after `seconds`, this attempt spent (see notPutBackTwice). */
  async release(inHand: JobInHand, seconds: number): Promise<void> {
    inHand.released = true;
    if ((await inHand.job.release(seconds)) === false) this.notPutBackTwice(inHand, 'released');
  }

  /**
   * The queue found the job's reservation gone when its release or give-back came: it ran out
   * while the queue did not answer, and expiry put the job back on the queue already, where it
   * runs again (at least once, as a job whose worker died). No second copy was added.
   */
  private notPutBackTwice(inHand: JobInHand, how: 'released' | 'given back'): void {
    this.events.say({
      event: 'warning',
      ...inHand.fields(),
      reason: `not ${how}: its reservation had run out before the queue answered, and the job is on the queue again already (put back once, not twice)`,
    });
  }

  /** The event that says what became of the job, with its duration. */
  private finish(inHand: JobInHand, event: WorkerEvent['event'], error?: unknown): void {
    const said = inHand.event(event, true);
    if (error !== undefined) said.error = describeError(error);
    this.events.outcome(inHand, said, error, event === 'error' ? 'failer' : 'worker');
  }

  /**
   * With `share`, why this job is PHP's to run (or to fail) rather than Node's at this moment of
   * its run, if it is: the one place the worker decides it. Without `share` every job is Node's.
   */
  private async phpTakes(inHand: JobInHand, moment: PhpMoment): Promise<string | undefined> {
    if (!this.options.share) return undefined;
    const { bookkeeping } = this.parts;
    switch (moment.at) {
      case 'unreadable':
        return `the job cannot be read here, left for a PHP worker: ${describeError(moment.error)}`;
      case 'no-handler':
        return `no Node handler, left for a PHP worker${moment.nearest}`;
      case 'before-running':
        return this.phpTakesBeforeRunning(inHand, moment.key);
      case 'out-of-attempts': {
        // A failure whose bookkeeping runs PHP closures (a chain's or a batch's callbacks) is left to PHP.
        const reason = inHand.payload
          ? await bookkeeping.phpShouldFail(inHand.payload, inHand.command)
          : await this.phpShouldFailUnread(inHand);
        return reason && `out of attempts, left for a PHP worker to fail: ${reason}`;
      }
    }
  }

  /**
   * phpTakes at 'before-running', at once when nothing is to be waited for: without `share`
   * never; with it, a class whose lock Node could not release, or a job that would finish a
   * batch whose callbacks are PHP's.
   */
  private phpTakesBeforeRunning(inHand: JobInHand, key: string): string | undefined | Promise<string | undefined> {
    if (!this.options.share) return undefined;
    return this.parts.refused().get(key) ?? this.parts.bookkeeping.phpShouldRun(inHand.payload!, inHand.command);
  }

  /** phpShouldFail for a job judged before it was read: nothing, when its command does not read. */
  private async phpShouldFailUnread(inHand: JobInHand): Promise<string | undefined> {
    try {
      const payload = inHand.job.payload;
      return await this.parts.bookkeeping.phpShouldFail(payload, commandOf(payload, this.encrypter).command);
    } catch {
      return undefined;
    }
  }

  /**
   * Leaves the job to a PHP worker sharing the queue: given back `as pushed` (this attempt not
   * spent), or released `spent`, so the first PHP worker that reserves it finds it out of
   * attempts and fails it (markJobAsFailedIfAlreadyExceedsMaxAttempts), running its callbacks.
   * `timed`: the event says its duration (as a job that found no handler always has).
   */
  private async leaveForPhp(inHand: JobInHand, reason: string, how: 'as pushed' | 'spent', timed = false): Promise<void> {
    if (how === 'spent') await this.release(inHand, 0);
    else if ((await inHand.job.giveBack(this.options.shareDelay)) === false) this.notPutBackTwice(inHand, 'given back');
    // Only a job that found no handler says how long it took: the others' lines are read by their reason alone.
    this.events.outcome(inHand, { event: 'given-back', ...inHand.fields(), ...(timed ? { durationMs: inHand.elapsed() } : {}), reason });
  }

  /** How the app's Laravel words the failures it records, by its version, else by this job's envelope. */
  private wording(envelope: object | undefined): FailureWording {
    return failureWording(this.parts.deps.laravel, envelope, this.parts.deps.laravelGiven);
  }

  /**
   * Why a job must fail before its command is read, if it must: the queue reserved it as it was
   * pushed (its attempts never rise, so it would loop for ever), or this attempt is one too many
   * (Laravel's markJobAsFailedIfAlreadyExceedsMaxAttempts), judged from the envelope alone.
   */
  private failsBeforeReading(inHand: JobInHand): Error | undefined {
    const job = inHand.job;
    const unreadable = job.unreadable();
    if (unreadable !== undefined) return new UndecodableJobError(`the job cannot be read: ${unreadable}`);
    // A first attempt has killed no worker yet: it is judged once read, which spares every
    // job's first run a second parse of its envelope.
    if (job.firstAttempt) return undefined;
    // The pushed envelope, which the payload is then decoded from; the reserved copy when it does not read.
    if (alreadyExceedsMaxAttempts(job.envelope ?? job.fields, job.attempts(), this.parts.now(), this.options))
      return new MaxAttemptsExceededError(inHand.name, this.wording(job.envelope ?? job.fields));
    return undefined;
  }

  /**
   * Fails a job from its envelope alone: recorded and deleted first, so a command that cannot
   * be read (or kills the process reading it) cannot take the job down with it; then, when the
   * command does read and has a handler, its failed() hook.
   */
  private async failUnread(inHand: JobInHand, error: Error): Promise<void> {
    if (error instanceof UndecodableJobError) inHand.name = '(undecodable)';
    this.events.processing(inHand, inHand.event('processing'));
    if (error instanceof MaxAttemptsExceededError) {
      const forPhp = await this.phpTakes(inHand, { at: 'out-of-attempts' });
      if (forPhp) return this.leaveForPhp(inHand, forPhp, 'as pushed');
    }
    await this.recordFailure(inHand, error);
    if (inHand.failedRecorded && error instanceof MaxAttemptsExceededError) await this.failedHookOfUnread(inHand, error);
    this.events.outcome(
      inHand,
      { event: inHand.outcome('deleted'), ...inHand.fields(), durationMs: inHand.elapsed(), error: error.message },
      error,
      inHand.kept ? 'failer' : 'worker',
    );
  }

  /**
   * Laravel 12.54+'s DatabaseQueue: a job whose reserve threw is failed (`$job->fail($e)`), so
   * one bad row (its attempts column full, say) does not stop the queue. Recorded with the error.
   */
  async failUnreserved(inHand: JobInHand, error: Error): Promise<void> {
    await this.failUnread(inHand, error);
  }

  /** The failed() hook of a job failed before it was read, when its command reads after all. */
  private async failedHookOfUnread(inHand: JobInHand, error: Error): Promise<void> {
    try {
      const payload = inHand.job.payload;
      const { view, command } = commandOf(payload, this.encrypter);
      await this.parts.bookkeeping.failed(payload, command);
      const found = this.findHandler(payload, view);
      if (found) await this.runFailedHook(this.context(inHand, found.key, payload, view, command), error);
    } catch {
      // Its command does not read: there is no hook to run, and the failure is recorded.
    }
  }

  /**
   * The handler for a job, among the module's own names only: a job of class `constructor` or
   * `toString` must not find Object.prototype's functions and be reported done.
   */
  private findHandler(payload: DecodedPayload, view: JobView): FoundHandler | undefined {
    for (const key of handlerNames(payload, view)) {
      const handler = ownHandler(this.parts.handlerMap, key);
      if (handler) return { key, handler };
    }
    return undefined;
  }

  /**
   * Runs the handler with the job's timeout. Resolves to the timeout error when it ran out,
   * having failed the job if Laravel would (failOnTimeout, or its last attempt); otherwise the
   * job stays reserved and comes back after retry_after, as with Laravel.
   */
  private async runHandler(inHand: JobInHand, handler: Handler, context: HandlerJob, payload: DecodedPayload): Promise<Error | undefined> {
    const seconds = timeoutOf(payload.envelope, this.options);
    const job = inHand.job;
    // With no timeout there is still a reservation to keep: the thread renews it while the
    // handler blocks the loop (no deadline: never reported). The reservation goes too, so the
    // thread can renew it.
    const deadline = seconds > 0 ? performance.now() + seconds * 1000 : Infinity;
    const watchdog = this.parts.watchdog();
    const watched = watchdog?.watch(
      deadline,
      { job: inHand.name, id: job.id, uuid: job.uuid, queue: job.queue, attempts: job.attempts(), timeout: seconds },
      job.reservation?.(),
    );
    let outcome;
    try {
      outcome = await withinTimeout(
        this.events.hasAround ? () => this.events.around(inHand, () => handler(context)) : () => handler(context),
        seconds,
        deadline,
      );
    } finally {
      if (watched !== undefined) watchdog?.unwatch(watched);
    }
    if (outcome === 'done') return undefined;
    const error = new TimeoutExceededError(inHand.name, seconds);
    const failNow = !inHand.finished;
    inHand.expire(error);
    // No longer this handler's: its reservation runs out after retry_after, as with Laravel.
    inHand.renewed = false;
    const lastAttempt = this.attemptsUsedUp(inHand, payload);
    // As Laravel's timeout handler: fail on the last attempt, count the timeout toward
    // maxExceptions (failing when reached), fail on failOnTimeout; each failure is recorded as
    // the app's version records it (8.x–10.9: MaxAttemptsExceededException "…or run too long";
    // from 10.10: TimeoutExceededException).
    // The timeout is counted even when the job is not failed now.
    const exceptionsUsedUp = await this.exceptionsUsedUp(payload);
    if (failNow && (lastAttempt || exceptionsUsedUp || payload.envelope.failOnTimeout === true)) {
      await this.fail(inHand, timedOutFailure(inHand.name, this.wording(payload.envelope)), context);
    }
    inHand.abandoned = true;
    return error;
  }

  /** What the handler is given: the job, and what it may do to it, each once and never after its end. */
  private context(inHand: JobInHand, key: string, payload: DecodedPayload, view: JobView, command: PhpValue | undefined): HandlerJob {
    return new JobContext(key, inHand, payload, view, command, this.actions);
  }

  /** Laravel's markJobAsFailedIfWillExceedMaxAttempts, for this reserved job. */
  private attemptsUsedUp(inHand: JobInHand, payload: DecodedPayload): boolean {
    return attemptsUsedUp(payload.envelope, inHand.job.attempts(), this.parts.now(), this.options);
  }

  /** Laravel's handleJobException: fail when out of attempts or exceptions, else release with backoff. */
  private async handleException(
    inHand: JobInHand,
    payload: DecodedPayload,
    context: HandlerJob | undefined,
    error: unknown,
  ): Promise<void> {
    // Left reserved at stop()'s deadline: no longer this worker's to release or fail.
    if (inHand.abandoned) return;
    try {
      if (!inHand.failed && !(error instanceof NoHandlerError) && inHand.payload && this.attemptsUsedUp(inHand, payload)) {
        const forPhp = await this.phpTakes(inHand, { at: 'out-of-attempts' });
        if (forPhp) return await this.leaveForPhp(inHand, forPhp, 'spent');
      }
      if (!inHand.failed) {
        if (this.attemptsUsedUp(inHand, payload) || error instanceof NoHandlerError) {
          await this.fail(inHand, error, context);
        }
        // Laravel counts the exception even when the job has just failed for its attempts (the
        // count outlives it: a retried job keeps its uuid); failing it again does nothing.
        if (await this.exceptionsUsedUp(payload)) await this.fail(inHand, error, context);
      }
    } finally {
      if (!inHand.finished) await this.release(inHand, backoffFor(payload.envelope, inHand.job.attempts(), this.options));
    }
  }

  /** maxExceptions, counted per uuid in the cache Laravel's workers use. */
  private async exceptionsUsedUp(payload: DecodedPayload): Promise<boolean> {
    const cache = this.parts.deps.cache;
    const maxExceptions = payload.envelope.maxExceptions;
    const uuid = payload.envelope.uuid;
    if (!cache || typeof maxExceptions !== 'number' || typeof uuid !== 'string') return false;
    if ((await cache.countException(uuid)) < maxExceptions) return false;
    await cache.forgetExceptions(uuid);
    return true;
  }

  /**
   * Fails a job: recorded where Laravel looks, removed from the queue, then its handler's
   * `failed` hook with the error (as Laravel calls the job's failed() on every way to failure).
   */
  async fail(inHand: JobInHand, error: unknown, context: HandlerJob | undefined): Promise<void> {
    if (inHand.failed || inHand.deleted) {
      inHand.failed = true;
      return;
    }
    await this.recordFailure(inHand, error);
    if (!inHand.failedRecorded) return;
    if (inHand.payload) await this.parts.bookkeeping.failed(inHand.payload, inHand.command);
    if (context) await this.runFailedHook(context, error);
  }

  /**
   * The record first, then the delete: a worker killed between the two leaves the job reserved,
   * to come back after retry_after and be failed again, and the uuid's unique key makes that
   * second record a no-op. A record that cannot be written keeps the job reserved for the same
   * reason, and says so.
   */
  private async recordFailure(inHand: JobInHand, error: unknown): Promise<void> {
    const job = inHand.job;
    const { deps, options } = this.parts;
    inHand.failed = true;
    try {
      const exception = exceptionText(error);
      if (deps.failer) await deps.failer.log(options.connectionName, job.queue, job.raw, exception);
      if (deps.onFailed)
        await deps.onFailed(
          { connection: options.connectionName, queue: job.queue, id: job.id, uuid: job.uuid, payload: job.raw, exception },
          error,
        );
    } catch (recordError) {
      inHand.kept = true;
      inHand.renewed = false;
      this.events.say(
        {
          event: 'error',
          job: inHand.name,
          id: job.id,
          uuid: job.uuid,
          queue: job.queue,
          error: `could not record the failure, so the job stays reserved and comes back after retry_after: ${describeError(recordError)}`,
        },
        recordError,
        'failer',
      );
      return;
    }
    inHand.failedRecorded = true;
    inHand.deleted = true;
    await job.delete({ failing: true });
  }

  /**
   * The handler's `failed(job, error)` hook, bounded by the job's timeout as its handler is: a
   * hook that never settles must not hold a slot, or the worker's exit, for ever.
   */
  private async runFailedHook(context: HandlerJob, error: unknown): Promise<void> {
    const hook = ownHandler(this.parts.handlerMap, context.name)?.failed;
    if (typeof hook !== 'function') return;
    const seconds = timeoutOf(context.decoded.envelope, this.options);
    const about = { job: context.name, id: context.id, uuid: context.uuid };
    try {
      const outcome = await withinTimeout(() => hook(context, error), seconds);
      if (outcome !== 'done')
        this.events.say(
          { event: 'error', ...about, error: `failed() hook did not finish within ${seconds} seconds; the failure is recorded` },
          undefined,
          'hook',
        );
    } catch (hookError) {
      this.events.say({ event: 'error', ...about, error: `failed() hook threw: ${describeError(hookError)}` }, hookError, 'hook');
    }
  }
}

/** The job actions of a runner: the same checks the handler's job made with closures of its own. */
function runnerActions(runner: JobRunner, parts: RunnerParts): JobActions {
  return {
    async release(inHand, seconds) {
      if (inHand.finished) return;
      await runner.release(inHand, seconds);
    },
    async fail(inHand, error, context) {
      if (inHand.abandoned) return;
      await runner.fail(inHand, manualFailure(error), context);
    },
    async delete(inHand) {
      if (inHand.finished) return;
      inHand.deleted = true;
      await inHand.job.delete({ runtimeMs: inHand.elapsed() });
    },
    // The handler's cache is Redis's (the rate limiter and RedisLock speak Redis); the database store's is not given.
    get cache() {
      return parts.deps.cache instanceof QueueCache ? parts.deps.cache : undefined;
    },
    get locks() {
      return parts.deps.locks;
    },
  };
}

/** A handler the module itself defines under `key`, never one inherited from Object.prototype. */
export function ownHandler(handlerMap: HandlerMap, key: string): Handler | undefined {
  if (!Object.hasOwn(handlerMap, key)) return undefined;
  const handler = handlerMap[key];
  return typeof handler === 'function' ? handler : undefined;
}
