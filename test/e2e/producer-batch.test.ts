/**
 * A Node producer's batch, against Debian's real Laravel 8.83, on each database. Producer: Node
 * (connect().batch). Consumer: Laravel's own worker. What Node pushes and the job_batches row it
 * writes are what Laravel's Bus::batch()->onQueue()->name()->dispatch() pushes and writes for
 * the same jobs (but the ids and the time); Laravel's worker runs every job and finishes the
 * batch, its counters as after a batch of its own.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, type LaravelQueue } from '../../src/index.js';
import { databaseConfig, openDatabase, quoteName } from '../../src/database/index.js';
import { REDIS_URL, rawClient } from '../helpers/redis.js';
import { php, scratchPerTest, type Scratch } from '../helpers/processes.js';
import { QUEUE_DATABASES } from '../helpers/jobs-table.js';

const QUEUE = 'batched';
const BATCH_JOB = 'App\\Jobs\\Bookkeeping\\BatchJob';

const current = scratchPerTest('e2e-producer-batch', QUEUE);
let s: Scratch;

describe.each(QUEUE_DATABASES)('connect().batch on %s', (_, where) => {
  let url: string;
  let table: string;
  let queue: LaravelQueue;

  beforeEach(async () => {
    s = current.s;
    url = where(s.dir);
    table = `job_batches_${randomBytes(4).toString('hex')}`;
    s.env.LQB_BATCH_DB = url;
    s.env.LQB_BATCH_TABLE = table;
    queue = await connect({ redis: REDIS_URL, prefix: current.prefix, logger: false, batchDb: url, batchTable: table });
  });

  afterEach(async () => {
    await queue.close();
    const db = openDatabase(databaseConfig(url));
    await db.query(`drop table if exists ${quoteName(db.dialect, table)}`);
    await db.close();
  });

  const bookkeeping = async (kind: string, options: object) => {
    const result = await php('laravel-bookkeeping.php', [kind, JSON.stringify(options)], s.env);
    expect(result.stderr, `laravel-bookkeeping.php ${kind}`).toBe('');
    return JSON.parse(result.stdout) as Record<string, any>;
  };
  /** The row as Laravel's repository reads it, but its id and times. */
  const row = async (id: string) => {
    const r = await bookkeeping('batch-row', { id });
    return {
      id: r.id,
      name: r.name,
      total_jobs: Number(r.total_jobs),
      pending_jobs: Number(r.pending_jobs),
      failed_jobs: Number(r.failed_jobs),
      failed_job_ids: r.failed_job_ids,
      options: r.options,
      cancelled: r.cancelled,
      finished: r.finished,
    };
  };
  /** Every payload on the queue's list, taken off it, with the ids each dispatch makes afresh masked. */
  const takeAll = async (batchId: string): Promise<string[]> => {
    const raw = rawClient();
    try {
      const key = `${current.prefix}queues:${QUEUE}`;
      const payloads = await raw.lrange(key, 0, -1);
      await raw.del(key, `${key}:notify`);
      return payloads.map((payload) => JSON.stringify({ ...JSON.parse(payload), uuid: 'UUID', id: 'ID' }).replaceAll(batchId, 'BATCH-ID'));
    } finally {
      raw.disconnect();
    }
  };
  const laravelWork = async () => {
    const result = await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env);
    expect([result.status, result.stderr], 'Laravel’s worker did not end cleanly').toEqual([0, '']);
  };
  const jobs = (labels: string[]) => labels.map((label, i) => ({ job: BATCH_JOB, props: { n: i + 1, label } }));

  it('writes the row and pushes the jobs Laravel’s Bus::batch writes and pushes for the same jobs', async () => {
    const labels = ['ok', 'ok', 'ok'];
    const { batch: byPhp } = await bookkeeping('batch', { labels });
    const phpPayloads = await takeAll(byPhp as string);
    expect(phpPayloads, 'the jobs Laravel’s Bus::batch pushed').toHaveLength(labels.length);
    const byNode = await queue.batch(jobs(labels), { queue: QUEUE, name: 'bookkeeping' });
    const nodePayloads = await takeAll(byNode.id);
    expect(
      byNode.dispatched.map((d) => d.queue),
      'the queue batch() answers for each job',
    ).toEqual([QUEUE, QUEUE, QUEUE]);
    expect(nodePayloads, 'Node’s payloads (uuid, id and batch id masked) against Laravel’s').toEqual(phpPayloads);
    expect({ ...(await row(byNode.id)), id: 'ID' }, 'Node’s job_batches row against Laravel’s (id masked)').toEqual({
      ...(await row(byPhp as string)),
      id: 'ID',
    });
  });

  it('is run to its end by Laravel’s worker: every job, the batch finished', async () => {
    await expect(queue.batch(jobs(['ok'])), 'a batch before Laravel’s migration made the table').rejects.toThrow(
      new RegExp(`^batch: no batch was pushed: there is no table ${table} in .*; Laravel's migration makes it`),
    );
    // Laravel's batch repository makes the table, as the migration would.
    await row('none');
    const byNode = await queue.batch(jobs(['ok', 'ok', 'ok', 'ok']), { queue: QUEUE, name: 'from-node', allowFailures: true });
    await laravelWork();
    expect(
      s.phpRuns().map((run) => [run.props.n, run.props.batchId, run.uuid]),
      'the jobs Laravel’s worker ran (n, batchId, uuid), in order',
    ).toEqual(byNode.dispatched.map((d, i) => [i + 1, byNode.id, d.uuid]));
    expect(await row(byNode.id), 'the row after Laravel’s worker ran the batch').toMatchObject({
      id: byNode.id,
      name: 'from-node',
      total_jobs: 4,
      pending_jobs: 0,
      failed_jobs: 0,
      cancelled: false,
      finished: true,
    });
  });
});

describe('connect().batch refuses', () => {
  it('what it cannot push, naming it', async () => {
    const queue = await connect({ redis: REDIS_URL, prefix: current.prefix, logger: false });
    try {
      await expect(queue.batch([])).rejects.toThrow(/^batch: jobs must be a list of one or more/);
      await expect(queue.batch([{ job: BATCH_JOB }], { then: () => 1 } as never)).rejects.toThrow(
        /^batch: unknown option "then"; a batch's options are name, queue and allowFailures$/,
      );
    } finally {
      await queue.close();
    }
  });
});
