/**
 * DatabaseQueue on real SQLite, MariaDB and PostgreSQL, over a jobs table Laravel's own Schema
 * builder made: the rows each step leaves, read back with SQL. A clock of the test's own stands
 * in for time passing (delays, expired reservations). What Laravel itself does on the same
 * table is in test/e2e/database-queue.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { DatabaseQueue, DatabaseReserveError, lockForPopping, phpVersionCompare } from '../../src/database/index.js';
import { QUEUE_DATABASES, withJobsTable, type JobsTable } from '../helpers/jobs-table.js';

const payload = (uuid: string, extra = '') =>
  `{"uuid":"${uuid}","displayName":"App\\\\Jobs\\\\Noop","job":"Illuminate\\\\Queue\\\\CallQueuedHandler@call","maxTries":null,"data":{"commandName":"App\\\\Jobs\\\\Noop","command":"O:13:\\"App\\\\Jobs\\\\Noop\\":0:{}"}${extra}}`;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

interface Row {
  id: string;
  queue: string;
  payload: string;
  attempts: number;
  reserved_at: number | null;
  available_at: number;
  created_at: number;
}

/** A queue on the table with a clock the test moves, and the table's rows read with SQL. */
async function withQueue(
  url: (dir: string) => string,
  work: (q: DatabaseQueue, rows: () => Promise<Row[]>, clock: { now: number }, t: JobsTable) => Promise<void>,
  options: { retryAfter?: number | null } = {},
): Promise<void> {
  await withJobsTable(url, async (t) => {
    const clock = { now: Math.floor(Date.now() / 1000) };
    const q = DatabaseQueue.open(t.url, { table: t.table, now: () => clock.now, ...options });
    const rows = async () =>
      (await q.db.query<Record<string, unknown>>(`select * from ${t.table} order by id`)).rows.map((r) => ({
        id: String(r.id),
        queue: String(r.queue),
        payload: String(r.payload),
        attempts: Number(r.attempts),
        reserved_at: r.reserved_at === null ? null : Number(r.reserved_at),
        available_at: Number(r.available_at),
        created_at: Number(r.created_at),
      }));
    try {
      await work(q, rows, clock, t);
    } finally {
      await q.close();
    }
  });
}

