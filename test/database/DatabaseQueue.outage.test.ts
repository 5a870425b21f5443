/**
 * DatabaseQueue when its server goes away: on PostgreSQL and MariaDB servers of the test's own
 * (test/helpers/db-servers.ts), killed with SIGKILL and started again. A finished job's delete
 * that meets the outage is done once the server answers (the job does not run again); a worker
 * on the queue says the outage in one line and its end in one, health() says it meanwhile, and
 * it goes on taking jobs. A late delete removes the row by its id whatever the row's reservation
 * says by then (on every database, the shared ones). A SQLite file that cannot be opened is said
 * and tried again, never thrown out of the worker.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DatabaseQueue } from '../../src/database/index.js';
import { Worker, type WorkerEvent } from '../../src/worker/index.js';
import { startPrivateMariadb, startPrivatePostgres, type PrivateServer } from '../helpers/db-servers.js';
import { QUEUE_DATABASES, withJobsTable } from '../helpers/jobs-table.js';

const payload = (uuid: string) =>
  `{"uuid":"${uuid}","displayName":"App\\\\Jobs\\\\Noop","job":"Illuminate\\\\Queue\\\\CallQueuedHandler@call","maxTries":null,"data":{"commandName":"App\\\\Jobs\\\\Noop","command":"O:13:\\"App\\\\Jobs\\\\Noop\\":0:{}"}}`;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `done` until it holds, or fails naming `what` and what was seen last. */
async function waitFor(what: string, done: () => boolean | Promise<boolean>, seen: () => string = () => '', ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await done()) return;
    await pause(50);
  }
  throw new Error(`waited ${ms / 1000} s for ${what}; last seen: ${seen()}`);
}

/** Jobs table rows by id: [id, attempts, reserved_at]. */
async function rowsOf(q: DatabaseQueue, table: string): Promise<[string, number, number | null][]> {
  const { rows } = await q.db.query<Record<string, unknown>>(`select id, attempts, reserved_at from ${table} order by id`);
  return rows.map((r) => [String(r.id), Number(r.attempts), r.reserved_at === null ? null : Number(r.reserved_at)]);
}

describe.each(QUEUE_DATABASES)('DatabaseQueue on %s: a late delete', (_, url) => {
  it('removes the row by its id, though its reservation ran out and another reserve took it since (reserved_at and attempts changed)', () =>
    withJobsTable(url, async (t) => {
      const clock = { now: Math.floor(Date.now() / 1000) };
      const options = { table: t.table, retryAfter: 5, now: () => clock.now };
      const first = DatabaseQueue.open(t.url, options);
      const second = DatabaseQueue.open(t.url, options);
      try {
        const id = await first.pushRaw(payload(uuid(1)));
        const finished = await first.pop();
        expect(finished?.id, 'the job the first worker reserved').toBe(id);
        // Its reservation runs out (the first worker's delete held up by an outage), and another worker takes it.
        clock.now += 6;
        const again = await second.pop();
        expect([again?.id, again?.attempts()], 'the second reserve: the same row, its second attempt').toEqual([id, 2]);
        expect(await rowsOf(first, t.table), 'the row as the second reserve left it').toEqual([[id, 2, clock.now]]);
        await finished!.delete();
        expect(await rowsOf(first, t.table), 'rows after the first worker’s late delete of the job it finished').toEqual([]);
        await again!.delete();
        expect(await rowsOf(first, t.table), 'rows after the second worker’s delete, of a row already gone').toEqual([]);
      } finally {
        await first.close();
        await second.close();
      }
    }));
});

const SERVERS: [string, () => Promise<PrivateServer>][] = [
  ['PostgreSQL', startPrivatePostgres],
  ['MariaDB', startPrivateMariadb],
];

