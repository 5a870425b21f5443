/**
 * `lqb size`, `lqb clear` and `lqb restart`: looking at queues, emptying one, and telling
 * every worker (PHP and Node) to stop after its current job, as `queue:restart` does.
 */
import { bookkeepingFlags } from './bookkeeping.js';
import { connectionFlags, connectionFrom, connectionNamed, withCache, withQueue } from './connection.js';
import { connectionName, queueNames, type Command, type Options } from './command.js';

const queueFlag = {
  queue: { type: 'string', value: 'Q[,Q…]', description: 'the queues', default: "the connection's queue" },
} satisfies Options;

export const size: Command = {
  synopsis: 'lqb size',
  summary: "Prints each queue's name and size (`mail  3`): its ready, delayed and reserved jobs together, as Queue::size counts them.",
  options: {
    ...queueFlag,
    json: { type: 'boolean', description: 'one JSON line a queue: {"queue","size","ready","delayed","reserved"}' },
    ...connectionFlags,
  },
  noArguments: true,
  async run({ values, out }) {
    const connection = connectionFrom(values);
    await withQueue(connection, async (queue) => {
      const names = queueNames(values.queue, connection.defaultQueue);
      // Names padded to the longest, so the sizes line up in a column.
      const width = Math.max(...names.map((name) => name.length));
      for (const name of names) {
        const [ready, delayed, reserved] = await Promise.all([queue.readySize(name), queue.delayedSize(name), queue.reservedSize(name)]);
        // Queue::size: ready, delayed and reserved together; --json breaks it down.
        const total = ready + delayed + reserved;
        out(values.json ? JSON.stringify({ queue: name, size: total, ready, delayed, reserved }) : `${name.padEnd(width)}  ${total}`);
      }
    });
  },
};

export const clear: Command = {
  synopsis: 'lqb clear [CONNECTION]',
  summary:
    'Deletes every job of the queues, as php artisan queue:clear does. CONNECTION `redis` or `database` selects that driver; the flags say where it is.',
  // queue:clear's CONNECTION names a Redis connection, which here the flags give; its --force
  // (no production prompt to skip) is taken so the same command line works.
  options: {
    ...queueFlag,
    force: { type: 'boolean', description: 'taken as queue:clear takes it (there is no production prompt here)' },
    ...connectionFlags,
  },
  async run({ values, positionals, out }) {
    // `redis` or `database` selects that driver, as queue:clear's CONNECTION names the app's connection.
    const connection = connectionNamed(values, connectionName(positionals, 'clear'));
    await withQueue(connection, async (queue) => {
      for (const name of queueNames(values.queue, connection.defaultQueue))
        out(`Cleared ${await queue.clear(name)} jobs from the [${name}] queue`);
    });
  },
};

export const restart: Command = {
  synopsis: 'lqb restart',
  summary: "Tells every worker, PHP and Node, to exit after its current job, as php artisan queue:restart does (a key in the app's cache).",
  options: { 'cache-store': bookkeepingFlags['cache-store'], 'lock-db': bookkeepingFlags['lock-db'], ...connectionFlags },
  noArguments: true,
  async run({ values, out }) {
    const connection = connectionFrom(values);
    await withCache(connection, values, async (cache) => {
      await cache.signalRestart();
      out('Broadcasting queue restart signal.');
    });
  },
};