describe.each(QUEUE_DATABASES)('DatabaseQueue on %s', (_, url) => {
  it('push, later and bulk insert rows as Laravel writes them: attempts 0, not reserved, due now or after the delay', () =>
    withQueue(url, async (q, rows, clock) => {
      const first = await q.pushRaw(payload(uuid(1)));
      const second = await q.laterRaw(30, payload(uuid(2)), 'emails');
      await q.bulkRaw([payload(uuid(3)), payload(uuid(4))]);
      expect(Number(second), 'ids grow').toBeGreaterThan(Number(first));
      const all = await rows();
      expect(
        all.map(({ id, ...row }) => ({ ...row, idIsNumber: /^\d+$/.test(id) })),
        'the rows',
      ).toEqual([
        {
          queue: 'default',
          payload: payload(uuid(1)),
          attempts: 0,
          reserved_at: null,
          available_at: clock.now,
          created_at: clock.now,
          idIsNumber: true,
        },
        {
          queue: 'emails',
          payload: payload(uuid(2)),
          attempts: 0,
          reserved_at: null,
          available_at: clock.now + 30,
          created_at: clock.now,
          idIsNumber: true,
        },
        {
          queue: 'default',
          payload: payload(uuid(3)),
          attempts: 0,
          reserved_at: null,
          available_at: clock.now,
          created_at: clock.now,
          idIsNumber: true,
        },
        {
          queue: 'default',
          payload: payload(uuid(4)),
          attempts: 0,
          reserved_at: null,
          available_at: clock.now,
          created_at: clock.now,
          idIsNumber: true,
        },
      ]);
      expect(all[0]!.id, 'pushRaw resolves to the row id').toBe(first);
      expect(all[1]!.id, 'laterRaw resolves to the row id').toBe(second);
      expect([await q.size(), await q.readySize(), await q.delayedSize('emails'), await q.size('emails')], 'sizes').toEqual([3, 3, 1, 1]);
    }));

  it('pop takes the oldest due row by id: reserved_at = now, attempts + 1; the job reads the row', () =>
    withQueue(url, async (q, rows, clock) => {
      await q.laterRaw(10, payload(uuid(1)));
      const due = await q.pushRaw(payload(uuid(2)));
      await q.pushRaw(payload(uuid(3)));
      const job = (await q.pop())!;
      expect([job.id, job.uuid, job.raw, job.attempts(), job.firstAttempt, job.queue], 'the job').toEqual([
        due,
        uuid(2),
        payload(uuid(2)),
        1,
        true,
        'default',
      ]);
      expect([job.fields.id, job.fields.attempts, job.payload.name, job.unreadable()], 'fields from the row').toEqual([
        due,
        1,
        'App\\Jobs\\Noop',
        undefined,
      ]);
      const row = (await rows()).find((r) => r.id === due)!;
      expect([row.reserved_at, row.attempts], 'the reserved row').toEqual([clock.now, 1]);
      expect([await q.readySize(), await q.reservedSize(), await q.delayedSize()], 'sizes').toEqual([1, 1, 1]);
      clock.now += 10;
      expect((await q.pop())!.uuid, 'the next by id').toBe(uuid(1));
      expect((await q.pop())!.uuid, 'then the last').toBe(uuid(3));
      expect(await q.pop(), 'then none').toBeNull();
    }));

  it('a reservation older than retry_after is taken again, its attempts counted again', () =>
    withQueue(
      url,
      async (q, rows, clock, t) => {
        await q.pushRaw(payload(uuid(1)));
        expect((await q.pop())!.attempts(), 'first attempt').toBe(1);
        clock.now += 59;
        const other = DatabaseQueue.open(t.url, { table: t.table, retryAfter: 60, now: () => clock.now });
        try {
          expect(await other.pop(), 'still reserved at 59 s').toBeNull();
          clock.now += 1;
          const again = (await other.pop())!;
          expect([again.attempts(), again.firstAttempt], 'taken again at 60 s').toEqual([2, false]);
          expect((await rows())[0]!.reserved_at, 'reserved anew').toBe(clock.now);
        } finally {
          await other.close();
        }
      },
      { retryAfter: 60 },
    ));

  it('popMany: two queues reserving at once never take the same job; together they take each once', () =>
    withQueue(url, async (q, rows, clock, t) => {
      await q.bulkRaw(Array.from({ length: 20 }, (_, i) => payload(uuid(i + 1))));
      const other = DatabaseQueue.open(t.url, { table: t.table, now: () => clock.now });
      try {
        // One round at once, then both drain what is left. (A reserve may come back empty while
        // the other holds the rows: MariaDB may scan, and so lock, every row of a small table
        // for Laravel's query; SKIP LOCKED then skips them all. Never the same job twice.)
        const ids: string[] = [];
        const [a, b] = await Promise.all([q.popMany(undefined, 8), other.popMany(undefined, 8)]);
        ids.push(...[...a, ...b].map((job) => job.id));
        expect(new Set(ids).size, 'distinct jobs in the first round').toBe(ids.length);
        for (;;) {
          const [c, d] = await Promise.all([q.popMany(undefined, 8), other.popMany(undefined, 8)]);
          if (c.length + d.length === 0) break;
          ids.push(...[...c, ...d].map((job) => job.id));
        }
        expect([ids.length, new Set(ids).size], 'jobs taken, distinct').toEqual([20, 20]);
        const reserved = await rows();
        expect(reserved.map((row) => row.id).sort(), 'reserved rows').toEqual([...ids].sort());
        expect(new Set(reserved.map((row) => [row.attempts, row.reserved_at].join())), 'attempts and reserved_at of each').toEqual(
          new Set([`1,${clock.now}`]),
        );
      } finally {
        await other.close();
      }
    }));

  it('release deletes the row and inserts a new one with the same payload and attempts, due after the delay', () =>
    withQueue(url, async (q, rows, clock) => {
      await q.pushRaw(payload(uuid(1)));
      await q.pushRaw(payload(uuid(2)));
      const job = (await q.pop())!;
      const newId = await q.release(job, 5);
      const after = await rows();
      expect(
        after.map((row) => row.id),
        'the old row went, a new one is last',
      ).toEqual([after[0]!.id, newId]);
      expect(Number(newId), 'a new id').toBeGreaterThan(Number(job.id));
      expect(after[1], 'the new row').toEqual({
        id: newId,
        queue: 'default',
        payload: payload(uuid(1)),
        attempts: 1,
        reserved_at: null,
        available_at: clock.now + 5,
        created_at: clock.now,
      });
      clock.now += 5;
      expect((await q.pop())!.uuid, 'the other job first').toBe(uuid(2));
      expect((await q.pop())!.attempts(), 'the released job counts on').toBe(2);
    }));

  it('giveBack: a new row at the back with the attempt not spent', () =>
    withQueue(url, async (q, rows) => {
      await q.pushRaw(payload(uuid(1)));
      const job = (await q.pop())!;
      const newId = await job.giveBack().then(() => rows());
      expect(
        newId.map((row) => [row.payload, row.attempts, row.reserved_at]),
        'the row given back',
      ).toEqual([[payload(uuid(1)), 0, null]]);
      expect((await q.pop())!.attempts(), 'the next reserve is the first attempt again').toBe(1);
    }));

  it('delete removes the rows, several in one go, and those asked for during a delete after it', () =>
    withQueue(url, async (q, rows) => {
      await q.bulkRaw([payload(uuid(1)), payload(uuid(2)), payload(uuid(3))]);
      const jobs = await q.popMany(undefined, 3);
      await Promise.all(jobs.slice(0, 2).map((job) => job.delete()));
      expect(
        (await rows()).map((row) => row.payload),
        'what is left',
      ).toEqual([payload(uuid(3))]);
      // Deletes asked for while another batch commits wait for it, then go together.
      await q.bulkRaw([payload(uuid(4)), payload(uuid(5)), payload(uuid(6))]);
      const more = await q.popMany(undefined, 4);
      const first = more[0]!.delete();
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all([first, ...more.slice(1).map((job) => job.delete())]);
      expect(more.length, 'the three new jobs').toBe(3);
      expect(
        (await rows()).map((row) => row.payload),
        'after deletes asked for while one was under way',
      ).toEqual([payload(uuid(3))]);
    }));

  it('renew keeps a running job reserved; a row another worker took back is not renewed', () =>
    withQueue(
      url,
      async (q, rows, clock, t) => {
        await q.bulkRaw([payload(uuid(1)), payload(uuid(2))]);
        const [kept, lost] = await q.popMany(undefined, 2);
        clock.now += 60;
        const other = DatabaseQueue.open(t.url, { table: t.table, retryAfter: 60, now: () => clock.now });
        try {
          await q.renew([kept!]);
          const taken = (await other.pop())!;
          expect(taken.id, 'the other worker takes only the job not renewed').toBe(lost!.id);
          clock.now += 5;
          await q.renew([kept!, lost!]);
          const after = await rows();
          expect(
            after.map((row) => [row.reserved_at, row.attempts]),
            'renewed, and left as the other worker reserved it',
          ).toEqual([
            [clock.now, 1],
            [clock.now - 5, 2],
          ]);
        } finally {
          await other.close();
        }
      },
      { retryAfter: 60 },
    ));

  it('a job this worker still runs, whose reservation ran out, is renewed by its own next reserve and not handed out twice', () =>
    withQueue(
      url,
      async (q, rows, clock) => {
        await q.pushRaw(payload(uuid(1)));
        const job = (await q.pop())!;
        clock.now += 60;
        expect(await q.pop(), 'not handed out again').toBeNull();
        expect(
          (await rows()).map((row) => [row.reserved_at, row.attempts]),
          'renewed, attempts as they were',
        ).toEqual([[clock.now, 1]]);
        await job.delete();
        expect(await rows(), 'then deleted').toEqual([]);
      },
      { retryAfter: 60 },
    ));

  it('clear deletes every row of the queue, reserved ones too, and says how many', () =>
    withQueue(url, async (q) => {
      await q.bulkRaw([payload(uuid(1)), payload(uuid(2))]);
      await q.laterRaw(60, payload(uuid(3)));
      await q.pushRaw(payload(uuid(4)), 'other');
      await q.pop();
      expect(await q.clear(), 'cleared').toBe(3);
      expect([await q.size(), await q.size('other')], 'sizes after').toEqual([0, 1]);
    }));

  it('find: by row id or by uuid, ready, delayed or reserved', () =>
    withQueue(
      url,
      async (q, _rows, clock) => {
        const ready = await q.pushRaw(payload(uuid(1)));
        const delayed = await q.laterRaw(30, payload(uuid(2)));
        await q.pushRaw(payload(uuid(3), ',"note":"00000000-0000-4000-8000-000000000001%_!"'));
        const reserved = (await q.pop())!;
        expect(await q.find(ready), 'by id').toMatchObject({ state: 'reserved', id: ready, attempts: 1, until: clock.now + 90 });
        expect(await q.find(uuid(2)), 'by uuid').toMatchObject({ state: 'delayed', id: delayed, until: clock.now + 30 });
        expect(await q.find(uuid(3)), 'ready').toMatchObject({
          state: 'ready',
          payload: payload(uuid(3), ',"note":"00000000-0000-4000-8000-000000000001%_!"'),
        });
        expect(await q.find(uuid(1)), 'the uuid itself, not one inside another field').toMatchObject({ id: reserved.id });
        expect(await q.find(uuid(9)), 'none').toBeUndefined();
        expect(await q.find(uuid(1), 'other'), 'on another queue').toBeUndefined();
      },
      { retryAfter: 90 },
    ));

  it('with waitFor, a pop waits for a job pushed meanwhile; interruptWait ends the wait', () =>
    withJobsTable(url, async (t) => {
      const q = DatabaseQueue.open(t.url, { table: t.table, waitFor: 30, pollInterval: 50 });
      try {
        const waiting = q.pop();
        await new Promise((resolve) => setTimeout(resolve, 120));
        await q.pushRaw(payload(uuid(1)));
        expect((await waiting)?.uuid, 'the job pushed during the wait').toBe(uuid(1));
        const interrupted = q.pop();
        setTimeout(() => q.interruptWait(), 100);
        expect(await interrupted, 'an interrupted wait').toBeNull();
      } finally {
        await q.close();
      }
    }));
});

