/**
 * `lqb cancel UUID [--queue=Q]`: removes a delayed job from `queues:Q:delayed` before it is due,
 * which Laravel itself cannot do. Exit 1 when the queue holds no delayed job of that uuid (it is
 * ready or reserved already, or gone), naming where it is.
 */
import { RedisQueue } from '../redis/index.js';
import { cancelDelayed } from '../redis/cancel.js';
import { connectionFlags, redisConnectionFrom, withQueueClient } from './connection.js';
import { UsageError, type Command } from './command.js';

export const cancel: Command = {
  synopsis: 'lqb cancel UUID',
  summary: "Cancels a delayed job: removes it from the queue's :delayed set before it is due (Laravel has no such command).",
  options: {
    queue: { type: 'string', value: 'Q', description: 'the queue the job is delayed on', default: "the connection's queue" },
    ...connectionFlags,
  },
  async run({ values, positionals, out }) {
    if (positionals.length !== 1 || !positionals[0]) throw new UsageError('cancel takes one job UUID');
    const connection = redisConnectionFrom(values, 'cancel');
    const name = typeof values.queue === 'string' && values.queue !== '' ? values.queue : connection.defaultQueue;
    return withQueueClient(connection, async (client) => {
      const outcome = await cancelDelayed(new RedisQueue(client, { defaultQueue: connection.defaultQueue }), positionals[0]!, name);
      if (outcome.cancelled) {
        out(`The delayed job [${outcome.uuid}] on queue [${name}] has been cancelled.`);
        return 0;
      }
      const where = outcome.state === 'missing' ? 'no job of that uuid is on it' : `the job is ${outcome.state} already`;
      process.stderr.write(`lqb cancel: no delayed job [${outcome.uuid}] on queue [${name}]: ${where}\n`);
      return 1;
    });
  },
};
