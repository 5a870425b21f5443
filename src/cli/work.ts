/**
 * `lqb work`: runs jobs with Node handlers, as `php artisan queue:work` runs them with PHP.
 * SIGTERM and SIGINT finish the jobs in hand (each by its timeout at the latest, whatever its
 * handler does), then exit 0; SIGUSR2 pauses, SIGCONT resumes.
 * A handler that blocks the event loop past its timeout ends the process (the watchdog, SIGKILL).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DatabaseUuidFailedJobProvider, WorkerEvent, WorkerOptions } from '../worker/index.js';
import { asUsage, connectionFlags, connectionNamed, encrypterFrom, failedJobStore, type Connection } from './connection.js';
import { buildWorker, type BuiltWorker } from '../connect/buildWorker.js';
import { handlerKeysProblem } from '../worker/handlerKeys.js';
import { formatEvent } from './output.js';
import { loadHandlersModule } from './handlers-module.js';
import { parseTake } from '../queue/take.js';
import { takenClasses } from '../worker/handlers.js';
import { sandboxedHandlers, type SandboxedHandlers } from '../worker/sandbox/pool.js';
import { shapesFlag, shapesFrom } from './shapes-file.js';
import { bookkeepingFlags, bookkeepingFrom } from './bookkeeping.js';
import { appLaravel, appLaravelOnlyGiven } from './connection.js';
import { horizonFrom, recordFlags } from './horizon.js';
import { redactSecrets, redactUrl } from '../connect/redact.js';
import { UsageError, backoffFlag, connectionName, countFlag, numberFlag, queueNames, workBackoff, type Command } from './command.js';

export const work: Command = {
  synopsis: 'lqb work [CONNECTION]',
  summary:
    'Runs jobs with Node handlers, as php artisan queue:work runs them with PHP. CONNECTION is the name failed_jobs records;\n' +
    '`redis` or `database` also selects that driver (`lqb work database`, as queue:work database), else --connection or QUEUE_CONNECTION does.\n' +
    'SIGTERM and SIGINT finish the jobs in hand (each by its timeout at the latest, whatever its handler does), then exit 0; SIGUSR2 pauses, SIGCONT resumes.\n' +
    'The queues are taken to be shared with PHP workers: a job with no Node handler is never taken, left in its place for them (--no-share takes and fails it).\n' +
    'One line on standard error at start says where it reads (Redis, prefix, queues), the handlers, and what becomes of such jobs.\n' +
    "A handler that blocks the event loop past its timeout ends the process by SIGKILL, as Laravel's timeout ends queue:work.",
  options: {
    handlers: {
      type: 'string',
      value: 'FILE',
      required: true,
      description:
        'the module whose default export maps job classes (or Listener@method) to handlers: .js, .mjs, .cjs, or .ts/.mts/.cts through tsx',
    },
    queue: { type: 'string', value: 'a,b', description: 'the queues to work, in order', default: "the connection's queue" },
    once: { type: 'boolean', description: 'work one job (or find none), then exit' },
    'stop-when-empty': { type: 'boolean', description: 'exit once the queues are empty' },
    tries: {
      type: 'string',
      value: 'N',
      description: 'attempts before a job is failed, when its payload sets none (0: no limit)',
      default: '1',
    },
    backoff: {
      type: 'string',
      value: 'S[,S…]',
      description: 'seconds before a released job is retried, per attempt, the last repeating, when its payload sets none',
      default: '0',
    },
    timeout: { type: 'string', value: 'S', description: 'seconds a job may run, when its payload sets none', default: '60' },
    sleep: { type: 'string', value: 'S', description: 'seconds to sleep when no job is there', default: '3' },
    'max-jobs': { type: 'string', value: 'N', description: 'exit after this many jobs (0: no limit)', default: '0' },
    'max-time': { type: 'string', value: 'S', description: 'exit after this many seconds (0: no limit)', default: '0' },
    memory: {
      type: 'string',
      value: 'MB',
      description: 'exit 12 once the live JS heaps and Buffers, sandbox threads included, reach this (0: no limit)',
      default: '128',
    },
    rest: { type: 'string', value: 'S', description: 'seconds to rest after each job', default: '0' },
    'retry-after': {
      type: 'string',
      value: 'S',
      description: "seconds a reserved job is held before another worker may take it (Laravel's retry_after; null: never)",
      default: '90',
    },
    'block-for': {
      type: 'string',
      value: 'S',
      description: "seconds to wait on Redis for a job (Laravel's block_for; the database connection has none)",
      default: 'none: poll',
    },
    concurrency: { type: 'string', value: 'N', description: 'jobs run at once in this process', default: '1' },
    sandbox: {
      type: 'boolean',
      description:
        'run the handlers in a pool of worker threads, one per --concurrency slot, so CPU-bound handlers block neither the other jobs nor the renewals; a job past its timeout ends its thread, not the process (docs/speed.md has the cost per job)',
    },
    share: {
      type: 'boolean',
      description:
        'the queues are shared with PHP workers (the default): on Redis only jobs of the classes with a Node handler are taken, the others left untouched in place (docs/sharing.md); a job taken that Node cannot read, or one whose PHP callbacks must run, is given back for PHP',
    },
    'no-share': {
      type: 'boolean',
      description:
        'no PHP worker reads these queues: every job is taken, and such jobs are failed into failed_jobs with the reason instead',
    },
    'share-delay': { type: 'string', value: 'S', description: 'seconds before a job given back is visible again', default: '1' },
    take: {
      type: 'string',
      value: 'CLASS=P%',
      multiple: true,
      description:
        "a canary share (repeatable): of that class's jobs Node takes P% and leaves the rest on the queue for PHP, each job decided by its uuid; the class needs a handler (docs/sharing.md)",
    },
    json: { type: 'boolean', description: 'log one JSON object a line instead of text' },
    quiet: {
      type: 'boolean',
      description: "no line per job (queue:work's --quiet); failures, timeouts, warnings and errors are still said",
    },
    'no-record': {
      type: 'boolean',
      description:
        "keep no record of the jobs run (by default the worker keeps, beside its queue, per minute the jobs each class completed and failed and their runtime for 24 h, the latest 1,000 completed, and its heartbeat: Redis's lqb:* keys under the app's prefix, or the lqb_* tables of a database queue's database; see docs/worker.md), which the dashboard reads",
    },
    ...shapesFlag,
    // queue:work's own, so a command line copied from a Laravel deployment runs as it is:
    // --delay is 8.x's old name for --backoff; there is no maintenance mode or daemon to choose.
    name: { type: 'string', value: 'NAME', group: 'Taken as queue:work takes them', description: "the worker's name (no effect here)" },
    delay: {
      type: 'string',
      value: 'S',
      group: 'Taken as queue:work takes them',
      description: "Laravel 8's old name for --backoff; given both, the larger wins",
    },
    force: {
      type: 'boolean',
      group: 'Taken as queue:work takes them',
      description: 'run in maintenance mode (there is none here: no effect)',
    },
    daemon: { type: 'boolean', group: 'Taken as queue:work takes them', description: "no effect (queue:work's old flag)" },
    ...bookkeepingFlags,
    ...recordFlags,
    ...connectionFlags,
  },
  async run({ values, positionals, out }) {
    if (typeof values.handlers !== 'string')
      throw new UsageError('--handlers=FILE is required: the module mapping job classes to handlers');
    if (values.share === true && values['no-share'] === true) throw new UsageError('--share and --no-share say opposite things: give one');
    if (values['no-share'] === true && Array.isArray(values.take) && values.take.length > 0)
      throw new UsageError('--take shares a class with PHP, and --no-share takes every job: give one');
    const connectionArgument = connectionName(positionals, 'work');
    const connection = connectionNamed(values, connectionArgument);
    // failed_jobs records the connection's name: the one given, else the driver's (queue:work's default connection).
    const options = workerOptions(values, connection.defaultQueue, connectionArgument ?? connection.queueConnection);
    const retryAfter = values['retry-after'] === 'null' ? null : numberFlag(values['retry-after'], 'retry-after', 90, 0);
    const blockFor = typeof values['block-for'] === 'string' ? numberFlag(values['block-for'], 'block-for', 0, 0) : null;
    const encrypter = encrypterFrom(values, connection);
    const bookkeeping = bookkeepingFrom(values, connection);
    const sandbox = values.sandbox === true ? await sandboxFor(values.handlers, options.concurrency ?? 1, options.memory ?? 0) : undefined;
    const handlers = sandbox ? sandbox.handlers : await loadHandlersModule(values.handlers);
    const keyProblem = handlerKeysProblem(Object.keys(handlers));
    if (keyProblem) throw new UsageError(`${values.handlers}: ${keyProblem}`);
    const unhandled = Object.keys(options.take ?? {}).filter((className) => !takenClasses(handlers).includes(className));
    if (unhandled.length > 0)
      throw new UsageError(
        `--take: ${unhandled.join(', ')} ${unhandled.length === 1 ? 'has' : 'have'} no handler in ${values.handlers}: a share is of a class the worker handles`,
      );
    const shapes = shapesFrom(values);
    const horizon = asUsage(() => horizonFrom(values));
    // Everything a worker needs is checked before it opens Redis, and what it opened is closed
    // on any error: an open client would keep the process alive after the error was printed.
    const failer = await reachableFailedJobStore(connection);
    const json = values.json === true;
    const quiet = values.quiet === true;
    const signals: [NodeJS.Signals, () => void][] = [];
    let built: BuiltWorker | undefined;
    try {
      // Inside the try: a --redis-ca that cannot be read throws here, with the failer open.
      const laravel = appLaravel(values);
      built = asUsage(() =>
        buildWorker({
          settings: connection,
          handlers,
          options,
          retryAfter,
          blockFor,
          bookkeeping,
          failer,
          ...(encrypter ? { encrypter } : {}),
          ...(shapes ? { shapes } : {}),
          ...(laravel !== undefined ? { laravel, ...(appLaravelOnlyGiven(values) ? { laravelGiven: true } : {}) } : {}),
          ...(horizon ? { horizon } : {}),
          ...(values['no-record'] === true ? { record: false } : {}),
          // A job's error may quote a URL or a key the handler was given; the log shows none.
          log: (event) => {
            if (quiet && !SAID_WHEN_QUIET.has(event.event)) return;
            out(redactSecrets(formatEvent(event, json)));
          },
        }),
      );
      const worker = built.worker;
      // One line on standard error before the first job: where, what, and what becomes of PHP's jobs.
      process.stderr.write(`${redactSecrets(`lqb work: ${worker.startLine()}`)}\n`);
      if (horizon)
        process.stderr.write(
          `lqb work: Horizon's records under ${horizon.prefix} (${horizon.why})${built.supervisor ? `, shown as supervisor ${built.supervisor.name}` : ''}\n`,
        );
      // As Horizon's workers: SIGUSR2 pauses and SIGCONT continues (horizon:pause and horizon:continue
      // send them to this process when it runs on the machine they run on), the dashboard told too.
      const { pause, resume } = built;
      signals.push(
        ['SIGTERM', () => void worker.stop({ reason: 'signal' })],
        ['SIGINT', () => void worker.stop({ reason: 'signal' })],
        ['SIGUSR2', () => pause()],
        ['SIGCONT', () => resume()],
      );
      for (const [signal, handler] of signals) process.on(signal, handler);
      const stop = await worker.run();
      return stop.status;
    } finally {
      for (const [signal, handler] of signals) process.off(signal, handler);
      await sandbox?.close();
      // A worker that stopped at once (--stop-when-empty) still says where its jobs may be.
      await built?.looked;
      await built?.close();
      await failer.close();
      endOnceStopped();
    }
  },
};

/** How long the process may still take, once the worker has stopped and closed what it opened, to end on its own. */
const EXIT_GRACE_MS = 1000;