describe.each(QUEUE_DATABASES.slice(1))('reserving on %s', (name, url) => {
  it('takes the rows FOR UPDATE SKIP LOCKED on this server, as Laravel decides', () =>
    withQueue(url, async (q) => {
      expect(await q.lockForPopping(), `${name}'s lock`).toBe('for update skip locked');
    }));

  it('an attempts column that overflows fails the reserve with the job it was about (Laravel 12.54+ fails that job)', () =>
    withQueue(url, async (q, rows) => {
      await q.bulkRaw([payload(uuid(1)), payload(uuid(2))]);
      const top = name === 'MariaDB' ? 255 : 32767; // unsigned tinyint; PostgreSQL's smallint
      const [first] = await rows();
      await q.db.query(`update ${q.table} set attempts = ? where id = ?`, [top, Number(first!.id)]);
      const error = await q.popMany(undefined, 2).catch((e: unknown) => e);
      expect(error, 'the error').toBeInstanceOf(DatabaseReserveError);
      expect([(error as DatabaseReserveError).job.id, (error as DatabaseReserveError).job.attempts()], 'the job, as its row was').toEqual([
        first!.id,
        top,
      ]);
      expect(
        (await rows()).map((row) => [row.reserved_at, row.attempts]),
        'nothing reserved',
      ).toEqual([
        [null, top],
        [null, 0],
      ]);
    }));
});

