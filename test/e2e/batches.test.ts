/**
 * Job batches against Debian's real Laravel 8.83: Laravel's Bus::batch stores the batch in
 * job_batches (on SQLite, MariaDB and PostgreSQL) and pushes its jobs; Laravel's worker, or
 * `lqb work`, or both run them, and the row ends the same: pending and failed counts,
 * failed_job_ids, cancelled at the first failure, finished. The then/catch/finally callbacks
 * are PHP closures: run by PHP under --share, else said in Node's log not to have run.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { databaseConfig, openDatabase, quoteName } from '../../src/database/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { aloneUnlessShared, lqb, php, run, scratchPerTest, type Scratch } from '../helpers/processes.js';
import { root } from '../helpers/php.js';

const QUEUE = 'batches';
const HANDLERS = join(root, 'test/e2e/fixtures/bookkeeping-handlers.mjs');
const DATABASES: [string, (dir: string) => string][] = [
  ['SQLite', (dir) => join(dir, 'batches.sqlite')],
  ['MariaDB', () => process.env.LQB_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'],
  ['PostgreSQL', () => process.env.LQB_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'],
];

// A Redis prefix and scratch directory of each test's own, removed after it.
const current = scratchPerTest('e2e-batch', QUEUE);
let s: Scratch;
beforeEach(() => ({ s } = current));

describe.each(DATABASES)('Bus::batch on %s', (_, where) => {
  let url: string;
  let table: string;

  beforeEach(() => {
    url = where(s.dir);
    table = `job_batches_${randomBytes(4).toString('hex')}`;
    s.env.LQB_BATCH_DB = url;
    s.env.LQB_BATCH_TABLE = table;
  });

  afterEach(async () => {
    const db = openDatabase(databaseConfig(url));
    await db.query(`drop table if exists ${quoteName(db.dialect, table)}`);
    await db.close();
  });

  const bookkeeping = async (kind: string, options: object) => {
    const result = await php('laravel-bookkeeping.php', [kind, JSON.stringify(options)], s.env);
    expect(result.stderr, `laravel-bookkeeping.php ${kind}`).toBe('');
    return JSON.parse(result.stdout) as Record<string, any>;
  };
  const laravelWork = async () => {
    const result = await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env);
    expect(result.status, result.stderr).toBe(0);
    return result;
  };
  const nodeWork = async (...flags: string[]) => {
    const result = await lqb(
      [
        'work',
        `--handlers=${HANDLERS}`,
        `--queue=${QUEUE}`,
        '--stop-when-empty',
        '--sleep=0',
        `--batch-db=${url}`,
        `--batch-table=${table}`,
        ...aloneUnlessShared(flags),
      ],
      s.env,
    );
    expect(result.status, result.stderr).toBe(0);
    return result;
  };
  /** The row as Laravel's repository reads it, with what the comparison needs. */
  const row = async (id: string) => {
    const r = await bookkeeping('batch-row', { id });
    return {
      name: r.name,
      total_jobs: Number(r.total_jobs),
      pending_jobs: Number(r.pending_jobs),
      failed_jobs: Number(r.failed_jobs),
      failed_job_ids: JSON.parse(r.failed_job_ids) as string[],
      cancelled: r.cancelled,
      finished: r.finished,
    };
  };
  /**
   * Laravel's worker, run until the batch's row is finished: a job Node gave back is taken again
   * only after --share-delay, which on a busy machine may fall after one --stop-when-empty run
   * has stopped. Gives up after a generous deadline, naming the row as it was.
   */
  const laravelWorkUntilFinished = async (id: string, ms = 90_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      await laravelWork();
      const now = await row(id);
      if (now.finished) return now;
      if (Date.now() > deadline) throw new Error(`batch ${id} not finished after ${ms} ms of Laravel's worker: ${JSON.stringify(now)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const failedUuids = (runs: Record<string, any>[], batch: string) =>
    runs.filter((r) => r.props?.batchId === batch && r.props.label === 'fail').map((r) => r.uuid as string);
  const callbacks = (batch: string) =>
    s
      .phpRuns()
      .filter((r) => r.callback && r.batch === batch)
      .map((r) => r.callback as string);

  it('a batch of 3 with one failing ends with the same row whether Laravel’s worker or lqb work runs it', async () => {
    const spec = { labels: ['ok', 'fail', 'ok'], callbacks: true };
    const { batch: byPhp } = await bookkeeping('batch', spec);
    await laravelWork();
    const { batch: byNode } = await bookkeeping('batch', spec);
    const node = await nodeWork();
    const [phpRow, nodeRow] = [await row(byPhp), await row(byNode)];
    expect(phpRow).toMatchObject({ total_jobs: 3, pending_jobs: 1, failed_jobs: 1, cancelled: true, finished: true });
    expect(phpRow.failed_job_ids).toEqual(failedUuids(s.phpRuns(), byPhp));
    expect({ ...nodeRow, failed_job_ids: undefined }, 'Node’s row as Laravel’s').toEqual({ ...phpRow, failed_job_ids: undefined });
    expect(nodeRow.failed_job_ids).toEqual(failedUuids(s.nodeRuns(), byNode));
    // PHP ran catch and finally; Node cannot, and says so once for each, when it would have run.
    expect(callbacks(byPhp)).toEqual(['catch', 'finally']);
    expect(callbacks(byNode)).toEqual([]);
    const said = node.stdout.split('\n').filter((line) => line.includes(`batch ${byNode}`));
    expect(
      said.map((line) => /its (.+) callbacks? are PHP closures Node cannot run: they did not run/.exec(line)?.[1]).join(' and '),
      node.stdout,
    ).toBe('catch and finally');
  });

  it('allowFailures: a failure is counted and the batch is not cancelled; all successes finish it', async () => {
    const { batch: failing } = await bookkeeping('batch', { labels: ['fail', 'ok'], allowFailures: true });
    const { batch: clean } = await bookkeeping('batch', { labels: ['ok', 'ok'] });
    await nodeWork();
    expect(await row(failing)).toMatchObject({ pending_jobs: 1, failed_jobs: 1, cancelled: false, finished: false });
    expect(await row(clean)).toMatchObject({ pending_jobs: 0, failed_jobs: 0, failed_job_ids: [], cancelled: false, finished: true });
  });

  it('--share: the job that would finish the batch, and the first failure, are left to PHP, which runs the callbacks', async () => {
    const { batch: ok } = await bookkeeping('batch', { labels: ['ok', 'ok', 'ok'], callbacks: true });
    const { batch: failing } = await bookkeeping('batch', { labels: ['fail', 'ok'], callbacks: true });
    const node = await nodeWork('--share');
    expect(node.stdout).toMatch(/Given back: +App\\Jobs\\Bookkeeping\\BatchJob: it would finish batch/);
    expect(node.stdout).toMatch(/Given back: +App\\Jobs\\Bookkeeping\\BatchJob: out of attempts, left for a PHP worker to fail/);
    expect(await row(ok)).toMatchObject({ pending_jobs: 1, finished: false });
    await laravelWorkUntilFinished(ok);
    await laravelWorkUntilFinished(failing);
    expect(await row(ok)).toMatchObject({ pending_jobs: 0, failed_jobs: 0, finished: true, cancelled: false });
    expect(await row(failing)).toMatchObject({ pending_jobs: 1, failed_jobs: 1, cancelled: true, finished: true });
    expect(callbacks(ok)).toEqual(['then', 'finally']);
    expect(callbacks(failing)).toEqual(['catch', 'finally']);
    // Each job ran once: the one PHP failed was not run again.
    expect(s.nodeRuns().filter((r) => r.props.batchId === ok)).toHaveLength(2);
    expect(s.phpRuns().filter((r) => r.props?.batchId === ok)).toHaveLength(1);
    expect(s.nodeRuns().filter((r) => r.props.batchId === failing)).toHaveLength(2);
    expect(s.phpRuns().filter((r) => r.props?.batchId === failing)).toHaveLength(0);
  });

  /**
   * A batch of two (then/finally callbacks): Node takes the first and holds it (2 pending: not the
   * last) while PHP's worker runs the other, then lets it go: it is the last now. Node's worker
   * has `nodeKey` as its APP_KEY, PHP's app its own. Resolves to what lqb work said of the batch.
   */
  const nodeFinishesLast = async (nodeKey: (appKey: string) => string): Promise<{ batch: string; said: string }> => {
    s.env.APP_KEY = `base64:${randomBytes(32).toString('base64')}`;
    s.env.LQB_GO_FILE = join(s.dir, 'go');
    const { batch } = await bookkeeping('batch', { labels: ['wait', 'ok'], callbacks: true });
    const args = ['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--max-jobs=1', '--sleep=0', '--share'];
    const node = run('node', [join(root, 'dist/cli/main.js'), ...args, `--batch-db=${url}`, `--batch-table=${table}`], {
      ...s.env,
      APP_KEY: nodeKey(s.env.APP_KEY),
    });
    const deadline = Date.now() + 60_000;
    while (!s.nodeRuns().some((r) => r.props.batchId === batch)) {
      if (Date.now() > deadline)
        throw new Error(`lqb work did not start the batch's first job within 60 s: ${JSON.stringify(await row(batch))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await laravelWork();
    expect(await row(batch), 'the batch after PHP ran its second job, while Node holds the first').toMatchObject({
      pending_jobs: 1,
      finished: false,
    });
    writeFileSync(s.env.LQB_GO_FILE, '');
    const nodeDone = await node;
    expect(nodeDone.status, nodeDone.stderr).toBe(0);
    return {
      batch,
      said: nodeDone.stdout
        .split('\n')
        .filter((line) => line.includes(`batch ${batch}`))
        .join('\n'),
    };
  };

  it('--share: a job that became the last while it ran in Node (PHP finished the other meanwhile) hands the finish to PHP, which runs the callbacks once', async () => {
    const { batch, said } = await nodeFinishesLast((appKey) => appKey);
    expect(said, 'what lqb work said of the batch').toMatch(/its success is recorded by a no-op job of the batch pushed for a PHP worker/);
    const finished = await laravelWorkUntilFinished(batch);
    expect(finished, 'the batch once PHP ran what Node pushed').toMatchObject({
      total_jobs: 2,
      pending_jobs: 0,
      failed_jobs: 0,
      failed_job_ids: [],
      finished: true,
      cancelled: false,
    });
    expect(callbacks(batch), `the batch's callbacks PHP ran; lqb work said:\n${said}`).toEqual(['then', 'finally']);
    expect(
      [
        s
          .nodeRuns()
          .filter((r) => r.props.batchId === batch)
          .map((r) => r.props.label),
        s
          .phpRuns()
          .filter((r) => r.props?.batchId === batch)
          .map((r) => r.props.label),
      ],
      'the labels of the batch jobs each side ran',
    ).toEqual([['wait'], ['ok']]);
  });

  it('--share with another APP_KEY than the app’s: no job PHP would refuse is pushed; Node finishes the batch and says why the callbacks did not run', async () => {
    const { batch, said } = await nodeFinishesLast(() => `base64:${randomBytes(32).toString('base64')}`);
    expect(said, 'what lqb work said of the batch').toMatch(/signed with another APP_KEY than the one this worker was given/);
    expect(said, 'what lqb work said of the batch').toMatch(
      /then and finally callbacks are PHP closures Node cannot run: they did not run/,
    );
    expect(await row(batch), 'the batch Node finished').toMatchObject({ pending_jobs: 0, failed_jobs: 0, finished: true });
    await laravelWork();
    expect(
      s.phpRuns().filter((r) => r.callback || r.class?.includes('Closure')),
      'what PHP ran after Node finished',
    ).toEqual([]);
  });

  it('a batch shared by PHP and Node workers at once finishes, its then callback run once', async () => {
    // With the app's key, a job that becomes the last while it runs in Node hands the finish to PHP.
    s.env.APP_KEY = `base64:${randomBytes(32).toString('base64')}`;
    const { batch } = await bookkeeping('batch', { labels: Array.from({ length: 8 }, () => 'ok'), callbacks: true });
    const args = [
      'work',
      `--handlers=${HANDLERS}`,
      `--queue=${QUEUE}`,
      '--stop-when-empty',
      '--sleep=0',
      '--share',
      `--batch-db=${url}`,
      `--batch-table=${table}`,
    ];
    const [node, phpSide] = await Promise.all([
      run('node', [join(root, 'dist/cli/main.js'), ...args], s.env),
      php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env),
    ]);
    expect(node.status, node.stderr).toBe(0);
    expect(phpSide.status, phpSide.stderr).toBe(0);
    // A job given back a moment before PHP's worker stopped is still waiting: PHP takes it.
    await laravelWorkUntilFinished(batch);
    expect(await row(batch)).toMatchObject({ total_jobs: 8, pending_jobs: 0, failed_jobs: 0, finished: true, cancelled: false });
    expect(s.nodeRuns().length + s.phpRuns().filter((r) => r.props?.batchId === batch).length).toBe(8);
    // Node finishing the batch itself (it said the callbacks did not run) is the fault this test guards.
    const nodeSaid = node.stdout.split('\n').filter((line) => line.includes(`batch ${batch}`));
    expect(callbacks(batch), `the batch's callbacks PHP ran; lqb work said of the batch:\n${nodeSaid.join('\n')}`).toEqual([
      'then',
      'finally',
    ]);
  });
});

