/**
 * Commands whose connection dropped before Redis answered. ioredis sends them again on the next
 * connection by default, and a push Redis had already run is then run twice (two copies of one
 * job). A producer's client turns that off (`autoResendUnfulfilledCommands: false`); ioredis then
 * drops those commands without settling them, so here they are settled with an error that says
 * the outcome is unknown. The push step is made safe to send again (push-once.lua), so dispatch
 * retries it and learns which.
 */
import type { Redis } from 'ioredis';
import type { RedisClient } from './scripts.js';

/** Redis may or may not have run the command: its connection dropped before the reply came. */
export class UnconfirmedCommandError extends Error {
  override name = 'UnconfirmedCommandError';
}

/** Whether Redis may have run a command that failed this way (no reply: a dropped connection, a timeout). */
export function outcomeUnknown(error: unknown): boolean {
  return error instanceof UnconfirmedCommandError || (error as Error | undefined)?.message === 'Command timed out';
}

interface CommandQueueOwner {
  commandQueue: { length: number };
  flushQueue(error: Error, options: { offlineQueue: boolean; commandQueue: boolean }): void;
}

/**
 * Settles, when a ready connection closes, every command it had sent and not had answered, with
 * an UnconfirmedCommandError; commands not sent yet (the offline queue) wait for the next
 * connection and go once. For a single-node client with autoResendUnfulfilledCommands off.
 */
export function settleUnansweredOnClose(client: RedisClient): void {
  if (client.isCluster) return;
  const node = client as Redis;
  // ioredis's own queue of sent commands, and its way to fail them (not in its typings).
  const internals = client as unknown as CommandQueueOwner;
  let ready = node.status === 'ready';
  node.on('ready', () => (ready = true));
  node.on('close', () => {
    if (!ready) return;
    ready = false;
    // At 'close' the sent commands are still in the queue ioredis would otherwise set aside.
    if (internals.commandQueue.length > 0)
      internals.flushQueue(
        new UnconfirmedCommandError('the connection to Redis dropped before it answered: the command may or may not have run'),
        { offlineQueue: false, commandQueue: true },
      );
  });
}
