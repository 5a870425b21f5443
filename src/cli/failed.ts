/**
 * `lqb failed`, `lqb retry ID|all`, `lqb forget ID`, `lqb flush`: the failed-jobs table as
 * `queue:failed`, `queue:retry`, `queue:forget` and `queue:flush` show and change it.
 */
import { RedisQueue } from '../redis/index.js';
import { DatabaseUuidFailedJobProvider, retryFailedJob, type FailedJob } from '../worker/index.js';
import { connectionFlags, connectionFrom, queueClient, type Connection } from './connection.js';
import { UsageError, type Command } from './command.js';

/** Opens the failed-jobs store the connection names, hands it over, and closes it after. */
async function withFailer<T>(connection: Connection, use: (failer: DatabaseUuidFailedJobProvider) => Promise<T>): Promise<T> {
  const failer = DatabaseUuidFailedJobProvider.fromUrl(connection.failedDb, connection.failedTable);
  try {
    return await use(failer);
  } finally {
    await failer.close();
  }
}

function className(job: FailedJob): string {
  try {
    const payload = JSON.parse(job.payload) as { displayName?: string; job?: string };
    return payload.displayName ?? payload.job ?? '';
  } catch {
    return '(unreadable payload)';
  }
}

export const failed: Command = {
  usage: 'lqb failed [--json] [--failed-db=URL] [--env=PATH]',
  options: { ...connectionFlags, json: { type: 'boolean' } },
  run: ({ values, out }) =>
    withFailer(connectionFrom(values), async (failer) => {
      const jobs = await failer.all();
      if (values.json) {
        for (const job of jobs) out(JSON.stringify({ id: job.uuid, connection: job.connection, queue: job.queue, class: className(job), failed_at: job.failed_at }));
        return;
      }
      if (jobs.length === 0) {
        out('No failed jobs found.');
        return;
      }
      const rows = [['ID', 'Connection', 'Queue', 'Class', 'Failed At'], ...jobs.map((j) => [j.uuid, j.connection, j.queue, className(j), j.failed_at])];
      const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
      const line = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
      const format = (row: string[]) => `| ${row.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
      out([line, format(rows[0]!), line, ...rows.slice(1).map(format), line].join('\n'));
    }),
};

export const retry: Command = {
  usage: 'lqb retry ID…|all [--queue=Q] [--failed-db=URL] [--redis=URL] [--prefix=P] [--env=PATH]',
  options: { ...connectionFlags, queue: { type: 'string' } },
  async run({ values, positionals, out }) {
    if (positionals.length === 0 && typeof values.queue !== 'string') throw new UsageError('retry takes failed job IDs, "all", or --queue=Q');
    const connection = connectionFrom(values);
    const client = queueClient(connection, { giveUp: true });
    try {
      return await withFailer(connection, async (failer) => {
        const queue = new RedisQueue(client);
        const everything = positionals.includes('all');
        const ofQueue = typeof values.queue === 'string' ? values.queue : undefined;
        const jobs = everything ? await failer.all() : ofQueue !== undefined ? (await failer.all()).filter((j) => j.queue === ofQueue) : [];
        let missing = 0;
        if (ofQueue !== undefined && !everything && jobs.length === 0) {
          missing++;
          process.stderr.write(`Unable to find failed jobs for queue [${ofQueue}].\n`);
        }
        for (const id of positionals.filter((p) => p !== 'all')) {
          const job = await failer.find(id);
          if (job) jobs.push(job);
          else {
            missing++;
            process.stderr.write(`Unable to find failed job with ID [${id}].\n`);
          }
        }
        // Oldest first, as Laravel's retry pushes them.
        for (const job of jobs.sort((a, b) => a.id - b.id)) {
          await retryFailedJob(failer, queue, job);
          out(`The failed job [${job.uuid}] has been pushed back onto the queue!`);
        }
        return missing > 0 ? 1 : 0;
      });
    } finally {
      client.disconnect();
    }
  },
};

export const forget: Command = {
  usage: 'lqb forget ID [--failed-db=URL] [--env=PATH]',
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
  usage: 'lqb flush [--hours=H] [--failed-db=URL] [--env=PATH]',
  options: { ...connectionFlags, hours: { type: 'string' } },
  async run({ values, out }) {
    const hours = typeof values.hours === 'string' ? Number(values.hours) : undefined;
    if (hours !== undefined && !(hours > 0)) throw new UsageError('--hours must be a positive number');
    await withFailer(connectionFrom(values), async (failer) => {
      const count = await failer.flush(hours);
      out(hours ? `All jobs that failed more than ${hours} hours ago have been deleted successfully! (${count})` : `All failed jobs deleted successfully! (${count})`);
    });
  },
};