/**
 * Ends the process a moment after the worker stopped, as queue:work ends with exit($status)
 * whatever is still open. By then every job in hand has ended, at the latest at its timeout;
 * but a handler that ignores job.signal may still hold a timer of its own (up to its own end,
 * minutes away), and a handlers module may hold a pool it opened: either would keep Node
 * running with no worker in it, and a supervisor waiting. The timer is unref'd: a process with
 * nothing left open ends at once, with the status main() sets.
 */
function endOnceStopped(): void {
  setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
}

type Flags = Parameters<Command['run']>[0]['values'];

/** What --quiet still prints: what someone must act on, not a busy worker's progress. */
const SAID_WHEN_QUIET = new Set<WorkerEvent['event']>(['failed', 'timed-out', 'warning', 'error', 'reconnected']);

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
    // Shared with PHP workers unless told otherwise: giving a job back loses nothing, failing PHP's jobs would.
    share: values['no-share'] !== true,
    shareDelay: num('share-delay', 1),
    take: takeFlags(values.take),
    // As Laravel's alarm: a handler that blocks the event loop past its timeout ends the process.
    exitOnBlock: true,
    // The connection's name is what failed_jobs records, and what queue:retry pushes back to.
    ...(connectionArgument !== undefined ? { connectionName: connectionArgument } : {}),
  };
}

