/**
 * `lqb work`: runs jobs with Node handlers, as `php artisan queue:work` runs them with PHP.
 * SIGTERM and SIGINT finish the jobs in hand, then exit 0; SIGUSR2 pauses, SIGCONT resumes.
 */
import { Encrypter, supportsCipher } from '../laravel/index.js';
import { RedisQueue, type RedisClient } from '../redis/index.js';
import { QueueCache, Worker, loadHandlers, type DatabaseUuidFailedJobProvider, type WorkerOptions } from '../worker/index.js';
import { cacheClient, connectionFlags, connectionFrom, failedJobStore, queueClient, type Connection } from './connection.js';
import { formatEvent } from './output.js';
import { shapesFlag, shapesFrom } from './shapes-file.js';
import { bookkeepingFlags, bookkeepingFrom, type Bookkeeping } from './bookkeeping.js';
import { redactSecrets, redactUrl } from '../connect/redact.js';
import { UsageError, backoffFlag, connectionName, countFlag, numberFlag, queueNames, workBackoff, type Command } from './command.js';

export const work: Command = {
  usage:
    'lqb work [CONNECTION] --handlers=FILE [--queue=a,b] [--once] [--stop-when-empty] [--tries=1] [--backoff=0[,S…]] [--timeout=60] [--sleep=3] ' +
    '[--max-jobs=0] [--max-time=0] [--memory=128] [--rest=0] [--retry-after=90] [--block-for=S] [--concurrency=1] [--share] [--json] ' +
    '[--shapes=FILE] [--redis=URL] [--redis-ca=FILE] [--prefix=P] [--default-queue=default] [--env=PATH] [--failed-db=URL] [--key=APP_KEY] [--cipher=AES-256-CBC] [--cache-store=redis|database] [--lock-db=URL] [--lock-table=cache_locks] [--batch-db=URL] [--batch-table=job_batches]   (also as in queue:work: --name, --delay, --force, --daemon)',
  options: {
    ...connectionFlags,
    ...shapesFlag,
    ...bookkeepingFlags,
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
    const options = workerOptions(values, connection.defaultQueue, connectionArgument);
    const retryAfter = values['retry-after'] === 'null' ? null : numberFlag(values['retry-after'], 'retry-after', 90, 0);
    const blockFor = typeof values['block-for'] === 'string' ? numberFlag(values['block-for'], 'block-for', 0, 0) : null;
    const encrypter = encrypterFor(values, connection);
    const bookkeepingFor = bookkeepingFrom(values, connection);
    const handlers = await loadHandlers(values.handlers);
    const shapes = shapesFrom(values);
    // Everything a worker needs is checked before it opens Redis, and what it opened is closed
    // on any error: an open client would keep the process alive after the error was printed.
    const failer = await reachableFailedJobStore(connection);
    const json = values.json === true;
    const signals: [NodeJS.Signals, () => void][] = [];
    let client: RedisClient | undefined;
    let cache: RedisClient | undefined;
    let queue: RedisQueue | undefined;
    let bookkeeping: Bookkeeping | undefined;
    try {
      // Inside the try: a --redis-ca that cannot be read throws here, with the failer open.
      client = queueClient(connection);
      cache = cacheClient(connection);
      // A chained job naming no queue goes to the connection's queue, as Laravel's dispatch sends it,
      // not to the first queue this worker happens to read.
      queue = new RedisQueue(client, { retryAfter, blockFor, defaultQueue: connection.defaultQueue });
      bookkeeping = bookkeepingFor(cache);
      const worker = new Worker(queue, handlers, options, {
        failer,
        locks: bookkeeping.locks,
        batches: bookkeeping.batches,
        cache: new QueueCache(cache, connection.cachePrefix, connection.cacheSeparator),
        encrypter,
        ...(shapes ? { shapes } : {}),
        // A job's error may quote a URL or a key the handler was given; the log shows none.
        log: (event) => out(redactSecrets(formatEvent(event, json))),
      });
      signals.push(['SIGTERM', () => void worker.stop({ reason: 'signal' })], ['SIGINT', () => void worker.stop({ reason: 'signal' })], ['SIGUSR2', () => worker.pause()], ['SIGCONT', () => worker.resume()]);
      for (const [signal, handler] of signals) process.on(signal, handler);
      const stop = await worker.run();
      return stop.status;
    } finally {
      for (const [signal, handler] of signals) process.off(signal, handler);
      await queue?.close();
      await failer.close();
      await bookkeeping?.close();
      client?.disconnect();
      cache?.disconnect();
    }
  },
};

type Flags = Parameters<Command['run']>[0]['values'];

/** queue:work's flags as WorkerOptions, each a usage error naming the flag when malformed. */
function workerOptions(values: Flags, defaultQueue: string, connectionArgument: string | undefined): Partial<WorkerOptions> {
  const num = (name: string, fallback: number, min = 0) => numberFlag(values[name], name, fallback, min);
  // --sleep, --rest and --max-time may be fractions, as Laravel compares and sleeps them.
  const count = (name: string, fallback: number, min = 0) => countFlag(values[name], name, fallback, min);
  const backoffGiven = workBackoff(values.backoff, values.delay);
  return {
    queues: queueNames(values.queue, defaultQueue),
    once: values.once === true,
    stopWhenEmpty: values['stop-when-empty'] === true,
    tries: count('tries', 1),
    // 8.x's --delay is the old name of --backoff; given both, artisan takes the larger.
    backoff: backoffFlag(backoffGiven.value, backoffGiven.name)!,
    timeout: count('timeout', 60),
    sleep: num('sleep', 3),
    maxJobs: count('max-jobs', 0),
    maxTime: num('max-time', 0),
    memory: count('memory', 128),
    rest: num('rest', 0),
    concurrency: count('concurrency', 1, 1),
    share: values.share === true,
    shareDelay: num('share-delay', 1),
    // The connection's name is what failed_jobs records, and what queue:retry pushes back to.
    ...(connectionArgument !== undefined ? { connectionName: connectionArgument } : {}),
  };
}

/**
 * The Encrypter for encrypted jobs, when there is a key. A key of the wrong length, or a cipher
 * Laravel does not have, is a usage error now (even with no key yet to use it), not a failure
 * of each encrypted job later. The message names the setting, never the key.
 */
function encrypterFor(values: Flags, connection: Connection): Encrypter | undefined {
  const cipherFrom = values.cipher === undefined ? 'APP_CIPHER' : '--cipher';
  if (!supportsCipher(connection.cipher)) throw new UsageError(`${cipherFrom}: unsupported cipher ${JSON.stringify(connection.cipher)} (supported: AES-128-CBC, AES-256-CBC, AES-128-GCM, AES-256-GCM)`);
  if (!connection.appKey) return undefined;
  try {
    return new Encrypter(connection.appKey, connection.cipher);
  } catch (error) {
    throw new UsageError(`${values.key === undefined ? 'APP_KEY' : '--key'}: ${(error as Error).message}`);
  }
}

/**
 * The failed-jobs store, once it answers: a database that cannot be reached ends the worker
 * at start with the cause (exit 1), rather than losing its first failed job to it.
 */
async function reachableFailedJobStore(connection: Connection): Promise<DatabaseUuidFailedJobProvider> {
  const failer = failedJobStore(connection);
  try {
    await failer.check();
    return failer;
  } catch (error) {
    await failer.close();
    throw new Error(`the failed-jobs database ${redactUrl(connection.failedDb)} cannot be reached: ${(error as Error).message.split('\n')[0]}`);
  }
}
