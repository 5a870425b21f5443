/**
 * `lqb size`, `lqb clear` and `lqb restart`: looking at queues, emptying one, and telling
 * every worker (PHP and Node) to stop after its current job, as `queue:restart` does.
 */
import { bookkeepingFlags } from './bookkeeping.js';
import { connectionFlags, connectionFrom, connectionNamed, withCache, withQueue } from './connection.js';
import { connectionName, queueNames, UsageError, type Command, type Options } from './command.js';
import { loadHandlersModule } from './handlers-module.js';
import { takenClasses } from '../worker/handlers.js';
import type { Queue } from '../queue/contract.js';
import { RedisQueue } from '../redis/index.js';
import { elsewhereLine, queuesElsewhere } from '../redis/elsewhere.js';

const queueFlag = {
  queue: { type: 'string', value: 'Q[,Q…]', description: 'the queues', default: "the connection's queue" },
} satisfies Options;

export const size: Command = {
  synopsis: 'lqb size',
  summary:
    "Prints each queue's name and size (`mail  3`): its ready, delayed and reserved jobs together, as Queue::size counts them; with --by-class, a line a class under it.",
  options: {
    ...queueFlag,
    json: {
      type: 'boolean',
      description:
        'one JSON line a queue: {"queue","size","ready","delayed","reserved"}; with --by-class one a class: {"queue","class","ready","delayed","reserved","taken"}',
    },
    'by-class': {
      type: 'boolean',
      description:
        "each queue's jobs by class (the payload's displayName), ready, delayed and reserved, read in pages without taking anything (docs/sharing.md)",
    },
    handlers: {
      type: 'string',
      value: 'FILE',
      description: 'with --by-class, say of each class whether a worker with these handlers takes it (share on), or leaves it to PHP',
    },
    ...connectionFlags,
  },
  noArguments: true,
  async run({ values, out }) {
    const connection = connectionFrom(values);
    if (values.handlers !== undefined && !values['by-class']) throw new UsageError('--handlers goes with --by-class');
    const takes = values.handlers === undefined ? undefined : new Set(takenClasses(await loadHandlersModule(String(values.handlers))));
    await withQueue(connection, async (queue) => {
      const names = queueNames(values.queue, connection.defaultQueue);
      if (values['by-class']) return sizeByClass(queue, names, takes, Boolean(values.json), out);
      // Names padded to the longest, so the sizes line up in a column.
      const width = Math.max(...names.map((name) => name.length));
      let all = 0;
      for (const name of names) {
        const [ready, delayed, reserved] = await Promise.all([queue.readySize(name), queue.delayedSize(name), queue.reservedSize(name)]);
        // Queue::size: ready, delayed and reserved together; --json breaks it down.
        const total = ready + delayed + reserved;
        all += total;
        out(values.json ? JSON.stringify({ queue: name, size: total, ready, delayed, reserved }) : `${name.padEnd(width)}  ${total}`);
      }
      // Nothing here: the jobs may wait under another prefix (the other default spelling of a 12 app's).
      if (all === 0 && queue instanceof RedisQueue) {
        const line = elsewhereLine(await queuesElsewhere(queue.client, connection.prefix, names), connection.prefix);
        if (line) process.stderr.write(`lqb size: ${line}\n`);
      }
    });
  },
};

/** `lqb size --by-class`: each queue's total, then a line a class, most jobs first. */
async function sizeByClass(
  queue: Queue,
  names: string[],
  takes: ReadonlySet<string> | undefined,
  json: boolean,
  out: (line: string) => void,
): Promise<void> {
  for (const name of names) {
    const counts = await queue.countByClass(name, takes);
    if (json) {
      for (const count of counts) out(JSON.stringify({ queue: name, ...count }));
      continue;
    }
    const total = counts.reduce((sum, c) => sum + c.ready + c.delayed + c.reserved, 0);
    out(`${name}  ${total}`);
    const width = Math.max(0, ...counts.map((c) => c.class.length));
    for (const c of counts) {
      const who = c.taken === undefined ? '' : c.taken ? '  Node takes it' : '  left to PHP';
      out(`  ${c.class.padEnd(width)}  ready ${c.ready}, delayed ${c.delayed}, reserved ${c.reserved}${who}`);
    }
  }
}

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
