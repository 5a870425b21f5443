/**
 * `lqb pause [CONNECTION:]QUEUE` and `lqb resume [CONNECTION:]QUEUE` (or `--all`), as artisan's
 * `queue:pause` / `queue:resume` (Laravel 12.40+; `--all` 13.25+): a switch in the app's cache
 * that PHP workers and `lqb work` read before reserving from a queue. The connection defaults to
 * `redis`, the connection `lqb work` is; the queue to `default`, as artisan's parseQueue does.
 */
import { bookkeepingFlags } from './bookkeeping.js';
import { appLaravel, connectionFlags, connectionFrom, withCache } from './connection.js';
import { UsageError, type Command } from './command.js';
import { atLeast, parseVersion } from '../worker/locks/index.js';

/** Queue::pause and resume, with the switch workers read per queue, came in 12.40; pauseAll and its switch in 13.25. */
const PAUSE_SINCE = [12, 40] as const;
const PAUSE_ALL_SINCE = [13, 25] as const;

/** Thrown when the app's Laravel has no such switch: writing it would say what its workers never read. */
export class NoSuchSwitchError extends Error {
  override name = 'NoSuchSwitchError';
}

/**
 * What may be said of a pause the app's workers read: `--all` is refused below 13.25 (its
 * workers would go on, and only Node's stop); a queue's switch below 12.40 is written for
 * Node's workers, with a line that PHP's read none. An unknown version is said, not guessed.
 */
export function pauseNotice(action: 'pause' | 'resume', all: boolean, laravel: string | undefined): string | undefined {
  const version = parseVersion(laravel);
  if (!version) {
    return `the app's Laravel version is unknown (give --env beside its vendor/, or --laravel): PHP's workers read ${all ? 'the --all switch from 13.25' : "a queue's switch from 12.40"}, lqb work reads it whatever the version`;
  }
  if (all && !atLeast(version, ...PAUSE_ALL_SINCE)) {
    throw new NoSuchSwitchError(
      `--all was not ${action === 'pause' ? 'paused' : 'resumed'}: Laravel ${laravel}'s workers read no --all switch (Queue::pauseAll came in 13.25), so PHP's workers would go on and only lqb work would ${action === 'pause' ? 'stop' : 'resume'}; ${action} each queue instead (lqb ${action} QUEUE${atLeast(version, ...PAUSE_SINCE) ? '' : ", which Laravel's workers read from 12.40"})`,
    );
  }
  if (!all && !atLeast(version, ...PAUSE_SINCE)) {
    return `Laravel ${laravel}'s workers read no pause switch (queue:${action} came in 12.40): PHP's workers go on taking this queue's jobs; only lqb work ${action === 'pause' ? 'stops' : 'resumes'}`;
  }
  return undefined;
}

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
      const notice = pauseNotice(action, all, appLaravel(values));
      await withCache(connection, values, async (cache) => {
        if (all) {
          await cache.pauseAll(action === 'pause');
          out(`Job processing on all queues across all connections has been ${done}.`);
          if (notice) process.stderr.write(`lqb ${action}: ${notice}\n`);
          return;
        }
        // The connection defaults to the one the flags or QUEUE_CONNECTION name, as artisan's to queue.default.
        const [name, queue] = parseQueueArgument(positionals[0]!, connection.queueConnection);
        if (action === 'pause') await cache.pause(name, queue);
        else await cache.resume(name, queue);
        out(`Job processing on queue [${name}:${queue}] has been ${done}.`);
        if (notice) process.stderr.write(`lqb ${action}: ${notice}\n`);
      });
    },
  };
}

export const pause = pauseCommand('pause');
export const resume = pauseCommand('resume');
