/**
 * `lqb pause [CONNECTION:]QUEUE` and `lqb resume [CONNECTION:]QUEUE` (or `--all`), as artisan's
 * `queue:pause` / `queue:resume` (Laravel 12.40+; `--all` 13.25+): a switch in the app's cache
 * that PHP workers and `lqb work` read before reserving from a queue. The connection defaults to
 * `redis`, the connection `lqb work` is; the queue to `default`, as artisan's parseQueue does.
 */
import { bookkeepingFlags } from './bookkeeping.js';
import { connectionFlags, connectionFrom, withCache } from './connection.js';
import { UsageError, type Command } from './command.js';

/** `[CONNECTION:]QUEUE`, split at the first colon as Laravel's ParsesQueue does. */
export function parseQueueArgument(argument: string, defaultConnection = 'redis'): [connection: string, queue: string] {
  const colon = argument.indexOf(':');
  const connection = colon < 0 ? defaultConnection : argument.slice(0, colon);
  const queue = colon < 0 ? argument : argument.slice(colon + 1);
  return [connection || defaultConnection, queue || 'default'];
}

function pauseCommand(action: 'pause' | 'resume'): Command {
  const done = action === 'pause' ? 'paused' : 'resumed';
  return {
    synopsis: `lqb ${action} [CONNECTION:]QUEUE | --all`,
    summary: `${action === 'pause' ? 'Pauses' : 'Resumes'} a queue for PHP workers and lqb work alike, as php artisan queue:${action} does (12.40+; --all 13.25+). CONNECTION defaults to the queue connection (redis unless --connection or QUEUE_CONNECTION says), QUEUE to default.`,
    options: {
      all: { type: 'boolean', inSynopsis: true, description: `${action} every queue of every connection` },
      'cache-store': bookkeepingFlags['cache-store'],
      'lock-db': bookkeepingFlags['lock-db'],
      ...connectionFlags,
    },
    async run({ values, positionals, out }) {
      if (positionals.length > 1) throw new UsageError(`${action} takes one [CONNECTION:]QUEUE, not ${positionals.length} arguments`);
      const all = values.all === true;
      if (all && positionals.length) throw new UsageError(`${action} takes a QUEUE or --all, not both`);
      if (!all && !positionals.length) throw new UsageError('A queue name is required unless the --all option is used.');
      const connection = connectionFrom(values);
      await withCache(connection, values, async (cache) => {
        if (all) {
          await cache.pauseAll(action === 'pause');
          out(`Job processing on all queues across all connections has been ${done}.`);
          return;
        }
        // The connection defaults to the one the flags or QUEUE_CONNECTION name, as artisan's to queue.default.
        const [name, queue] = parseQueueArgument(positionals[0]!, connection.queueConnection);
        if (action === 'pause') await cache.pause(name, queue);
        else await cache.resume(name, queue);
        out(`Job processing on queue [${name}:${queue}] has been ${done}.`);
      });
    },
  };
}

export const pause = pauseCommand('pause');
export const resume = pauseCommand('resume');
