/**
 * The library on Laravel's database connection: connect({ env }) with a Laravel 11 .env
 * (QUEUE_CONNECTION=database, CACHE_STORE=database) picks the driver, dispatches the database's payload (no id, no attempts) and
 * returns the row id, sizes and finds through the queue contract, and its worker runs what
 * Laravel 8.83 pushed; with no Redis named, nothing is opened on Redis. And the worker's reserve
 * error rule: Laravel 12.54+ fails a job whose reserve threw (its attempts column full), 8.83's
 * leaves it to block the queue. Real Laravel 8.83 (laravel-database-queue.php, laravel-worker.php).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/connect/index.js';
import { buildWorker } from '../../src/connect/buildWorker.js';
import { resolveConnection } from '../../src/connect/settings.js';
import { DatabaseQueue } from '../../src/database/index.js';
import { DatabaseQueueCache } from '../../src/worker/DatabaseQueueCache.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/FailedJobProvider.js';
import { defineHandlers } from '../../src/worker/handlers.js';
import { php } from '../helpers/processes.js';
import { root } from '../helpers/php.js';
import { QUEUE_DATABASES, withJobsTable, type JobsTable } from '../helpers/jobs-table.js';

const JOB = 'App\\Jobs\\Bridge\\RecordJob';
const [sqlite, , postgres] = QUEUE_DATABASES as [(typeof QUEUE_DATABASES)[0], (typeof QUEUE_DATABASES)[0], (typeof QUEUE_DATABASES)[0]];

const url = (t: JobsTable) => (t.url.includes('://') ? t.url : `sqlite://${t.url}`);

function phpRuns(t: JobsTable): Record<string, any>[] {
  const file = t.env.LQB_RECORD_FILE!;
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
}

describe('connect() on the database connection', () => {
  it('dispatch writes the database payload and returns the row id; size and find; its worker runs what Laravel pushed; no Redis', () =>
    withJobsTable(sqlite[1], async (t) => {
      // A Laravel 11 skeleton's .env: REDIS_HOST is there whether the app uses Redis or not, and here
      // nothing listens on its port, so a Redis client opened would make connect() reject.
      const envFile = join(t.dir, '.env');
      writeFileSync(
        envFile,
        `DB_CONNECTION=sqlite\nDB_DATABASE=${t.url}\nQUEUE_CONNECTION=database\nDB_QUEUE_TABLE=${t.table}\nCACHE_STORE=database\nREDIS_HOST=127.0.0.1\nREDIS_PORT=1\n`,
      );
      const queue = await connect({ env: envFile, connectTimeout: 500 });
      try {
        expect(queue.driver, 'the driver connect() picked').toBe('database');
        expect(queue.cache, 'the worker cache: the database store').toBeInstanceOf(DatabaseQueueCache);
        expect(() => queue.connection, 'no RedisQueue on the database connection').toThrow(/database queue connection/);
        const pushed = await queue.dispatch(JOB, { n: 4, label: 'lib', ratio: 0.5, items: [], flag: null });
        const rows = (await t.laravel('rows')) as Record<string, any>[];
        expect(
          rows.map((row) => [Number(row.id), Object.keys(JSON.parse(row.payload)).includes('id'), Number(row.attempts)]),
          'the row dispatch wrote, its id returned',
        ).toEqual([[pushed.id, false, 0]]);
        expect(await queue.size(), 'size').toBe(1);
        expect(await queue.find(pushed.uuid!), 'find by uuid').toMatchObject({ state: 'ready', id: String(pushed.id), attempts: 0 });
        const ran = await php('laravel-worker.php', ['database', '--stop-when-empty'], t.env, { timeoutMs: 60_000 });
        expect(ran.status, `Laravel's worker: ${ran.stderr}`).toBe(0);
        expect(
          phpRuns(t).map((run) => [String(run.jobId), run.uuid, run.props.label]),
          'Laravel runs what connect() dispatched',
        ).toEqual([[String(pushed.id), pushed.uuid, 'lib']]);
        // Laravel's own pushRaw on the same table returns its row id as an int (insertGetId): dispatch's id has that type.
        const laravelPushed = (await t.laravel('push', {}, JSON.stringify({ uuid: 'x', displayName: 'X', job: 'X', data: {} }))) as {
          id: unknown;
        };
        expect([typeof pushed.id, typeof laravelPushed.id], 'the type of the row id dispatch returns, beside Laravel pushRaw’s').toEqual([
          'number',
          'number',
        ]);
        await t.laravel('clear');

        await t.laravel('record', { uuid: '7d7c1b1e-0000-4000-8000-0000000000c1', n: 9, label: 'back', ratio: 1.5, items: [2] });
        const seen: unknown[] = [];
        const handlers = defineHandlers({ [JOB]: async (job) => void seen.push([job.attempts, job.command.n, job.command.ratio]) });
        // The cache table of the database store, as Laravel 8.83's cache migration makes it.
        execFileSync('php', [`${root}php-fixture-gen/cache-store.php`], {
          input: JSON.stringify({
            connection: { driver: 'sqlite', database: t.url, prefix: '' },
            table: 'cache',
            prefix: '',
            ops: [{ op: 'create' }],
          }),
        });
        const worker = queue.worker(handlers, { stopWhenEmpty: true, sleep: 0, memory: 0, share: false });
        expect((await worker.run()).reason, 'the worker stops once the table is empty').toBe('empty');
        expect(seen, 'what connect()’s worker ran: Laravel’s job, attempts from the column').toEqual([[1, 9, 1.5]]);
        expect(worker.startLine(), 'the start line names the jobs table').toContain(`database ${t.table} in `);
      } finally {
        await queue.close();
      }
    }));
});

describe('a reserve that throws (the attempts column full), on PostgreSQL', () => {
  const overflowing = async (t: JobsTable): Promise<DatabaseQueue> => {
    await t.laravel('record', { uuid: '7d7c1b1e-0000-4000-8000-0000000000d1', n: 1, label: 'full', ratio: 0.5, items: [] });
    const queue = DatabaseQueue.open(url(t), { table: t.table });
    // smallint's largest: the reserve's attempts + 1 overflows, as a tinyint's 255 does on MySQL.
    await queue.db.query(`update "${t.table}" set attempts = 32767`);
    return queue;
  };
  const run = async (t: JobsTable, laravel: string) => {
    const settings = resolveConnection({
      connection: 'database',
      queueDb: url(t),
      jobsTable: t.table,
      failedDb: `sqlite://${t.env.LQB_FAILED_DB}`,
    });
    const failer = DatabaseUuidFailedJobProvider.fromUrl(settings.failedDb);
    const events: string[] = [];
    const built = buildWorker({
      settings,
      handlers: { [JOB]: async () => undefined },
      options: { maxJobs: 1, maxTime: 3, sleep: 0.2, memory: 0, tries: 0 },
      bookkeeping: { cacheStore: 'redis', unreachableLocks: 'not in this test' },
      failer,
      laravel,
      log: (event) => void events.push(`${event.event}: ${'error' in event ? String(event.error) : ''}`),
    });
    try {
      await built.worker.run();
      return { failed: await failer.all(), events };
    } finally {
      await built.close();
      await failer.close();
    }
  };

  it('12.54+: the job is failed into failed_jobs and its row deleted', () =>
    withJobsTable(postgres[1], async (t) => {
      const queue = await overflowing(t);
      try {
        const { failed } = await run(t, '12.54.0');
        expect(
          failed.map((f) => [f.uuid, f.connection]),
          'the job failed by its reserve error',
        ).toEqual([['7d7c1b1e-0000-4000-8000-0000000000d1', 'database']]);
        expect(failed[0]?.exception, 'the exception recorded').toMatch(/could not reserve job/);
        expect(await queue.size(), 'its row, deleted').toBe(0);
      } finally {
        await queue.close();
      }
    }));

  it('before 12.54: the reserve error is said and the row stays, as Laravel 8.83 leaves it', () =>
    withJobsTable(postgres[1], async (t) => {
      const queue = await overflowing(t);
      try {
        const { failed, events } = await run(t, '8.83.29');
        expect(failed, 'nothing failed').toEqual([]);
        expect(
          events.some((line) => /could not reserve job/.test(line)),
          `the error said: ${events.join(' | ')}`,
        ).toBe(true);
        expect(await queue.size(), 'the row stays').toBe(1);
      } finally {
        await queue.close();
      }
    }));
});
