/**
 * A batch made by Laravel 10+ or 12+ holds `progress` and `failure` callbacks (PHP closures, run
 * after each job that succeeds or fails), which Laravel 8.83 cannot make: the row here carries
 * the options PHP's serialize() writes for such a batch. The worker records each job in the row,
 * and says once per kind which callbacks did not run. Real Redis, a real SQLite job_batches table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/database/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { DatabaseBatchRepository, Worker, type WorkerEvent } from '../../src/worker/index.js';
import { php } from '../helpers/php.js';
import { workerSetup, type WorkerSetup } from '../helpers/worker.js';

let env: WorkerSetup;
let dir: string;
beforeEach(() => {
  env = workerSetup('batch-callbacks');
  dir = mkdtempSync(join(tmpdir(), 'lqb-batches-'));
});
afterEach(async () => {
  await env.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('a batch with progress and failure callbacks', () => {
  it('each job is recorded; the log says once that progress, and once that failure, callbacks did not run', async () => {
    const file = join(dir, 'batches.sqlite');
    const db = openDatabase({ dialect: 'sqlite', filename: file });
    // Laravel's job_batches migration, as its SQLite grammar writes it.
    await db.query(
      'create table "job_batches" ("id" varchar not null, "name" varchar not null, "total_jobs" integer not null, "pending_jobs" integer not null, "failed_jobs" integer not null, "failed_job_ids" text not null, "options" text, "cancelled_at" integer, "created_at" integer not null, "finished_at" integer, primary key ("id"))',
    );
    const options = php('echo serialize(["allowFailures" => true, "progress" => ["p"], "failure" => ["f"]]);').toString();
    await db.query(
      'insert into "job_batches" ("id", "name", "total_jobs", "pending_jobs", "failed_jobs", "failed_job_ids", "options", "created_at") values (?, ?, ?, ?, ?, ?, ?, ?)',
      ['b-1', '', 4, 4, 0, '[]', options, 1],
    );
    const job = (n: number) =>
      buildPayload(
        buildJob({
          className: 'App\\Jobs\\Part',
          properties: [
            { name: 'n', value: n },
            { name: 'batchId', value: 'b-1' },
          ],
        }),
      ).raw;
    await env.queue.bulkRaw([job(1), job(2), job(3), job(4)]);
    const batches = new DatabaseBatchRepository({ dialect: 'sqlite', filename: file });
    const events: WorkerEvent[] = [];
    const worker = new Worker(
      env.queue,
      {
        'App\\Jobs\\Part': async (job) => {
          if (Number(job.command.n) % 2 === 0) throw new Error('even');
        },
      },
      { stopWhenEmpty: true, sleep: 0.05, memory: 0 },
      { failer: env.failer, batches, log: (e) => events.push(e) },
    );
    await worker.run();
    await batches.close();
    const [row] = (await db.query('select * from "job_batches" where "id" = ?', ['b-1'])).rows;
    await db.close();
    expect([row!.pending_jobs, row!.failed_jobs, row!.cancelled_at], 'the batch row: pending, failed, cancelled').toEqual([2, 2, null]);
    const said = events
      .filter((e) => e.event === 'warning' && e.reason?.includes('batch b-1'))
      .map((e) => /its (.+) callbacks? are PHP closures/.exec(e.reason!)?.[1]);
    expect(said.sort()).toEqual(['failure', 'progress']);
  });
});
