/**
 * BatchesView on real SQLite, MariaDB and PostgreSQL, against rows real Laravel 8.83 wrote:
 * laravel-bookkeeping.php dispatches each Bus::batch and Laravel's worker runs it (a job labelled
 * "fail" fails into failed_jobs), so every expected value is what PHP's Bus::findBatch says of
 * the same batch, read back by PHP after Node cancelled it too. Laravel's own Batch class gives
 * progress() for every count up to 200, to hold Node's rounding to PHP's.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { databaseConfig, openDatabase, quoteName } from '../../src/database/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { BatchesView, progress, processedJobs, type BatchSummary } from '../../src/ui/batches.js';
import { DatabaseUuidFailedJobProvider, retryFailedJob } from '../../src/worker/index.js';
import { php, run, scratchPerTest, type Scratch } from '../helpers/processes.js';
import { prefixedClient } from '../helpers/redis.js';

const QUEUE = 'batches';
const DATABASES: [string, (dir: string) => string][] = [
  ['SQLite', (dir) => join(dir, 'batches.sqlite')],
  ['MariaDB', () => process.env.LQB_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'],
  ['PostgreSQL', () => process.env.LQB_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'],
];

/** What BatchesView and Bus::findBatch both say of a batch, compared one by one. */
const FIELDS: (keyof BatchSummary)[] = [
  'id',
  'name',
  'totalJobs',
  'pendingJobs',
  'processedJobs',
  'failedJobs',
  'failedJobIds',
  'progress',
  'allowFailures',
  'createdAt',
  'cancelledAt',
  'finishedAt',
];

// A Redis prefix and scratch directory of each test's own (failed_jobs is a SQLite file there).
const current = scratchPerTest('ui-batches', QUEUE);
let s: Scratch;
beforeEach(() => ({ s } = current));

/** Resolves once the clock is past UNIX second `second`: a time written now differs from one written then. */
async function pastSecond(second: number): Promise<void> {
  while (Math.floor(Date.now() / 1000) <= second) await sleep(50);
}

