/**
 * The dashboard's database source over a jobs table Laravel 8.83 made and filled (its own
 * Schema builder and DatabaseQueue, php-fixture-gen/laravel-database-queue.php), on SQLite,
 * MariaDB and PostgreSQL: PHP pushes and reserves, the source counts, pages and cancels, and
 * Laravel's pop takes what the source pushed for a retry.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConnection } from '../../src/connect/settings.js';
import { createDashboard, type Dashboard } from '../../src/ui/index.js';
import { databaseConfig, openDatabase } from '../../src/database/index.js';
import { DatabaseQueueSource } from '../../src/ui/DatabaseQueueSource.js';
import { DECODED_UP_TO, HEAD_READ, TAIL_READ, summarizeJob } from '../../src/ui/jobs.js';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { QUEUE_DATABASES, withJobsTable, type JobsTable } from '../helpers/jobs-table.js';
import { php } from '../helpers/processes.js';

const READY = '00000000-0000-4000-8000-0000000000a1';
const DELAYED = '00000000-0000-4000-8000-0000000000a2';
const HELD = '00000000-0000-4000-8000-0000000000a3';

interface Row {
  id: number;
  queue: string;
  attempts: number;
  reserved_at: number | null;
  available_at: number;
  created_at: number;
  payload: string;
}

/** Laravel reserves HELD (pushed first, so its pop takes it), then pushes READY and DELAYED (600 s). */
async function fill(t: JobsTable): Promise<void> {
  await t.laravel('record', { uuid: HELD, n: 3, label: 'held' });
  const popped = await t.laravel('pop', { then: 'keep' });
  expect(JSON.parse(popped.payload).uuid, 'Laravel’s pop reserved HELD').toBe(HELD);
  await t.laravel('record', { uuid: READY, n: 1, label: 'hello', ratio: 0.5, items: [1, 2], flag: true });
  await t.laravel('record', { uuid: DELAYED, n: 2, label: 'later', delay: 600 });
}

const rowOf = (rows: Row[], uuid: string) => rows.find((row) => JSON.parse(row.payload).uuid === uuid);