describe('a batch that is not where lqb work looks (--batch-db not the app’s database)', () => {
  it('its jobs run, the batch does not move, and the log says so once per batch, naming the database and table', async () => {
    const appDb = join(s.dir, 'app.sqlite');
    const table = `job_batches_${randomBytes(4).toString('hex')}`;
    // Laravel writes the batch into the app's database; the worker is pointed at another.
    s.env.LQB_BATCH_DB = appDb;
    s.env.LQB_BATCH_TABLE = table;
    const made = await php('laravel-bookkeeping.php', ['batch', JSON.stringify({ labels: ['ok', 'ok', 'ok'] })], s.env);
    expect(made.stderr, 'laravel-bookkeeping.php batch').toBe('');
    const { batch } = JSON.parse(made.stdout) as { batch: string };
    const other = join(s.dir, 'other.sqlite');
    // The other database has a batches table too, without this batch's row.
    const otherDb = openDatabase(databaseConfig(other));
    await otherDb.query(`create table ${quoteName(otherDb.dialect, table)} (id varchar(255) primary key, pending_jobs integer)`);
    await otherDb.close();

    const node = await lqb(
      [
        'work',
        `--handlers=${HANDLERS}`,
        `--queue=${QUEUE}`,
        '--stop-when-empty',
        '--sleep=0',
        `--batch-db=sqlite://${other}`,
        `--batch-table=${table}`,
        '--concurrency=2',
      ],
      s.env,
    );
    expect(node.status, node.stderr).toBe(0);
    expect(
      s.nodeRuns().filter((r) => r.props?.batchId === batch),
      'the batch’s jobs Node ran',
    ).toHaveLength(3);
    const said = node.stdout.split('\n').filter((line) => line.includes(`batch ${batch} is not in`));
    expect(said, `lqb work's lines about the missing batch:\n${node.stdout}`).toHaveLength(1);
    expect(said[0]).toContain(
      `batch ${batch} is not in table ${table} in sqlite://${other}: its jobs run, but the batch does not count them; point --batch-db`,
    );
    const row = await php('laravel-bookkeeping.php', ['batch-row', JSON.stringify({ id: batch })], s.env);
    expect(JSON.parse(row.stdout), 'the batch’s row in the app’s database').toMatchObject({ total_jobs: 3, pending_jobs: 3 });

    // A database without the table at all: said as such, and the job still runs.
    const second = await php('laravel-bookkeeping.php', ['batch', JSON.stringify({ labels: ['ok', 'ok'] })], s.env);
    const { batch: again } = JSON.parse(second.stdout) as { batch: string };
    const empty = join(s.dir, 'empty.sqlite');
    const bare = await lqb(
      [
        'work',
        `--handlers=${HANDLERS}`,
        `--queue=${QUEUE}`,
        '--stop-when-empty',
        '--sleep=0',
        `--batch-db=${empty}`,
        `--batch-table=${table}`,
      ],
      s.env,
    );
    expect(bare.status, bare.stderr).toBe(0);
    expect(
      s.nodeRuns().filter((r) => r.props?.batchId === again),
      'the second batch’s jobs Node ran',
    ).toHaveLength(2);
    const saidBare = bare.stdout.split('\n').filter((line) => line.includes(`batch ${again} is not in`));
    expect(saidBare, bare.stdout).toHaveLength(1);
    expect(saidBare[0]).toContain(`batch ${again} is not in table ${table} in sqlite://${empty} (no such table)`);
  });
});
