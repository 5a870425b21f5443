/**
 * Cancelling a delayed job: what Laravel itself cannot do. A delayed job is a member of
 * `queues:NAME:delayed` until it is due; removing that member is the whole cancel. The job is
 * found by uuid (or id) with RedisQueue.find, which walks the zset in short steps, then removed
 * by its exact bytes: when it became due between the two (a worker's migration moved it to the
 * list), ZREM removes nothing and the cancel says so, rather than reaching into the ready list.
 */
import type { RedisQueue } from './RedisQueue.js';

export type CancelOutcome =
  | { cancelled: true; queue: string; uuid: string }
  /** Not among the queue's delayed jobs: `state` says where it was found instead, if anywhere. */
  | { cancelled: false; queue: string; uuid: string; state: 'ready' | 'reserved' | 'missing' };

/** Removes the delayed job with this uuid (or id) from `queue`'s `:delayed` (the queue's default when not named). */
export async function cancelDelayed(queue: RedisQueue, uuid: string, name?: string): Promise<CancelOutcome> {
  const queueName = name ?? queue.defaultQueue;
  const found = await queue.find(uuid, queueName);
  if (!found) return { cancelled: false, queue: queueName, uuid, state: 'missing' };
  if (found.state !== 'delayed') return { cancelled: false, queue: queueName, uuid, state: found.state };
  const removed = await queue.client.zrem(`${queue.key(queueName)}:delayed`, found.payload);
  // Zero: it became due (or was cancelled elsewhere) between the find and the remove.
  return removed > 0 ? { cancelled: true, queue: queueName, uuid } : { cancelled: false, queue: queueName, uuid, state: 'ready' };
}
