/**
 * `lqb find ID [--queue=Q[,Q…]]`: where a job is, by the id or uuid dispatch printed (or
 * Laravel's JobQueued event gave): ready, delayed, reserved, or failed; one JSON line. Laravel's
 * queue keeps no index, so this looks through the queues' jobs (in Redis): an operator's lookup.
 */
import type { FoundJob } from '../connect/connect.js';
import { connectionFlags, connectionFrom, withLaravelQueue } from './connection.js';
import { UsageError, queueNames, type Command } from './command.js';
import { RedisQueue } from '../redis/index.js';
import { elsewhereHint, queuesElsewhere } from '../redis/elsewhere.js';

export const find: Command = {
  synopsis: 'lqb find ID',
  summary:
    'Says where a job is, by its id or uuid: {"state":"ready"|"delayed"|"reserved"|"failed",…} on one line; exit 1 when no queue holds it and it did not fail.',
  options: {
    queue: { type: 'string', value: 'Q[,Q…]', description: 'the queues to look through', default: "the connection's queue" },
    ...connectionFlags,
  },
  async run({ values, positionals, out }) {
    const [id, ...extra] = positionals;
    if (!id || extra.length) throw new UsageError('find takes one job ID or uuid');
    const connection = connectionFrom(values);
    const queues = queueNames(values.queue, connection.defaultQueue);
    return withLaravelQueue(connection, values, {}, async (queue) => {
      const found = await queue.find(id, { queues });
      if (!found) {
        // Not here: the job may wait under another prefix (the other default spelling, or any other).
        const elsewhere =
          queue.queue instanceof RedisQueue
            ? elsewhereHint(await queuesElsewhere(queue.queue.client, connection.prefix, queues), connection.prefix)
            : undefined;
        process.stderr.write(
          `lqb find: no job ${JSON.stringify(id)} on ${queues.join(', ')} or among the failed jobs: it ran and was deleted, or was never pushed${elsewhere === undefined ? '' : `; but ${elsewhere}`}\n`,
        );
        return 1;
      }
      out(JSON.stringify(readable(found)));
      return 0;
    });
  },
};

/**
 * The found job without its payload (`lqb decode` reads one), times as ISO strings; a moment past
 * what a Date holds (a delay beyond the year 275760, which Redis scores fine) as its UNIX seconds.
 */
function readable(found: FoundJob): Record<string, unknown> {
  const { payload: _payload, until, untilSeconds, ...facts } = found;
  if (!until) return facts;
  return { ...facts, until: Number.isNaN(until.getTime()) ? untilSeconds : until.toISOString() };
}