describe.each(SERVERS)('DatabaseQueue on a %s server killed and restarted', (_, start) => {
  let server: PrivateServer;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(async () => {
    await server?.remove();
  });
  // Each test finds the server running, whatever the one before it left.
  beforeEach(async () => {
    if (server.pid === undefined) await server.restart();
  });

  it('a finished job’s delete that met the outage is done once the server answers again: the row is gone, not left to run again', () =>
    withJobsTable(
      () => server.url,
      async (t) => {
        const queue = DatabaseQueue.open(server.url, { table: t.table, retryAfter: 2 });
        try {
          const id = await queue.pushRaw(payload(uuid(2)));
          const job = await queue.pop();
          expect(job?.id, 'the job reserved').toBe(id);
          await server.kill();
          let settled: string | undefined;
          const deleting = job!.delete().then(
            () => (settled = 'deleted'),
            (error: Error) => (settled = `failed: ${error.message}`),
          );
          await waitFor('the delete to meet the outage', () => queue.db.reach?.status === 'reconnecting' || settled !== undefined);
          expect(settled, 'the delete, while the server is down').toBeUndefined();
          await server.restart();
          await deleting;
          expect(settled, 'the delete, once the server answers').toBe('deleted');
          expect(await rowsOf(queue, t.table), 'rows once the server is back').toEqual([]);
        } finally {
          await queue.close();
        }
      },
    ));

  it('a worker says the outage in one line and its end in one, health() says it meanwhile, and it goes on taking jobs', () =>
    withJobsTable(
      () => server.url,
      async (t) => {
        const queue = DatabaseQueue.open(server.url, { table: t.table, retryAfter: 30 });
        const events: WorkerEvent[] = [];
        const ran: string[] = [];
        const worker = new Worker(
          queue,
          { 'App\\Jobs\\Noop': async (job) => void ran.push(job.uuid ?? '') },
          { queues: ['default'], sleep: 0.05, concurrency: 8, memory: 0, share: false },
          { failer: false, log: (event) => events.push(event) },
        );
        const said = () => events.map((e) => `${e.event}: ${e.error ?? e.reason ?? e.job ?? ''}`).join(' | ');
        const running = worker.run();
        try {
          await queue.pushRaw(payload(uuid(3)));
          await waitFor('the first job to run', () => ran.length === 1, said);
          expect(worker.health().connected, 'health() before the outage').toBe(true);
          await server.kill();
          await waitFor('health() to say the outage', () => !worker.health().connected, said);
          // The worker keeps trying (about once a second) while the server is down.
          await pause(2500);
          const down = worker.health();
          expect([down.connected, down.downSince instanceof Date], 'health() during the outage: connected, downSince').toEqual([
            false,
            true,
          ]);
          await server.restart();
          await waitFor('health() to say the server is back', () => worker.health().connected, said);
          await queue.pushRaw(payload(uuid(4)));
          await waitFor('the job pushed after the outage to run', () => ran.length === 2, said);
          expect(ran, 'the jobs run, each once').toEqual([uuid(3), uuid(4)]);
          const errors = events.filter((e) => e.event === 'error');
          expect(
            errors.map((e) => e.error?.replace(/(unreachable)[^:]*: .*/, '$1')),
            'the error lines: one for the outage, none per retry',
          ).toEqual(["the queue's database is unreachable"]);
          expect(errors[0]?.error, 'the outage line names the server').toContain(`127.0.0.1:${server.port}/test`);
          expect(
            events.filter((e) => e.event === 'reconnected').map((e) => e.reason?.replace(/after [\d.]+ s/, 'after N s')),
            'the line saying the server is back',
          ).toEqual([`${server.engine === 'MariaDB' ? 'MySQL' : 'PostgreSQL'} at 127.0.0.1:${server.port}/test answers again, after N s`]);
          expect(worker.health().downSince, 'health() after the outage: downSince').toBeNull();
        } finally {
          await worker.stop();
          await running;
          await queue.close();
        }
      },
    ));
});

describe('DatabaseQueue on a SQLite file that cannot be opened', () => {
  it('the worker says why, tries again, and takes jobs once the file can be opened: nothing thrown out of it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lqb-sqlite-missing-'));
    const folder = join(dir, 'not-yet');
    const file = join(folder, 'queue.sqlite');
    const queue = DatabaseQueue.open(file, { table: 'jobs' });
    const events: WorkerEvent[] = [];
    const ran: string[] = [];
    const worker = new Worker(
      queue,
      { 'App\\Jobs\\Noop': async (job) => void ran.push(job.uuid ?? '') },
      { queues: ['default'], sleep: 0.05, concurrency: 4, memory: 0, share: false },
      { failer: false, log: (event) => events.push(event) },
    );
    const said = () => events.map((e) => `${e.event}: ${e.error ?? ''}`).join(' | ');
    const running = worker.run();
    try {
      await waitFor('the worker to say the file cannot be opened', () => events.some((e) => e.event === 'error'), said);
      expect(events.find((e) => e.event === 'error')?.error, 'what the worker says of a file in a missing folder').toMatch(
        /directory does not exist|unable to open/i,
      );
      mkdirSync(folder);
      const setup = DatabaseQueue.open(file, { table: 'jobs' });
      await setup.db.query(
        'create table jobs (id integer primary key autoincrement, queue varchar not null, payload text not null, attempts integer not null, reserved_at integer, available_at integer not null, created_at integer not null)',
      );
      await setup.pushRaw(payload(uuid(5)));
      await setup.close();
      await waitFor('the job to run once the file is there', () => ran.length === 1, said);
      expect(ran, 'the job run').toEqual([uuid(5)]);
      expect(worker.health().running, 'the worker, still running').toBe(true);
    } finally {
      await worker.stop();
      await running;
      await queue.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
