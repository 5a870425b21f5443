/**
 * `lqb cancel UUID [--queue=Q]`: removes a delayed job from `queues:Q:delayed` (on the database
 * connection, its row from the jobs table) before it is due,
 * which Laravel itself cannot do. Exit 1 when the queue holds no delayed job of that uuid (it is
 * ready or reserved already, or gone), naming where it is.
 */
import { RedisQueue } from '../redis/index.js';
import { cancelDelayed, type CancelOutcome } from '../redis/cancel.js';
import { databaseConfig, openDatabase } from '../database/index.js';
import { DatabaseQueueSource } from '../ui/DatabaseQueueSource.js';
import { connectionFlags, connectionFrom, withQueueClient } from './connection.js';
import { UsageError, type Command } from './command.js';

export const cancel: Command = {
  synopsis: 'lqb cancel UUID',
  summary:
    "Cancels a delayed job: removes it from the queue's :delayed set (on the database connection, deletes its row while still delayed) before it is due (Laravel has no such command).",
  options: {
    queue: { type: 'string', value: 'Q', description: 'the queue the job is delayed on', default: "the connection's queue" },
    ...connectionFlags,
  },
  async run({ values, positionals, out }) {
    if (positionals.length !== 1 || !positionals[0]) throw new UsageError('cancel takes one job UUID');
    const connection = connectionFrom(values);
    const name = typeof values.queue === 'string' && values.queue !== '' ? values.queue : connection.defaultQueue;
    const report = (outcome: CancelOutcome) => {
      if (outcome.cancelled) {
        out(`The delayed job [${outcome.uuid}] on queue [${name}] has been cancelled.`);
        return 0;
      }
      const where = outcome.state === 'missing' ? 'no job of that uuid is on it' : `the job is ${outcome.state} already`;
      process.stderr.write(`lqb cancel: no delayed job [${outcome.uuid}] on queue [${name}]: ${where}\n`);
      return 1;
    };
    if (connection.queueConnection === 'database') {
      if (connection.queueDb === undefined)
        throw new UsageError('the database connection needs --queue-db (LQB_QUEUE_DB) or an --env with DB_*');
      // The row deleted only while it is still delayed and unreserved, in one statement.
      const source = new DatabaseQueueSource(openDatabase(databaseConfig(connection.queueDb)), { table: connection.jobsTable });
      try {
        return report(await source.cancel(name, positionals[0]));
      } finally {
        await source.close();
      }
    }
    return withQueueClient(connection, async (client) =>
      report(await cancelDelayed(new RedisQueue(client, { defaultQueue: connection.defaultQueue }), positionals[0]!, name)),
    );
  },
};