describe('SQLite: a lock held by another connection', () => {
  it('is waited for without blocking the event loop, not reported as "database is locked"', () =>
    withQueue(QUEUE_DATABASES[0]![1], async (q, _rows, _clock, t) => {
      await q.pushRaw(payload(uuid(1)));
      const Sqlite = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => { exec(sql: string): void; close(): void };
      const other = new Sqlite(t.url);
      other.exec('BEGIN IMMEDIATE');
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      setTimeout(() => other.exec('COMMIT'), 300);
      try {
        const job = await q.pop();
        expect(job?.uuid, 'the job, once the lock was let go').toBe(uuid(1));
        expect(ticks, 'the event loop ran while it waited').toBeGreaterThan(3);
      } finally {
        clearInterval(ticker);
        other.close();
      }
    }));
});

describe("PHP's version_compare, as Laravel reads server versions", () => {
  const versions = [
    '10.11.19',
    '10.6.0',
    '10.5.99',
    '8.0.1',
    '8.0.0',
    '8.0.36-0ubuntu0.22.04.1',
    '15.20 (Debian 15.20-0+deb12u1)',
    '9.5',
    '9.4.26',
    '9.5beta1',
    '9.5rc1',
    '10.6.0-dev',
    '19.0',
    '1.0pl1',
    '5.7.44-log',
  ];
  const thresholds = ['8.0.1', '10.6.0', '9.5', '19.0'];

  it('gives what PHP gives for server versions around each threshold', () => {
    const pairs = versions.flatMap((v) => thresholds.map((th) => [v, th] as const));
    const code = `foreach (json_decode(stream_get_contents(STDIN)) as [$a, $b]) echo version_compare($a, $b), "\\n";`;
    const php = execFileSync('php', ['-r', code], { input: JSON.stringify(pairs), encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
    expect(
      pairs.map(([a, b]) => `${a} vs ${b}: ${phpVersionCompare(a, b)}`),
      'version_compare',
    ).toEqual(pairs.map(([a, b], i) => `${a} vs ${b}: ${php[i]}`));
  });

  it('decides the lock as getLockForPopping does', () => {
    expect(lockForPopping('mysql', '10.11.19-MariaDB-0+deb12u1'), 'MariaDB 10.11').toBe('for update skip locked');
    expect(lockForPopping('mysql', '5.5.5-10.5.22-MariaDB'), 'MariaDB 10.5 behind 5.5.5-').toBe('for update');
    expect(lockForPopping('mysql', '8.0.36'), 'MySQL 8.0.36').toBe('for update skip locked');
    expect(lockForPopping('mysql', '5.7.44-log'), 'MySQL 5.7').toBe('for update');
    expect(lockForPopping('pgsql', '15.20 (Debian 15.20-0+deb12u1)'), 'PostgreSQL 15').toBe('for update skip locked');
    expect(lockForPopping('pgsql', '9.4.26'), 'PostgreSQL 9.4').toBe('for update');
    expect(lockForPopping('mysql', '8.0.31-vitess-18.0.0', '8'), 'Vitess under Laravel 8 is MySQL 8').toBe('for update skip locked');
    expect(lockForPopping('mysql', '8.0.31-vitess-18.0.0', '11'), 'Vitess 18 under Laravel 9+').toBe('for update');
  });
});
