/**
 * What the worker says about its set-up, once, before it takes a job (and the watchdog's report
 * of a blocked loop): lines worked out from the options and dependencies alone, said by Worker.ts.
 */
import type { HandlerMap } from './handlers.js';
import { WITHOUT_SHAPES_LINE, payloadsCarryLockKeys, unanswerableLine, unanswerableMethods } from './methods.js';
import { laravelOfJob } from './laravelOfJob.js';
import type { StopReason, WorkerDependencies, WorkerEvent } from './types.js';
import type { BlockedJob } from './watchdog.js';

/**
 * Laravel's docs warn that a job running past retry_after is run again. Reservations renewed
 * while handlers run close that hole for jobs in this worker's hands; a timeout at or past
 * retry_after still says something about the deployment worth a line at start.
 */
export function shortRetryAfterWarning(retryAfter: number | null, timeout: number): WorkerEvent | undefined {
  if (retryAfter === null || (timeout > 0 && timeout < retryAfter)) return undefined;
  const limit = timeout > 0 ? `${timeout} s` : 'no limit';
  return {
    event: 'warning',
    reason: `--timeout (${limit}) is not below --retry-after (${retryAfter} s): a job that outlives a worker killed mid-job runs again while the first may still be at work; keep --timeout a few seconds below --retry-after`,
  };
}

/**
 * rateLimited() counts in Laravel's Redis cache store (RateLimiter.ts); a worker whose cache is
 * the database store's has none to give it, so its handlers' jobs would fail there. Said once at
 * start rather than met job by job.
 */
export function rateLimiterWithoutRedis(handlers: HandlerMap, redisCache: boolean): WorkerEvent | undefined {
  if (redisCache) return undefined;
  const limited = Object.keys(handlers).filter((key) => guardsOf(handlers[key]).includes('rateLimited'));
  if (limited.length === 0) return undefined;
  return {
    event: 'warning',
    reason: `rateLimited() counts in Laravel's Redis cache store, and this worker's cache is the database store: the jobs of ${limited.join(', ')} fail until a Redis cache is given (--redis, REDIS_URL, CACHE_STORE=redis)`,
  };
}

function guardsOf(handler: unknown): string[] {
  const guards = (handler as { guards?: unknown } | undefined)?.guards;
  return Array.isArray(guards) ? (guards as string[]) : [];
}

/**
 * Classes whose unique lock Node could not release (methods.ts), named at start: without
 * `share` the run ends before taking any job, status 2 (`stop`); with it their jobs are given
 * back (`refused`, by class). Without shapes the worker cannot tell which they are, and says so once.
 */
export function unanswerableAtStart(
  handlers: HandlerMap,
  deps: WorkerDependencies,
  share: boolean,
): { events: WorkerEvent[]; refused: Map<string, string>; stop?: StopReason } {
  if (!deps.locks) {
    const events: WorkerEvent[] = deps.unreachableLocks
      ? [
          {
            event: 'warning',
            reason: `${deps.unreachableLocks}; this worker releases no unique job's lock${deps.cache ? '' : ", and reads no restart or pause signal of that store's"}`,
          },
        ]
      : [];
    return { events, refused: new Map() };
  }
  // An app from 11.39 on names each lock in the payload: nothing for shapes to tell.
  const laravel = deps.laravel ?? deps.shapes?.laravel ?? undefined;
  if (payloadsCarryLockKeys(laravel)) return { events: [], refused: new Map() };
  // No version known: each job's payload tells (LockKeyNotice), not the start.
  if (!deps.shapes) return { events: laravel === undefined ? [] : [{ event: 'warning', reason: WITHOUT_SHAPES_LINE }], refused: new Map() };
  const found = unanswerableMethods(handlers, deps.shapes, laravel);
  const refused = new Map(found.map((refusal) => [refusal.className, unanswerableLine(refusal, true)]));
  const events = found.map((refusal): WorkerEvent => ({ event: 'error', job: refusal.className, error: unanswerableLine(refusal, share) }));
  if (found.length === 0 || share) return { events, refused };
  return {
    events,
    refused,
    stop: {
      status: 2,
      reason: 'refused',
      detail: `${found.length} handled class${found.length > 1 ? 'es' : ''} whose unique lock Node could not release`,
    },
  };
}

/**
 * Without shapes, and with no version known, whether the 11.39 line applies is for the payloads
 * to show (laravelOfJob.ts): it is said once, at the first job whose payload shows no 11.39+
 * (neither createdAt nor a lock in its hidden context), never for a queue of 12.11+ payloads.
 */
export class LockKeyNotice {
  private said = false;
  private readonly applies: boolean;

  constructor(deps: WorkerDependencies) {
    this.applies = deps.locks !== undefined && !deps.shapes && (deps.laravel ?? undefined) === undefined;
  }

  /** The warning for this job's payload, the first time one does not carry its lock's key; else undefined. */
  check(envelope: object): WorkerEvent | undefined {
    if (!this.applies || this.said || payloadsCarryLockKeys(laravelOfJob(undefined, envelope))) return undefined;
    this.said = true;
    // The same line a worker on an app before 11.39 says at start: of every such job, not this one.
    return { event: 'warning', reason: WITHOUT_SHAPES_LINE };
  }
}

/** The watchdog saw a handler block the event loop past its timeout: the `blocked` event, said once the loop turns again. */
export function blockedEvent(job: BlockedJob): WorkerEvent {
  const blocked = `${(job.blockedMs / 1000).toFixed(1)} s`;
  const what =
    job.others === 0
      ? `blocked the event loop for ${blocked}, past its timeout of ${job.timeout} s`
      : `was past its timeout of ${job.timeout} s while the event loop was blocked for ${blocked}, by it or by one of the ${job.others} other job${job.others === 1 ? '' : 's'} in hand`;
  const reason = `${what}: it is treated as timed out (exitOnBlock would have ended the process)`;
  return { event: 'blocked', job: job.job, id: job.id, uuid: job.uuid, queue: job.queue, attempts: job.attempts, reason };
}