describe.each(QUEUE_DATABASES)('DatabaseQueueSource on %s, over rows Laravel 8.83 wrote', (_name, url) => {
  it('counts, lists and decodes each state as Laravel’s pop sees it', () =>
    withJobsTable(url, async (t) => {
      await fill(t);
      const rows = (await t.laravel('rows')) as Row[];
      const source = new DatabaseQueueSource(openDatabase(databaseConfig(t.url)), { table: t.table });
      try {
        expect(await source.queueNames(), 'queues with rows').toEqual(['default']);
        expect(await source.counts('default'), 'counts of default').toEqual({ ready: 1, delayed: 1, reserved: 1 });
        expect(await source.counts('other'), 'counts of a queue with no rows').toEqual({ ready: 0, delayed: 0, reserved: 0 });

        const ready = await source.page('default', 'ready', 0, 25);
        expect(ready.total, 'ready total').toBe(1);
        const job = ready.jobs[0]!;
        const readyRow = rowOf(rows, READY)!;
        expect(job, 'READY: row id, attempts column, no time, created_at').toMatchObject({
          id: String(readyRow.id),
          attempts: 0,
          until: null,
          pushedAt: Number(readyRow.created_at),
        });
        const summary = summarizeJob(job.payload, job.until, {});
        expect(summary.uuid, 'READY: uuid').toBe(READY);
        expect(summary.id, 'a database payload has no id').toBeNull();
        expect(summary.properties, 'READY: the command decoded').toMatchObject({
          '@class': 'App\\Jobs\\Bridge\\RecordJob',
          n: 1,
          label: 'hello',
          items: [1, 2],
          flag: true,
        });

        const delayed = await source.page('default', 'delayed', 0, 25);
        const delayedRow = rowOf(rows, DELAYED)!;
        expect(
          delayed.jobs.map((j) => [j.id, j.until]),
          'DELAYED: due at its available_at',
        ).toEqual([[String(delayedRow.id), Number(delayedRow.available_at)]]);

        const reserved = await source.page('default', 'reserved', 0, 25);
        const heldRow = rowOf(rows, HELD)!;
        expect(
          reserved.jobs.map((j) => [j.id, j.attempts, j.until]),
          'HELD: attempts counted, reserved until reserved_at + 90',
        ).toEqual([[String(heldRow.id), 1, Number(heldRow.reserved_at) + 90]]);
      } finally {
        await source.close();
      }
    }));

  it('finds each job by its uuid alone, in the state its columns give it now', () =>
    withJobsTable(url, async (t) => {
      await fill(t);
      const source = new DatabaseQueueSource(openDatabase(databaseConfig(t.url)), { table: t.table });
      try {
        const found = async (uuid: string) => {
          const job = await source.find('default', uuid);
          return job && [job.state, JSON.parse(job.payload).uuid];
        };
        expect(await found(READY), 'READY').toEqual(['ready', READY]);
        expect(await found(DELAYED), 'DELAYED').toEqual(['delayed', DELAYED]);
        expect(await found(HELD), 'HELD, reserved by Laravel’s pop').toEqual(['reserved', HELD]);
        expect(await found('00000000-0000-4000-8000-0000000000ff'), 'a uuid no row has').toBeUndefined();
        const rows = (await t.laravel('rows')) as Row[];
        expect(await source.readySince('default'), 'the oldest ready row: READY, available since Laravel pushed it').toBe(
          rowOf(rows, READY)!.available_at,
        );
        expect(await source.readySince('other'), 'no ready row').toBeUndefined();
        expect(await source.find('other', READY), 'READY on another queue').toBeUndefined();
      } finally {
        await source.close();
      }
    }));

  it('reads a list cut: a row past DECODED_UP_TO as its size and two ends, never whole; whole when asked', () =>
    withJobsTable(url, async (t) => {
      await fill(t);
      const source = new DatabaseQueueSource(openDatabase(databaseConfig(t.url)), { table: t.table });
      try {
        const large = buildPayload(buildJob({ className: 'App\\Jobs\\Large', properties: { blob: 'x'.repeat(DECODED_UP_TO) } })).raw;
        await source.pushRaw(large, 'big');
        const [cut] = (await source.page('big', 'ready', 0, 1, { cut: true })).jobs;
        expect(cut?.cut?.bytes, `${_name}: the large row's size`).toBe(Buffer.byteLength(large));
        expect(cut?.payload, `${_name}: its head`).toBe(large.slice(0, HEAD_READ));
        expect(cut?.cut?.tail, `${_name}: its tail`).toBe(large.slice(-TAIL_READ));
        const [whole] = (await source.page('big', 'ready', 0, 1)).jobs;
        expect(whole?.payload === large && whole.cut === undefined, `${_name}: read whole`).toBe(true);
        const [smallCut] = (await source.page('default', 'ready', 0, 1, { cut: true })).jobs;
        expect(smallCut?.cut, `${_name}: a small row is read whole in a cut read`).toBeUndefined();
      } finally {
        await source.close();
      }
    }));

  it('counts a reservation older than retry_after as ready, as Laravel’s pop takes it', () =>
    withJobsTable(url, async (t) => {
      await fill(t);
      // retry_after 0 on both sides: HELD's reservation has expired already.
      const source = new DatabaseQueueSource(openDatabase(databaseConfig(t.url)), { table: t.table, retryAfter: 0 });
      try {
        expect(await source.counts('default'), 'counts with retry_after 0').toEqual({ ready: 2, delayed: 1, reserved: 0 });
        const ready = await source.page('default', 'ready', 0, 25);
        expect(
          ready.jobs.map((j) => JSON.parse(j.payload).uuid),
          'ready in id order: HELD (expired) first',
        ).toEqual([HELD, READY]);
      } finally {
        await source.close();
      }
      const popped = await php('laravel-database-queue.php', ['pop', '{"then":"keep"}'], { ...t.env, LQB_RETRY_AFTER: '0' });
      expect(JSON.parse(JSON.parse(popped.stdout).payload).uuid, 'Laravel’s pop with retry_after 0 takes the first ready: HELD').toBe(HELD);
    }));

  it('cancels a delayed job by uuid: its row alone is deleted; a ready or reserved job is left, and said where it is', () =>
    withJobsTable(url, async (t) => {
      await fill(t);
      const source = new DatabaseQueueSource(openDatabase(databaseConfig(t.url)), { table: t.table });
      try {
        expect(await source.cancel('default', READY), 'cancel READY').toEqual({
          cancelled: false,
          queue: 'default',
          uuid: READY,
          state: 'ready',
        });
        expect(await source.cancel('default', HELD), 'cancel HELD').toEqual({
          cancelled: false,
          queue: 'default',
          uuid: HELD,
          state: 'reserved',
        });
        expect(await source.cancel('other', DELAYED), 'cancel on another queue').toMatchObject({ cancelled: false, state: 'missing' });
        expect(await source.cancel('default', "x' or 1=1 --"), 'a uuid that is not one').toMatchObject({
          cancelled: false,
          state: 'missing',
        });
        expect(await source.cancel('default', DELAYED), 'cancel DELAYED').toEqual({ cancelled: true, queue: 'default', uuid: DELAYED });
        const left = ((await t.laravel('rows')) as Row[]).map((row) => JSON.parse(row.payload).uuid).sort();
        expect(left, 'rows left after the cancels').toEqual([HELD, READY].sort());
        expect((await t.laravel('size')).size, 'Laravel’s size after the cancel').toBe(2);
      } finally {
        await source.close();
      }
    }));

  it('pushes a retried payload as DatabaseQueue::pushRaw does: Laravel’s pop takes it', () =>
    withJobsTable(url, async (t) => {
      const source = new DatabaseQueueSource(openDatabase(databaseConfig(t.url)), { table: t.table });
      try {
        await source.pushRaw(
          '{"uuid":"u-retried","displayName":"App\\\\Jobs\\\\X","job":"Illuminate\\\\Queue\\\\CallQueuedHandler@call","data":{}}',
          'default',
        );
      } finally {
        await source.close();
      }
      const popped = await t.laravel('pop', { then: 'delete' });
      expect(popped, 'Laravel’s pop of the pushed row').toMatchObject({ attempts: 1 });
      expect(JSON.parse(popped.payload).uuid).toBe('u-retried');
    }));
});

