/**
 * A failed job's retry under Horizon, shared by `lqb retry` and the dashboard's Retry so the two
 * never drift: a job Horizon holds a failed record of is retried as Horizon's Retry
 * (RetryFailedJob) does it, any other goes back as queue:retry pushes under Horizon, and without
 * Horizon's records as queue:retry pushes it.
 */
import {
  resetAttempts,
  retryFailedJob,
  retryUntilFor,
  type FailedJob,
  type FailedJobProvider,
  type RetryUntilChoice,
} from '../worker/index.js';
import type { ShapesFile } from '../shapes/shape.js';
import type { FailedRecord, HorizonRecorder } from './HorizonRecorder.js';

/** The new retryUntil window, as --retry-until says it (none said: queue:retry's rule, Horizon's move). */
export type RetryWindow = { shapes?: ShapesFile; choice?: RetryUntilChoice };

/** Where a retry is pushed: a queue's raw push. */
export interface RawPushQueue {
  pushRaw(payload: string, queue: string): Promise<unknown>;
}

/**
 * How a failed job went back: refused (its record stays), pushed as queue:retry pushes it (its
 * own id), or retried as Horizon's Retry does (a new job, `id`).
 */
export type RetryOutcome = { refused: string } | { as: 'queue' } | { as: 'horizon'; id: string };

/**
 * Retries one failed job onto `queue` and forgets its record. `recorder` is Horizon's recorder
 * when Horizon's records are on for this queue (a Redis one: Horizon records Redis's jobs only),
 * else undefined. With it, a job Horizon holds a failed record of is retried as Horizon's Retry
 * does it (retryAsHorizon), and any other goes back as queue:retry pushes under Horizon: its
 * queue's pushRaw lays the payload out (type, the payload's own tags, pushedAt; the id kept) and
 * records it pending. Without it, as queue:retry: pushed as it is.
 */
export async function retryFailed(
  recorder: HorizonRecorder | undefined,
  failer: FailedJobProvider,
  queue: RawPushQueue,
  job: FailedJob,
  window: RetryWindow,
): Promise<RetryOutcome> {
  const record = recorder && (await recorder.findFailed(job.uuid));
  if (recorder && record) return { as: 'horizon', id: await retryAsHorizon(recorder, failer, queue, job, record, window) };
  const push = recorder && ((payload: string, name: string) => pushAsHorizon(recorder, queue, payload, name));
  const refused = await retryFailedJob(failer, queue, job, window, push);
  return refused === undefined ? { as: 'queue' } : { refused };
}

/**
 * Horizon's Retry (RetryFailedJob) of a job Horizon holds a failed record of: the record's
 * payload goes back as a new job (an ordered uuid as its id, attempts 0, `retry_of` naming the
 * failed job, retryUntil moved as far past now as it was past the first push), laid out as
 * Horizon's queue pushes a raw payload and recorded pending; then the failed record's
 * `retried_by` gains it as pending, which the new job's end turns completed or failed. As
 * queue:retry, the failed_jobs record is forgotten. Horizon's window needs no PHP, so nothing is
 * refused; a new window said with --retry-until (seconds, or none) replaces it where queue:retry
 * would refresh one. Returns the new job's id.
 */
export async function retryAsHorizon(
  recorder: HorizonRecorder,
  failer: FailedJobProvider,
  queue: RawPushQueue,
  job: FailedJob,
  record: FailedRecord,
  window: RetryWindow,
): Promise<string> {
  const id = recorder.retryId();
  const payload = withChosenWindow(recorder.retryPayload(record.payload, job.uuid, id), record.payload, window);
  await pushAsHorizon(recorder, queue, payload, job.queue);
  await recorder.retried(job.uuid, id);
  await failer.forget(job.uuid);
  return id;
}

/** A raw push as Horizon's queue makes it: laid out (type job, no tags of its own, pushedAt; the id kept), pushed, recorded pending. */
export async function pushAsHorizon(recorder: HorizonRecorder, queue: RawPushQueue, payload: string, name: string): Promise<void> {
  const prepared = recorder.prepare(payload, { raw: true });
  await queue.pushRaw(prepared, name);
  await recorder.pushed(name, prepared);
}

/** The retry's payload with the window --retry-until says, where queue:retry would refresh one; else as Horizon moved it. */
function withChosenWindow(payload: string, failedPayload: string, window: RetryWindow): string {
  if (window.choice === undefined) return payload;
  const chosen = retryUntilFor(failedPayload, window);
  return 'retryUntil' in chosen ? resetAttempts(payload, chosen) : payload;
}