describe.each(DATABASES)('BatchesView on %s', (_, where) => {
  let url: string;
  let table: string;
  let view: BatchesView;

  beforeEach(() => {
    url = where(s.dir);
    table = `job_batches_${randomBytes(4).toString('hex')}`;
    s.env.LQB_BATCH_DB = url;
    s.env.LQB_BATCH_TABLE = table;
    view = new BatchesView(databaseConfig(url), table);
  });

  afterEach(async () => {
    await view.close();
    const db = openDatabase(databaseConfig(url));
    await db.query(`drop table if exists ${quoteName(db.dialect, table)}`);
    await db.close();
  });

  const bookkeeping = async (kind: string, options: object) => {
    const result = await php('laravel-bookkeeping.php', [kind, JSON.stringify(options)], s.env);
    expect(result.stderr, `laravel-bookkeeping.php ${kind} ${JSON.stringify(options)} on standard error`).toBe('');
    return JSON.parse(result.stdout) as Record<string, any>;
  };
  /** Bus::batch of BatchJobs labelled `labels`; its id. */
  const laravelBatch = async (labels: string[], allowFailures = false) =>
    (await bookkeeping('batch', { labels, allowFailures })).batch as string;
  /** The batch as Laravel's Bus::findBatch reads it. */
  const laravelFind = (id: string) => bookkeeping('batch-find', { id });
  const laravelWork = async () => {
    const result = await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env);
    expect(result.status, `Laravel's worker: ${result.stderr}`).toBe(0);
  };
  /** Each field of Node's batch against Laravel's, named in the message when one differs. */
  const expectAsLaravel = (ours: BatchSummary | undefined, laravel: Record<string, any>, when: string) => {
    expect(ours, `batch ${laravel.id} ${when}`).toBeDefined();
    for (const field of FIELDS)
      expect(ours![field], `${field} of batch ${laravel.id} ${when}, as Bus::findBatch says`).toEqual(laravel[field]);
  };

  it('a page is newest first, with the total, each batch as Laravel reads it', async () => {
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push(await laravelBatch(Array.from({ length: n }, () => 'ok')));
    const newestFirst = [...ids].reverse();
    const first = await view.page(0, 2);
    expect(first.total, 'total of the first page').toBe(3);
    expect(
      first.batches.map((batch) => batch.id),
      'ids of the first page (2 of 3, newest first)',
    ).toEqual(newestFirst.slice(0, 2));
    const second = await view.page(2, 2);
    expect(second.total, 'total of the second page').toBe(3);
    expect(
      second.batches.map((batch) => batch.id),
      'ids of the second page',
    ).toEqual(newestFirst.slice(2));
    for (const batch of [...first.batches, ...second.batches]) expectAsLaravel(batch, await laravelFind(batch.id), 'on its page');
  });

  it('a batch of three with one failed job: processedJobs and progress are Laravel’s', async () => {
    const id = await laravelBatch(['ok', 'fail', 'ok']);
    await laravelWork();
    const laravel = await laravelFind(id);
    // The case meant: the failed job stays pending, and cancels the batch (no allowFailures).
    expect(laravel, `batch ${id} as Bus::findBatch says after Laravel's worker`).toMatchObject({
      totalJobs: 3,
      pendingJobs: 1,
      failedJobs: 1,
      processedJobs: 2,
      progress: 67,
      cancelled: true,
    });
    expectAsLaravel(await view.find(id), laravel, 'found');
    expectAsLaravel((await view.page(0, 10)).batches[0], laravel, 'paged');
  });

  it('cancel sets cancelled_at and finished_at, which Laravel then reads as cancelled; a second cancel leaves them', async () => {
    const id = await laravelBatch(['ok', 'ok']);
    const before = Math.floor(Date.now() / 1000);
    const cancelled = await view.cancel(id);
    expect(cancelled?.cancelledAt, `cancelled_at of batch ${id} after cancel`).toBeGreaterThanOrEqual(before);
    expect(cancelled?.finishedAt, `finished_at of batch ${id} after cancel`).toBe(cancelled?.cancelledAt);
    const laravel = await laravelFind(id);
    expect(laravel.cancelled, `Bus::findBatch(${id})->cancelled() after Node's cancel`).toBe(true);
    expect(laravel.finished, `Bus::findBatch(${id})->finished() after Node's cancel`).toBe(true);
    expectAsLaravel(cancelled, laravel, 'after cancel');
    await pastSecond(cancelled!.cancelledAt!);
    expect(await view.cancel(id), `batch ${id} cancelled again a second later`).toEqual(cancelled);
    expect(await view.cancel('no-such-batch'), 'cancel of a batch that is not there').toBeUndefined();
  });

  it('retryFailed pushes each failed job back through retryOne, and reports the one whose record is gone', async () => {
    const id = await laravelBatch(['fail', 'fail', 'ok'], true);
    await laravelWork();
    const { failedJobIds } = await laravelFind(id);
    expect(failedJobIds, `failed_job_ids of batch ${id} after Laravel's worker`).toHaveLength(2);
    const [kept, forgotten] = failedJobIds as string[];
    const failer = DatabaseUuidFailedJobProvider.fromUrl(s.env.LQB_FAILED_DB!);
    const client = prefixedClient(current.prefix);
    try {
      expect(await failer.forget(forgotten!), `the failed record of ${forgotten}, forgotten before the retry`).toBe(true);
      const asked: string[] = [];
      // As `lqb retry` retries one failed job: pushed back as it is, its record forgotten.
      const retryOne = async (uuid: string) => {
        asked.push(uuid);
        const job = await failer.find(uuid);
        if (!job) return false;
        expect(await retryFailedJob(failer, new RedisQueue(client), job), `why ${uuid} was refused`).toBeUndefined();
        return true;
      };
      expect(await view.retryFailed(id, retryOne), `retryFailed of batch ${id}`).toEqual({ retried: [kept], missing: [forgotten] });
      expect(asked, 'the uuids retryOne was given, in failed_job_ids order').toEqual(failedJobIds);
      expect(await failer.find(kept!), `the failed record of ${kept} after its retry`).toBeUndefined();
      expect(await view.retryFailed('no-such-batch', retryOne), 'retryFailed of a batch that is not there').toBeUndefined();
    } finally {
      client.disconnect();
      await failer.close();
    }
    await laravelWork();
    const runs = s.phpRuns().filter((r) => r.props?.batchId === id);
    expect(
      runs.map((r) => r.props.n as number).sort(),
      `the jobs of batch ${id} Laravel's worker ran (job 1 again after its retry)`,
    ).toEqual([1, 1, 2, 3]);
  });

  it('a database without the table reads as no batches, and the view does not make it', async () => {
    expect(await view.page(0, 10), `a page of ${table}, which is not there`).toEqual({ total: 0, batches: [] });
    expect(await view.find('any'), `find in ${table}, which is not there`).toBeUndefined();
    expect(await view.cancel('any'), `cancel in ${table}, which is not there`).toBeUndefined();
    expect(await view.retryFailed('any', () => Promise.resolve(true)), `retryFailed in ${table}, which is not there`).toBeUndefined();
    expect(await view.hasTable(), `${table} after the view looked`).toBe(false);
  });
});

describe('progress', () => {
  it('processedJobs and progress are Laravel’s Batch’s for every count of jobs up to 200', async () => {
    // Laravel's own Batch (Debian's 8.83), its counts set and asked: PHP's round, pre-rounding and all.
    const code = `require 'Illuminate/autoload.php';
      $class = new ReflectionClass(Illuminate\\Bus\\Batch::class);
      $out = [];
      for ($total = 0; $total <= 200; $total++) for ($pending = 0; $pending <= $total; $pending++) {
        $batch = $class->newInstanceWithoutConstructor();
        $batch->totalJobs = $total;
        $batch->pendingJobs = $pending;
        $out[] = [$total, $pending, $batch->processedJobs(), (int) $batch->progress()];
      }
      echo json_encode($out);`;
    const result = await run('php', ['-r', code], process.env);
    expect(result.stderr, 'PHP on standard error').toBe('');
    const differing = (JSON.parse(result.stdout) as number[][]).filter(
      ([totalJobs, pendingJobs, processed, percent]) =>
        processedJobs({ totalJobs: totalJobs!, pendingJobs: pendingJobs! }) !== processed ||
        progress({ totalJobs: totalJobs!, pendingJobs: pendingJobs! }) !== percent,
    );
    expect(differing, '[total, pending, processedJobs, progress] where Node differs from Laravel').toEqual([]);
  });
});
