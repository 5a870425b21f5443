/**
 * `lqb failed`, `lqb retry ID|all`, `lqb forget ID`, `lqb flush`: the failed-jobs table as
 * `queue:failed`, `queue:retry`, `queue:forget` and `queue:flush` show and change it.
 */
import type { Queue, QueueDriver } from '../queue/index.js';
import {
  DatabaseUuidFailedJobProvider,
  resetAttempts,
  retryFailedJob,
  retryUntilFor,
  type FailedJob,
  type RetryUntilChoice,
} from '../worker/index.js';
import type { ShapesFile } from '../shapes/shape.js';
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
import { HorizonRecorder, type FailedRecord } from '../horizon/HorizonRecorder.js';
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
 * How a failed job is retried. Without Horizon's records, as queue:retry: pushed as it is. With
 * them, on Redis: a job Horizon holds a failed record of is retried as Horizon's Retry does it
 * (retryAsHorizon), and any other goes back as queue:retry pushes under Horizon: its queue's
 * pushRaw lays the payload out (type, the payload's own tags, pushedAt; the id kept) and records
 * it pending. Horizon records Redis's jobs only: a record of the database connection goes back as it is.
 */
async function withRetry<T>(
  connection: Connection,
  horizon: ResolvedHorizon | undefined,
  failer: DatabaseUuidFailedJobProvider,
  window: RetryWindow,
  use: (retryOne: RetryOne) => Promise<T>,
): Promise<T> {
  const plain: RetryOne = (queue, job) => retryFailedJob(failer, queue, job, window);
  if (!horizon) return use(plain);
  return withHorizonClient(connection, (client) => {
    const recorder = new HorizonRecorder(client, { prefix: horizon.prefix, connection: connection.queueConnection, trim: horizon.trim });
    return use(async (queue, job) => {
      if (queue.driver !== 'redis') return plain(queue, job);
      const record = await recorder.findFailed(job.uuid);
      if (record) return retryAsHorizon(recorder, failer, queue, job, record, window);
      return retryFailedJob(failer, queue, job, window, (payload, name) => pushAsHorizon(recorder, queue, payload, name));
    });
  });
}

type RetryWindow = { shapes?: ShapesFile; choice?: RetryUntilChoice };

/**
 * Horizon's Retry (RetryFailedJob) of a job Horizon holds a failed record of: the record's
 * payload goes back as a new job (an ordered uuid as its id, attempts 0, `retry_of` naming the
 * failed job, retryUntil moved as far past now as it was past the first push), laid out as
 * Horizon's queue pushes a raw payload and recorded pending; then the failed record's
 * `retried_by` gains it as pending, which the new job's end turns completed or failed. As
 * queue:retry, the failed_jobs record is forgotten. Horizon's window needs no PHP, so nothing is
 * refused; a new window said with --retry-until (seconds, or none) replaces it where queue:retry
 * would refresh one.
 */
async function retryAsHorizon(
  recorder: HorizonRecorder,
  failer: DatabaseUuidFailedJobProvider,
  queue: Queue,
  job: FailedJob,
  record: FailedRecord,
  window: RetryWindow,
): Promise<undefined> {
  const id = recorder.retryId();
  const payload = withChosenWindow(recorder.retryPayload(record.payload, job.uuid, id), record.payload, window);
  await pushAsHorizon(recorder, queue, payload, job.queue);
  await recorder.retried(job.uuid, id);
  await failer.forget(job.uuid);
  return undefined;
}

/** A raw push as Horizon's queue makes it: laid out (type job, no tags of its own, pushedAt; the id kept), pushed, recorded pending. */
async function pushAsHorizon(recorder: HorizonRecorder, queue: Queue, payload: string, name: string): Promise<void> {
  const prepared = recorder.prepare(payload, { raw: true });
  await queue.pushRaw(prepared, name);
  await recorder.pushed(name, prepared);
}

/** The retry's payload with the window --retry-until says, where queue:retry would refresh one; else as Horizon moved it. */
function withChosenWindow(payload: string, failedPayload: string, window: RetryWindow): string {
  if (window.choice === undefined) return payload;
  const chosen = retryUntilFor(failedPayload, window);
  return 'retryUntil' in chosen ? resetAttempts(payload, chosen) : payload;
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
