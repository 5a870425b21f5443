/**
 * `lqb work`: runs jobs with Node handlers, as `php artisan queue:work` runs them with PHP.
 * SIGTERM and SIGINT finish the jobs in hand, then exit 0; SIGUSR2 pauses, SIGCONT resumes.
 */
import { Encrypter } from '../laravel/index.js';
import { RedisQueue } from '../redis/index.js';
import { DatabaseUuidFailedJobProvider, QueueCache, Worker, loadHandlers, type WorkerOptions } from '../worker/index.js';
import { cacheClient, connectionFlags, connectionFrom, queueClient } from './connection.js';
import { formatEvent } from './output.js';
import { UsageError, backoffFlag, connectionName, countFlag, numberFlag, queueNames, workBackoff, type Command } from './command.js';

export const work: Command = {
  usage:
    'lqb work [CONNECTION] --handlers=FILE [--queue=a,b] [--once] [--stop-when-empty] [--tries=1] [--backoff=0[,S…]] [--timeout=60] [--sleep=3] ' +
    '[--max-jobs=0] [--max-time=0] [--memory=128] [--rest=0] [--retry-after=90] [--block-for=S] [--concurrency=1] [--share] [--json] ' +
    '[--redis=URL] [--redis-ca=FILE] [--prefix=P] [--default-queue=default] [--env=PATH] [--failed-db=URL] [--key=APP_KEY]   (also as in queue:work: --name, --delay, --force, --daemon)',
  options: {
    ...connectionFlags,
    handlers: { type: 'string' },
    queue: { type: 'string' },
    once: { type: 'boolean' },
    'stop-when-empty': { type: 'boolean' },
    tries: { type: 'string' },
    backoff: { type: 'string' },
    timeout: { type: 'string' },
    sleep: { type: 'string' },
    'max-jobs': { type: 'string' },
    'max-time': { type: 'string' },
    memory: { type: 'string' },
    rest: { type: 'string' },
    'retry-after': { type: 'string' },
    'block-for': { type: 'string' },
    concurrency: { type: 'string' },
    share: { type: 'boolean' },
    'share-delay': { type: 'string' },
    json: { type: 'boolean' },
    // queue:work's own, so a command line copied from a Laravel deployment runs as it is:
    // --delay is 8.x's old name for --backoff; there is no maintenance mode or daemon to choose.
    name: { type: 'string' },
    delay: { type: 'string' },
    force: { type: 'boolean' },
    daemon: { type: 'boolean' },
  },
  async run({ values, positionals, out }) {
    if (typeof values.handlers !== 'string') throw new UsageError('--handlers=FILE is required: the module mapping job classes to handlers');
    const connectionArgument = connectionName(positionals, 'work');
    const connection = connectionFrom(values);
    const handlers = await loadHandlers(values.handlers);
    const num = (name: string, fallback: number, min = 0) => numberFlag(values[name], name, fallback, min);
    // --sleep, --rest and --max-time may be fractions, as Laravel compares and sleeps them.
    const count = (name: string, fallback: number, min = 0) => countFlag(values[name], name, fallback, min);
    const backoffGiven = workBackoff(values.backoff, values.delay);
    const options: Partial<WorkerOptions> = {
      queues: queueNames(values.queue, connection.defaultQueue),
      once: values.once === true,
      stopWhenEmpty: values['stop-when-empty'] === true,
      tries: count('tries', 1),
      // 8.x's --delay is the old name of --backoff; given both, artisan takes the larger.
      backoff: backoffFlag(backoffGiven.value, backoffGiven.name)!,
      timeout: count('timeout', 60),
      sleep: num('sleep', 3),
      maxJobs: count('max-jobs', 0),
      maxTime: num('max-time', 0),
      memory: count('memory', 128, 1),
      rest: num('rest', 0),
      concurrency: count('concurrency', 1, 1),
      share: values.share === true,
      shareDelay: num('share-delay', 1),
      // The connection's name is what failed_jobs records, and what queue:retry pushes back to.
      ...(connectionArgument !== undefined ? { connectionName: connectionArgument } : {}),
    };
    const client = queueClient(connection);
    const cache = cacheClient(connection);
    const retryAfter = values['retry-after'] === 'null' ? null : num('retry-after', 90);
    const blockFor = typeof values['block-for'] === 'string' ? num('block-for', 0) : null;
    // A chained job naming no queue goes to the connection's queue, as Laravel's dispatch sends it,
    // not to the first queue this worker happens to read.
    const queue = new RedisQueue(client, { retryAfter, blockFor, defaultQueue: connection.defaultQueue });
    const failer = DatabaseUuidFailedJobProvider.fromUrl(connection.failedDb, connection.failedTable);
    const json = values.json === true;
    const worker = new Worker(queue, handlers, options, {
      failer,
      cache: new QueueCache(cache, connection.cachePrefix),
      encrypter: connection.appKey ? new Encrypter(connection.appKey, connection.cipher) : undefined,
      log: (event) => out(formatEvent(event, json)),
    });
    const signals: [NodeJS.Signals, () => void][] = [
      ['SIGTERM', () => worker.stop()],
      ['SIGINT', () => worker.stop()],
      ['SIGUSR2', () => worker.pause()],
      ['SIGCONT', () => worker.resume()],
    ];
    for (const [signal, handler] of signals) process.on(signal, handler);
    try {
      const stop = await worker.run();
      return stop.status;
    } finally {
      for (const [signal, handler] of signals) process.off(signal, handler);
      await queue.close();
      await failer.close();
      client.disconnect();
      cache.disconnect();
    }
  },
};