describe('createDashboard on the database connection, as a Laravel .env names it', () => {
  it('reads the jobs table QUEUE_CONNECTION, DB_* and DB_QUEUE_TABLE name; no Redis is named, so none is opened', () =>
    withJobsTable(QUEUE_DATABASES[0]![1], async (t) => {
      await fill(t);
      const envFile = join(t.dir, '.env');
      writeFileSync(
        envFile,
        ['APP_NAME=Laravel', 'QUEUE_CONNECTION=database', 'DB_CONNECTION=sqlite', `DB_DATABASE=${t.url}`, `DB_QUEUE_TABLE=${t.table}`].join(
          '\n',
        ),
      );
      // The process's environment wins over a .env: the helper's variables for PHP are not the dashboard's.
      const saved = { ...process.env };
      for (const name of ['QUEUE_CONNECTION', 'LQB_QUEUE_DB', 'LQB_FAILED_DB', 'REDIS_URL', 'REDIS_PREFIX']) delete process.env[name];
      let dashboard: Dashboard | undefined;
      try {
        const connection = resolveConnection({ env: envFile });
        expect(connection, 'what the .env resolves').toMatchObject({
          queueConnection: 'database',
          queueDb: `sqlite://${t.url}`,
          jobsTable: t.table,
          redisNamed: false,
        });
        dashboard = createDashboard({ settings: { env: envFile } });
        const server = createServer(dashboard.handler);
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        try {
          const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
          const overview = (await (await fetch(`${base}/api/overview`)).json()) as { queues: Record<string, unknown>[]; horizon: unknown };
          expect(overview.queues, 'the queues of the jobs table').toEqual([
            expect.objectContaining({
              name: 'default',
              connection: 'database',
              ready: 1,
              delayed: 1,
              reserved: 1,
              failed: 0,
              paused: false,
            }),
          ]);
          expect(overview.horizon, 'no Horizon on the database connection without Redis').toBeNull();
          const page = (await (await fetch(`${base}/api/queues/default/jobs?state=reserved`)).json()) as {
            jobs: { uuid: string; attempts: number }[];
          };
          expect(
            page.jobs.map((job) => [job.uuid, job.attempts]),
            'the reserved job and its attempts column',
          ).toEqual([[HELD, 1]]);
        } finally {
          await new Promise((resolve) => server.close(resolve));
        }
      } finally {
        await dashboard?.close();
        process.env = saved;
      }
    }));
});
