/**
 * `lqb failed`, `lqb retry ID|all`, `lqb forget ID`, `lqb flush`: the failed-jobs table as
 * `queue:failed`, `queue:retry`, `queue:forget` and `queue:flush` show and change it.
 */
import type { Queue, QueueDriver } from '../queue/index.js';
import { DatabaseUuidFailedJobProvider, type FailedJob, type RetryUntilChoice } from '../worker/index.js';
import {
  asUsage,
  connectionFlags,
  connectionFrom,
  failedJobStore,
  withHorizonClient,
  openOneOffQueue,
  type Connection,
} from './connection.js';
import { horizonFrom, recordFlags } from './horizon.js';
import { HorizonRecorder } from '../horizon/HorizonRecorder.js';
import { retryFailed, type RetryWindow } from '../horizon/retry.js';
import type { ResolvedHorizon } from '../connect/horizon.js';
import { UsageError, type Command } from './command.js';
import { shapesFlag, shapesFrom } from './shapes-file.js';

/** Opens the failed-jobs store the connection names, hands it over, and closes it after. */
async function withFailer<T>(connection: Connection, use: (failer: DatabaseUuidFailedJobProvider) => Promise<T>): Promise<T> {
  const failer = failedJobStore(connection);
  try {
    return await use(failer);
  } finally {
    await failer.close();
  }
}

/**
 * The Class column as queue:failed fills it: the first double-quoted name in data.command
 * (the serialized class: CallQueuedListener for a listener; none in an encrypted command),
 * else the payload's `job`, else nothing.
 */
function className(job: FailedJob): string {
  let payload: { job?: unknown; data?: { command?: unknown } } | null;
  try {
    payload = JSON.parse(job.payload) as typeof payload;
  } catch {
    return '';
  }
  const command = payload?.data?.command;
  const quoted = typeof command === 'string' ? /"([^"]+)"/.exec(command)?.[1] : undefined;
  const name = quoted ?? payload?.job;
  return typeof name === 'string' ? name : '';
}