/** --take CLASS=P%, each given once: the shares by class, as the worker's option takes them (10% is 0.1). */
function takeFlags(given: unknown): Record<string, number> {
  const shares: Record<string, number> = {};
  for (const text of Array.isArray(given) ? (given as string[]) : []) {
    const parsed = parseTake(text);
    if (typeof parsed === 'string') throw new UsageError(`--take: ${parsed}`);
    const [className, percent] = parsed;
    if (className in shares) throw new UsageError(`--take: ${className} is given twice`);
    shares[className] = percent / 100;
  }
  return shares;
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
    throw new Error(
      `the failed-jobs database ${redactUrl(connection.failedDb)} cannot be reached: ${(error as Error).message.split('\n')[0]}`,
    );
  }
}

/**
 * The handlers module in a pool of threads (--sandbox), one per --concurrency slot. JavaScript
 * only: a thread imports the file itself, without the tsx loader the main thread registers.
 * --memory counts the threads' memory after each job; a thread that grows past a multiple of it
 * within one job (never finishing it, so never checked) is ended as a crash, as a backstop.
 */
async function sandboxFor(file: string, threads: number, memory: number): Promise<SandboxedHandlers> {
  const path = file.startsWith('file:') ? fileURLToPath(file) : file;
  if (!existsSync(path)) throw new UsageError(`--handlers=${file}: no such file`);
  if (/\.[cm]?tsx?$/i.test(path)) throw new UsageError(`--sandbox runs JavaScript handler modules: compile ${file} to .js first`);
  return sandboxedHandlers(file, { threads, ...(memory > 0 ? { memoryLimitMb: threadMemoryCap(memory) } : {}) });
}

/** A sandbox thread's cap under --memory=MB: far past what the worker stops at, and room for a thread to start. */
function threadMemoryCap(memory: number): number {
  return Math.max(4 * memory, 64);
}
