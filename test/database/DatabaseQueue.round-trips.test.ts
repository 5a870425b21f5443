/**
 * One transaction a job in steady state (issue 45), on real SQLite, MariaDB and PostgreSQL over a
 * jobs table Laravel's Schema builder made: a worker at concurrency 1, share on, whose handler
 * awaits (as one doing I/O does), commits each finished job's delete with the next reserve, and
 * looks for the rows of its classes once for several jobs. Counted on the queue's own database
 * object (every transaction and every statement outside one), not by timing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DatabaseQueue } from '../../src/database/index.js';
import { Worker } from '../../src/index.js';
import { QUEUE_DATABASES, withJobsTable } from '../helpers/jobs-table.js';

const JOBS = 60;
const NODE = 'App\\Jobs\\Count';
const PHP = 'App\\Jobs\\StaysInPhp';

/** A payload as Laravel's database queue writes one (no id, no attempts), its class `className`. */
const payload = (className: string, n: number) => {
  const json = (text: string) => JSON.stringify(text).replace(/\//g, '\\/');
  return `{"uuid":"00000000-0000-4000-8000-${String(n).padStart(12, '0')}","displayName":${json(className)},"job":"Illuminate\\\\Queue\\\\CallQueuedHandler@call","maxTries":null,"data":{"commandName":${json(className)},"command":"O:8:\\"stdClass\\":1:{s:1:\\"n\\";i:${n};}"}}`;
};

describe.each(QUEUE_DATABASES)('a worker at concurrency 1 on %s, in steady state', (_, url) => {
  it('commits one transaction a job: the finished job’s delete goes with the next reserve', () =>
    withJobsTable(url, async (t) => {
      const q = DatabaseQueue.open(t.url, { table: t.table, retryAfter: 90 });
      try {
        // Every third row is PHP's, left on the queue for a PHP worker.
        const payloads = Array.from({ length: JOBS + JOBS / 2 }, (_, i) => payload(i % 3 === 2 ? PHP : NODE, i));
        await q.bulkRaw(payloads);
        const transactions: number[] = [];
        const outside: string[] = [];
        const { db } = q;
        const transaction = db.transaction.bind(db);
        const query = db.query.bind(db);
        db.transaction = (work) => {
          transactions.push(1);
          return transaction(work);
        };
        db.query = (sql, params) => {
          outside.push(sql);
          return query(sql, params);
        };
        const ran: number[] = [];
        const worker = new Worker(
          q,
          {
            [NODE]: async (job) => {
              await sleep(1);
              ran.push(Number((job.command as { n: number }).n));
            },
          },
          { queues: ['default'], sleep: 0.05, memory: 0, stopWhenEmpty: true, concurrency: 1, share: true },
          { failer: false, onFailed: () => undefined },
        );
        await worker.run();
        expect(ran.length, 'jobs the handler ran').toBe(JOBS);
        expect(new Set(ran).size, 'distinct jobs the handler ran').toBe(JOBS);
        expect(await q.size('default'), 'rows left: the PHP jobs alone').toBe(JOBS / 2);
        expect(await q.reservedSize('default'), 'rows left reserved (a delete that did not commit)').toBe(0);
        // The first reserve goes alone, and so may the last delete and a last look at an empty queue.
        expect(transactions.length, `transactions for ${JOBS} jobs`).toBeLessThanOrEqual(JOBS + 3);
        // The rows of the classes taken are looked for once for several reserves (spares), not before each.
        const lookups = outside.filter((sql) => /^select id, /.test(sql));
        expect(lookups.length, `looks for the rows of the classes taken, for ${JOBS} jobs`).toBeLessThanOrEqual(JOBS / 4);
      } finally {
        await q.close();
      }
    }));
});