export const failed: Command = {
  synopsis: 'lqb failed',
  summary: 'Lists the failed jobs, as php artisan queue:failed does.',
  options: { json: { type: 'boolean', description: 'one JSON line a failed job' }, ...connectionFlags },
  noArguments: true,
  run: ({ values, out }) =>
    withFailer(connectionFrom(values), async (failer) => {
      const jobs = await failer.all();
      if (values.json) {
        for (const job of jobs)
          out(
            JSON.stringify({ id: job.uuid, connection: job.connection, queue: job.queue, class: className(job), failed_at: job.failed_at }),
          );
        return;
      }
      if (jobs.length === 0) {
        out('No failed jobs!');
        return;
      }
      const rows = [
        ['ID', 'Connection', 'Queue', 'Class', 'Failed At'],
        ...jobs.map((j) => [j.uuid, j.connection, j.queue, className(j), j.failed_at]),
      ];
      const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
      const line = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
      const format = (row: string[]) => `| ${row.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
      out([line, format(rows[0]!), line, ...rows.slice(1).map(format), line].join('\n'));
    }),
};

export const retry: Command = {
  synopsis: 'lqb retry ID…|all',
  summary: 'Pushes failed jobs back onto their queues and forgets them, as php artisan queue:retry does.',
  notes:
    "A job whose class has a retryUntil() method gets a fresh window in Laravel by calling it again; Node cannot, so such a job is refused unless --retry-until says the new window. With Horizon's records on, a job Horizon holds a failed record of is retried as Horizon's Retry does it (a new job, in the failed record's retried_by; its window moved as Horizon moves it, unless --retry-until says one).",
  options: {
    queue: { type: 'string', value: 'Q', description: 'retry every failed job of this queue' },
    range: { type: 'string', value: 'A-B', multiple: true, description: 'retry the IDs from A to B (repeatable)' },
    'retry-until': {
      type: 'string',
      value: 'SECONDS|none|keep',
      description: 'the new retryUntil window: seconds from now, none (tries apply), or keep (the closed one)',
    },
    ...shapesFlag,
    ...recordFlags,
    ...connectionFlags,
  },
  async run({ values, positionals, out }) {
    const ranges = (values.range ?? []) as string[];
    const horizon = asUsage(() => horizonFrom(values));
    if (positionals.length === 0 && !values.queue && ranges.length === 0)
      throw new UsageError('retry takes failed job IDs, "all", --queue=Q or --range=A-B');
    const window: RetryWindow = { shapes: shapesFrom(values), choice: retryUntilChoice(values['retry-until']) };
    const connection = connectionFrom(values);
    return withQueues(connection, (queueOf) =>
      withFailer(connection, (failer) =>
        withRetry(connection, horizon, failer, window, async (retryOne) => {
          const ids = await retryIds(failer, positionals, values.queue, ranges);
          let missing = 0;
          for (const id of ids) {
            const job = await failer.find(id);
            if (!job) {
              missing++;
              process.stderr.write(`Unable to find failed job with ID [${id}].\n`);
              continue;
            }
            // RetryCommand pushes onto the connection the record names: its jobs table, or Redis.
            const refused = await retryOne(await queueOf(job.connection), job);
            if (refused) {
              missing++;
              process.stderr.write(`The failed job [${id}] was not retried: ${refused}.\n`);
              continue;
            }
            out(`The failed job [${id}] has been pushed back onto the queue!`);
          }
          return missing > 0 ? 1 : 0;
        }),
      ),
    );
  },
};

/** One failed job retried onto its queue: the reason it was refused, or undefined once it is pushed and forgotten. */
type RetryOne = (queue: Queue, job: FailedJob) => Promise<string | undefined>;

/**
 * How a failed job is retried (src/horizon/retry.ts, which the dashboard's Retry shares): with
 * Horizon's records on, a job of Redis goes back under Horizon (as Horizon's Retry when Horizon
 * holds a failed record of it, else as queue:retry pushes under Horizon); Horizon records Redis's
 * jobs only, so a record of the database connection, or any without Horizon, goes back as queue:retry.
 */
async function withRetry<T>(
  connection: Connection,
  horizon: ResolvedHorizon | undefined,
  failer: DatabaseUuidFailedJobProvider,
  window: RetryWindow,
  use: (retryOne: RetryOne) => Promise<T>,
): Promise<T> {
  const retryOne =
    (recorder: HorizonRecorder | undefined): RetryOne =>
    async (queue, job) => {
      const outcome = await retryFailed(queue.driver === 'redis' ? recorder : undefined, failer, queue, job, window);
      return 'refused' in outcome ? outcome.refused : undefined;
    };
  if (!horizon) return use(retryOne(undefined));
  return withHorizonClient(connection, (client) =>
    use(retryOne(new HorizonRecorder(client, { prefix: horizon.prefix, connection: connection.queueConnection, trim: horizon.trim }))),
  );
}

/**
 * The queues retry pushes onto, by the connection a failed record names, each opened once when
 * first needed and closed after: `redis` and `database` are the drivers Node speaks (an app's own
 * connection name is the driver the flags or QUEUE_CONNECTION select).
 */
async function withQueues<T>(connection: Connection, use: (queueOf: (name: string) => Promise<Queue>) => Promise<T>): Promise<T> {
  const opened = new Map<QueueDriver, ReturnType<typeof openOneOffQueue>>();
  const queueOf = async (name: string): Promise<Queue> => {
    const driver: QueueDriver = name === 'redis' || name === 'database' ? name : connection.queueConnection;
    let opening = opened.get(driver);
    if (!opening) opened.set(driver, (opening = openOneOffQueue(connection, driver)));
    return (await opening).queue;
  };
  try {
    return await use(queueOf);
  } finally {
    for (const opening of opened.values()) await opening.then((o) => o.close()).catch(() => undefined);
  }
}

/** --retry-until: whole seconds from now, `none` (no window: tries apply), or `keep` (the payload's). */
function retryUntilChoice(value: unknown): RetryUntilChoice | undefined {
  if (value === undefined) return undefined;
  if (value === 'none' || value === 'keep') return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return { seconds: Number(value) };
  throw new UsageError(`--retry-until must be a whole number of seconds, none or keep; got ${JSON.stringify(value)}`);
}

/**
 * The IDs queue:retry goes through, in its order: `all` alone is every failed job, newest
 * first; --queue=Q those of that queue (any IDs given are then ignored, as artisan ignores
 * them); else the IDs given, then each --range=A-B counted from A to B, each ID once.
 */
async function retryIds(failer: DatabaseUuidFailedJobProvider, ids: string[], queue: unknown, ranges: string[]): Promise<string[]> {
  if (ids.length === 1 && ids[0] === 'all') return (await failer.all()).map((job) => job.uuid);
  if (typeof queue === 'string' && queue !== '') {
    const ofQueue = (await failer.all()).filter((job) => job.queue === queue).map((job) => job.uuid);
    if (ofQueue.length === 0) throw new Error(`Unable to find failed jobs for queue [${queue}].`);
    return ofQueue;
  }
  const counted = ranges
    .filter((range) => /^\d+-\d+$/.test(range))
    .flatMap((range) => countFrom(...(range.split('-').map(Number) as [number, number])));
  // artisan drops the IDs PHP reads as false: "" and "0".
  return [...new Set([...ids, ...counted.map(String)])].filter((id) => id !== '' && id !== '0');
}

/** PHP's range(a, b) for whole numbers: up or down, both ends included. */
function countFrom(a: number, b: number): number[] {
  const step = a <= b ? 1 : -1;
  return Array.from({ length: Math.abs(b - a) + 1 }, (_, i) => a + i * step);
}

export const forget: Command = {
  synopsis: 'lqb forget ID',
  summary: 'Deletes one failed job, as php artisan queue:forget does.',
  options: connectionFlags,
  async run({ values, positionals, out }) {
    if (positionals.length !== 1) throw new UsageError('forget takes one failed job ID');
    return withFailer(connectionFrom(values), async (failer) => {
      if (await failer.forget(positionals[0]!)) {
        out('Failed job deleted successfully!');
        return 0;
      }
      process.stderr.write('No failed job matches the given ID.\n');
      return 1;
    });
  },
};

export const flush: Command = {
  synopsis: 'lqb flush',
  summary: 'Deletes every failed job, as php artisan queue:flush does.',
  options: { hours: { type: 'string', value: 'H', description: 'only those failed more than H hours ago' }, ...connectionFlags },
  noArguments: true,
  async run({ values, out }) {
    const hours = typeof values.hours === 'string' ? Number(values.hours) : undefined;
    if (hours !== undefined && !(hours > 0)) throw new UsageError('--hours must be a positive number');
    await withFailer(connectionFrom(values), async (failer) => {
      await failer.flush(hours);
      out(
        hours
          ? `All jobs that failed more than ${hours} hours ago have been deleted successfully!`
          : 'All failed jobs deleted successfully!',
      );
    });
  },
};
