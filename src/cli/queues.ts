/**
 * `lqb size`, `lqb clear` and `lqb restart`: looking at queues, emptying one, and telling
 * every worker (PHP and Node) to stop after its current job, as `queue:restart` does.
 */
import { RedisQueue } from '../redis/index.js';
import { QueueCache } from '../worker/index.js';
import { connectionFlags, connectionFrom, openCacheClient, openQueueClient } from './connection.js';
import { connectionName, queueNames, type Command } from './command.js';

const queueFlag = { queue: { type: 'string' } } as const;

export const size: Command = {
  usage: 'lqb size [--queue=Q[,Q…]] [--json] [--redis=URL] [--redis-ca=FILE] [--prefix=P] [--env=PATH]',
  options: { ...connectionFlags, ...queueFlag, json: { type: 'boolean' } },
  noArguments: true,
  async run({ values, out }) {
    const connection = connectionFrom(values);
    const client = await openQueueClient(connection);
    try {
      const queue = new RedisQueue(client);
      for (const name of queueNames(values.queue, connection.defaultQueue)) {
        const [ready, delayed, reserved] = await Promise.all([queue.readySize(name), queue.delayedSize(name), queue.reservedSize(name)]);
        // Queue::size: ready, delayed and reserved together; --json breaks it down.
        const total = ready + delayed + reserved;
        out(values.json ? JSON.stringify({ queue: name, size: total, ready, delayed, reserved }) : String(total));
      }
    } finally {
      client.disconnect();
    }
  },
};

export const clear: Command = {
  usage: 'lqb clear [CONNECTION] [--queue=Q] [--force] [--redis=URL] [--redis-ca=FILE] [--prefix=P] [--env=PATH]',
  // queue:clear's CONNECTION names a Redis connection, which here the flags give; its --force
  // (no production prompt to skip) is taken so the same command line works.
  options: { ...connectionFlags, ...queueFlag, force: { type: 'boolean' } },
  async run({ values, positionals, out }) {
    connectionName(positionals, 'clear');
    const connection = connectionFrom(values);
    const client = await openQueueClient(connection);
    try {
      const queue = new RedisQueue(client);
      for (const name of queueNames(values.queue, connection.defaultQueue)) out(`Cleared ${await queue.clear(name)} jobs from the [${name}] queue`);
    } finally {
      client.disconnect();
    }
  },
};

export const restart: Command = {
  usage: 'lqb restart [--redis=URL] [--redis-ca=FILE] [--prefix=P] [--env=PATH] [--cache-db=N] [--cache-prefix=P]',
  options: connectionFlags,
  noArguments: true,
  async run({ values, out }) {
    const connection = connectionFrom(values);
    const client = await openCacheClient(connection);
    try {
      await new QueueCache(client, connection.cachePrefix, connection.cacheSeparator).signalRestart();
      out('Broadcasting queue restart signal.');
    } finally {
      client.disconnect();
    }
  },
};
