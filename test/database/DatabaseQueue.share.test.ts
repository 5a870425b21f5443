/**
 * DatabaseQueue's reserve with share on (`popMany(queue, count, { classes })`) on real SQLite,
 * MariaDB and PostgreSQL, over a jobs table Laravel's Schema builder made: it takes only rows of
 * the classes named (reserved as Laravel's reserve leaves a row: reserved_at now, attempts + 1) and
 * leaves every other row as it was; a candidate another worker holds locked is skipped, not waited for.
 */
import { describe, expect, it } from 'vitest';
import { DatabaseQueue } from '../../src/database/index.js';
import { QUEUE_DATABASES, withJobsTable } from '../helpers/jobs-table.js';

const NODE = 'App\\Jobs\\Moved_Here';
const PHP = 'App\\Jobs\\StillPhp';
const TAKE = { classes: [NODE] };

/** A payload as Laravel's database queue writes one (no id, no attempts), its class `className`. */
const payload = (className: string, n: number, displayName = className) => {
  const json = (text: string) => JSON.stringify(text).replace(/\//g, '\\/');
  return `{"uuid":"00000000-0000-4000-8000-${String(n).padStart(12, '0')}","displayName":${json(displayName)},"job":"Illuminate\\\\Queue\\\\CallQueuedHandler@call","maxTries":null,"data":{"commandName":${json(className)},"command":"O:8:\\"stdClass\\":0:{}"}}`;
};

interface Row {
  id: string;
  payload: string;
  attempts: number;
  reserved_at: number | null;
}

describe.each(QUEUE_DATABASES)('DatabaseQueue with share on, on %s', (_, url) => {
  it('goes on after the rows it passed, and finds a row behind them whose reservation ran out', () =>
    withJobsTable(url, async (t) => {
      let now = Math.floor(Date.now() / 1000);
      const q = DatabaseQueue.open(t.url, { table: t.table, now: () => now, retryAfter: 60 });
      // Another worker's queue, whose worker dies holding the first job.
      const dies = DatabaseQueue.open(t.url, { table: t.table, now: () => now, retryAfter: 60 });
      try {
        await q.bulkRaw([payload(NODE, 1), payload(PHP, 2), payload(PHP, 3)]);
        const [first] = await dies.popMany('default', 1, TAKE);
        expect(first?.raw, 'the reserve of the worker that dies').toBe(payload(NODE, 1));
        await q.bulkRaw([payload(PHP, 4), payload(NODE, 5)]);
        const [second] = await q.popMany('default', 1, TAKE);
        expect(second?.raw, 'this worker’s reserve: the Node row after those passed').toBe(payload(NODE, 5));
        await second!.delete();
        // The first job's reservation runs out, behind the rows this worker's reserves went past.
        now += 61;
        const again = await q.popMany('default', 1, TAKE);
        expect([again[0]?.raw, again[0]?.attempts()], 'the row whose reservation ran out, at its second attempt').toEqual([
          payload(NODE, 1),
          2,
        ]);
      } finally {
        await q.close();
        await dies.close();
      }
    }));

  it('takes only rows of the classes named and leaves every other row as it was', () =>
    withJobsTable(url, async (t) => {
      const now = Math.floor(Date.now() / 1000);
      const q = DatabaseQueue.open(t.url, { table: t.table, now: () => now });
      try {
        const pushed = [payload(PHP, 1), payload(NODE, 2), payload(PHP, 3), payload(NODE, 4, 'Send the invoice'), payload(PHP, 5)];
        await q.bulkRaw(pushed);
        const rows = async () =>
          (await q.db.query<Record<string, unknown>>(`select * from ${t.table} order by id`)).rows.map((r): Row => ({
            id: String(r.id),
            payload: String(r.payload),
            attempts: Number(r.attempts),
            reserved_at: r.reserved_at === null ? null : Number(r.reserved_at),
          }));
        const before = await rows();
        const taken = await q.popMany('default', 5, TAKE);
        expect(
          taken.map((job) => job.raw),
          'not the Node jobs (by displayName, and by commandName under a displayName of its own), in order',
        ).toEqual([pushed[1], pushed[3]]);
        expect(
          taken.map((job) => job.attempts()),
          'the Node jobs are not at attempt 1',
        ).toEqual([1, 1]);
        const after = await rows();
        for (const [i, row] of after.entries()) {
          const wasTaken = i === 1 || i === 3;
          expect(row, `row ${i + 1} (${wasTaken ? 'Node' : 'PHP'}'s) after the reserve`).toEqual(
            wasTaken ? { ...before[i], attempts: 1, reserved_at: now } : before[i],
          );
        }
        expect(await q.popMany('default', 5, TAKE), 'a second reserve took a PHP row').toEqual([]);
      } finally {
        await q.close();
      }
    }));
});

describe.each(QUEUE_DATABASES)('DatabaseQueue.countByClass on %s', (_, url) => {
  it('counts each class by state across pages of 500, marks the classes taken, and changes no row', () =>
    withJobsTable(url, async (t) => {
      const now = Math.floor(Date.now() / 1000);
      const q = DatabaseQueue.open(t.url, { table: t.table, now: () => now });
      try {
        await q.bulkRaw([...Array.from({ length: 1100 }, (_, n) => payload(PHP, n)), payload(NODE, 2000), payload(NODE, 2001)]);
        await q.laterRaw(60, payload(NODE, 2002));
        await q.popMany('default', 1, TAKE);
        const rows = async () => (await q.db.query(`select * from ${t.table} order by id`)).rows;
        const before = await rows();
        expect(await q.countByClass('default', new Set([NODE])), 'the counts').toEqual([
          { class: PHP, ready: 1100, delayed: 0, reserved: 0, taken: false },
          { class: NODE, ready: 1, delayed: 1, reserved: 1, taken: true },
        ]);
        expect(await rows(), 'counting changed a row').toEqual(before);
      } finally {
        await q.close();
      }
    }));
});

/** Servers with row locks (SQLite has one writer, and no row to skip). */
const SERVERS = QUEUE_DATABASES.filter(([name]) => name !== 'SQLite');

describe.each(SERVERS)('DatabaseQueue with share on, on %s, beside another worker', (_, url) => {
  it('skips a Node row another worker holds locked, without waiting for it', () =>
    withJobsTable(url, async (t) => {
      const q = DatabaseQueue.open(t.url, { table: t.table });
      const other = DatabaseQueue.open(t.url, { table: t.table });
      try {
        await q.bulkRaw([payload(PHP, 1), payload(NODE, 2), payload(NODE, 3)]);
        const [first] = (await q.db.query<{ id: unknown }>(`select id from ${t.table} order by id`)).rows.slice(1);
        const started = Date.now();
        const taken = await other.db.transaction(async (tx) => {
          await tx.query(`select id from ${t.table} where id = ? for update`, [Number(first!.id)]);
          return q.popMany('default', 1, TAKE);
        });
        expect(
          taken.map((job) => job.raw),
          'the reserve did not skip the locked Node row for the next one',
        ).toEqual([payload(NODE, 3)]);
        expect(Date.now() - started, 'the reserve waited for the lock').toBeLessThan(5000);
      } finally {
        await q.close();
        await other.close();
      }
    }));
});
