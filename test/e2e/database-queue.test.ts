/**
 * Laravel 8.83's database queue and the bridge's DatabaseQueue on one jobs table, on SQLite,
 * MariaDB and PostgreSQL. Laravel's side is Debian's real DatabaseQueue and worker
 * (php-fixture-gen/laravel-database-queue.php, laravel-worker.php database):
 * - Laravel pushes, Node reserves: the same row, payload and attempts, left as Laravel's own pop leaves a row;
 * - Node pushes (the envelope Laravel's database driver writes, byte for byte), Laravel's worker runs it;
 * - delayed jobs, releases (a new row, the same attempts) and deletes, both ways;
 * - the reserve's lock is the one Laravel takes on that server.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, existsSync } from 'node:fs';
import { DatabaseQueue } from '../../src/database/index.js';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { toJS } from '../../src/php/index.js';
import { php } from '../helpers/processes.js';
import { QUEUE_DATABASES, withJobsTable, type JobsTable } from '../helpers/jobs-table.js';

const RECORD_JOB = 'App\\Jobs\\Bridge\\RecordJob';

/** worker-app.php's RecordJob, as Node's producer builds it for the database connection. */
function nodeRecordJob(
  uuid: string,
  props: { n: number; label: string; ratio: number; items: number[] },
  delay: number | null = null,
): string {
  const command = buildJob(
    {
      className: RECORD_JOB,
      properties: [
        { name: 'tries', value: null },
        { name: 'timeout', value: null },
        { name: 'backoff', value: null },
        { name: 'maxExceptions', value: null },
        { name: 'n', value: props.n },
        { name: 'label', value: props.label },
        { name: 'ratio', value: props.ratio, hint: 'float' },
        { name: 'items', value: props.items },
        { name: 'flag', value: null },
      ],
      queueable: { connection: 'database', queue: 'default', delay },
    },
    '8',
  );
  return buildPayload(command, { profile: '8', uuid, driver: 'database' }).raw;
}

/** Laravel's worker (`queue:work database`) on the table; its run records. */
async function laravelWorker(t: JobsTable, flags: string[]): Promise<Record<string, any>[]> {
  return (await laravelWorkerRun(t, flags)).runs;
}

/** Laravel's worker on the table: its run records and what it reported on standard error. */
async function laravelWorkerRun(t: JobsTable, flags: string[]): Promise<{ runs: Record<string, any>[]; stderr: string }> {
  const result = await php('laravel-worker.php', ['database', ...flags], t.env, { timeoutMs: 60_000 });
  if (result.status !== 0) throw new Error(`laravel-worker.php exited ${result.status}: ${result.stderr.trim()}`);
  const file = t.env.LQB_RECORD_FILE!;
  const runs = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
  return { runs, stderr: result.stderr };
}

const open = (t: JobsTable) => DatabaseQueue.open(t.url, { table: t.table });

/** A row as Laravel's query builder reads it, the columns that say its state. */
const state = (row: Record<string, any>) => ({
  queue: row.queue,
  attempts: Number(row.attempts),
  reserved: row.reserved_at !== null,
  due: Number(row.available_at) - Number(row.created_at),
});

describe.each(QUEUE_DATABASES)('Laravel 8.83 and Node on one jobs table, on %s', (_, url) => {
  it('Laravel pushes, Node reserves: the row, payload and attempts Laravel wrote, reserved as Laravel reserves', () =>
    withJobsTable(url, async (t) => {
      const uuid = '7d7c1b1e-0000-4000-8000-000000000001';
      const { id } = await t.laravel('record', { uuid, n: 7, label: 'héllo/wörld', ratio: 2.0, items: [1, 'two'] });
      await t.laravel('record', { n: 8 });
      const [pushed] = await t.laravel('rows');
      const q = open(t);
      try {
        const job = (await q.pop())!;
        expect([job.id, job.uuid, job.raw, job.attempts()], 'the job Node reserved').toEqual([String(id), uuid, pushed.payload, 1]);
        expect(
          job.payload.envelope.id === undefined && job.payload.envelope.attempts === undefined,
          'no id or attempts in the payload',
        ).toBe(true);
        const command = toJS(job.payload.command!) as Record<string, unknown>;
        expect([command.n, command.label, command.ratio, command.items, command.connection], 'the command').toEqual([
          7,
          'héllo/wörld',
          2,
          [1, 'two'],
          'database',
        ]);
        // Laravel's own pop reserves the other row: both rows are left alike.
        const laravelPopped = await t.laravel('pop', { then: 'keep' });
        expect(laravelPopped.attempts, "Laravel's pop").toBe(1);
        const rows = await t.laravel('rows');
        expect(rows.map(state), 'the row Node reserved, the row Laravel reserved').toEqual([
          { queue: 'default', attempts: 1, reserved: true, due: 0 },
          { queue: 'default', attempts: 1, reserved: true, due: 0 },
        ]);
        expect(Math.abs(Number(rows[0].reserved_at) - Number(rows[1].reserved_at)), 'reserved_at: now, on both sides').toBeLessThanOrEqual(
          2,
        );
        await job.delete();
        expect(
          (await t.laravel('rows')).map((row: any) => String(row.id)),
          'after Node deleted its job',
        ).toEqual([String(laravelPopped.id)]);
      } finally {
        await q.close();
      }
    }));

  it('Node pushes the payload Laravel writes, byte for byte, and Laravel’s worker runs it', () =>
    withJobsTable(url, async (t) => {
      const uuid = '7d7c1b1e-0000-4000-8000-000000000002';
      const props = { n: 3, label: 'from node ✓', ratio: 0.25, items: [1, 2] };
      await t.laravel('record', { uuid, ...props });
      const [laravelRow] = await t.laravel('rows');
      const q = open(t);
      try {
        const payload = nodeRecordJob(uuid, props);
        expect(payload, 'the payload Node builds, against the one Laravel pushed').toBe(laravelRow.payload);
        await t.laravel('clear');
        const id = await q.pushRaw(payload);
        const runs = await laravelWorker(t, ['--stop-when-empty']);
        expect(
          runs.map((run) => [run.class, run.attempts, String(run.jobId), run.uuid, run.props]),
          'what Laravel ran',
        ).toEqual([
          [
            RECORD_JOB,
            1,
            id,
            uuid,
            {
              ...props,
              flag: null,
              types: { n: 'int', label: 'string', ratio: 'float', items: 'array', flag: 'null' },
            },
          ],
        ]);
        expect(await q.size(), 'nothing left').toBe(0);
      } finally {
        await q.close();
      }
    }));

  it('delayed jobs: each side writes the same row, and neither takes it early', () =>
    withJobsTable(url, async (t) => {
      const uuid = '7d7c1b1e-0000-4000-8000-000000000003';
      const props = { n: 4, label: 'later', ratio: 1.5, items: [] };
      await t.laravel('record', { uuid, ...props, delay: 30 });
      const q = open(t);
      try {
        await q.laterRaw(30, nodeRecordJob(uuid, props, 30));
        const rows = await t.laravel('rows');
        expect(rows.map(state), 'the delayed rows: Laravel’s, Node’s').toEqual([
          { queue: 'default', attempts: 0, reserved: false, due: 30 },
          { queue: 'default', attempts: 0, reserved: false, due: 30 },
        ]);
        expect(rows[1].payload, 'the same payload').toBe(rows[0].payload);
        expect(await q.pop(), 'Node does not take them early').toBeNull();
        expect(await t.laravel('pop'), 'nor does Laravel').toBeNull();
        expect([await q.delayedSize(), await q.readySize()], 'sizes').toEqual([2, 0]);
        // A job Node delays by a second is run by Laravel's worker once due.
        await t.laravel('clear');
        const id = await q.laterRaw(1, nodeRecordJob(uuid, props, 1));
        const runs = await laravelWorker(t, ['--max-jobs=1', '--sleep=1', '--max-time=20']);
        expect(
          runs.map((run) => [String(run.jobId), run.attempts]),
          'Laravel ran the delayed job',
        ).toEqual([[id, 1]]);
      } finally {
        await q.close();
      }
    }));

  it('releases cross sides: a new row with the same payload and attempts, each side counting on', () =>
    withJobsTable(url, async (t) => {
      const q = open(t);
      try {
        const { id: first } = await t.laravel('record', { n: 5 });
        // Laravel reserves and releases: the row Node then reserves.
        const laravelPopped = await t.laravel('pop', { then: 'release' });
        const [released] = await t.laravel('rows');
        expect([Number(released.id) > Number(first), state(released)], 'Laravel’s release').toEqual([
          true,
          { queue: 'default', attempts: 1, reserved: false, due: 0 },
        ]);
        const job = (await q.pop())!;
        expect([job.id, job.attempts(), job.raw], 'Node reserves the released row').toEqual([
          String(released.id),
          2,
          laravelPopped.payload,
        ]);
        // Node releases it: the row Laravel's worker then runs.
        const again = await q.release(job, 0);
        const [nodeReleased] = await t.laravel('rows');
        expect([String(nodeReleased.id), state(nodeReleased), nodeReleased.payload], 'Node’s release').toEqual([
          again,
          { queue: 'default', attempts: 2, reserved: false, due: 0 },
          laravelPopped.payload,
        ]);
        const runs = await laravelWorker(t, ['--stop-when-empty', '--tries=5']);
        expect(
          runs.map((run) => [String(run.jobId), run.attempts]),
          'Laravel runs it as its third attempt',
        ).toEqual([[again, 3]]);
        expect(await t.laravel('rows'), 'nothing left').toEqual([]);
      } finally {
        await q.close();
      }
    }));

  it('Node deletes a job Laravel pushed; Laravel deletes a job Node pushed', () =>
    withJobsTable(url, async (t) => {
      const q = open(t);
      try {
        await t.laravel('record', { n: 6 });
        await (await q.pop())!.delete();
        expect(await t.laravel('size'), 'after Node’s delete').toEqual({ size: 0 });
        await q.pushRaw(nodeRecordJob('7d7c1b1e-0000-4000-8000-000000000006', { n: 6, label: 'x', ratio: 0.5, items: [] }));
        const popped = await t.laravel('pop', { then: 'delete' });
        expect(popped.attempts, 'Laravel reserved it').toBe(1);
        expect(await q.size(), 'after Laravel’s delete').toBe(0);
      } finally {
        await q.close();
      }
    }));

  it('Laravel’s worker and Node reserving from one table at once take each job once, and leave nothing', () =>
    withJobsTable(url, async (t) => {
      const q = open(t);
      try {
        const total = 150;
        const uuidOf = (i: number) => `7d7c1b1e-0000-4000-8000-${String(100000 + i).padStart(12, '0')}`;
        await q.bulkRaw(
          Array.from({ length: total }, (_, i) => nodeRecordJob(uuidOf(i), { n: i, label: 'shared', ratio: 0.5, items: [] })),
        );
        const laravel = laravelWorkerRun(t, ['--stop-when-empty', '--tries=3']);
        // Node starts once Laravel's worker has run a job, so both are at the table together.
        for (let waited = 0; !existsSync(t.env.LQB_RECORD_FILE!) && waited < 20_000; waited += 20)
          await new Promise((r) => setTimeout(r, 20));
        const node: string[] = [];
        for (;;) {
          const jobs = await q.popMany(undefined, 2);
          if (jobs.length === 0) break;
          for (const job of jobs) node.push(job.uuid!);
          await Promise.all(jobs.map((job) => job.delete()));
          await new Promise((r) => setTimeout(r, 2));
        }
        const { runs, stderr } = await laravel;
        const php = runs.map((run) => run.uuid as string);
        const all = [...php, ...node].sort();
        expect(all.length - new Set(all).size, 'jobs run twice').toBe(0);
        expect(new Set(all).size, 'jobs run, by either side').toBe(total);
        // Laravel 8 on SQLite: its delete's transaction reads, then upgrades to write, which
        // SQLite refuses at once while another connection writes ("database is locked"); the
        // job ran, its row stays reserved (Laravel's own issue, with PHP workers alone too).
        // Only such rows may be left: each one a delete Laravel reported failing.
        const refused = [...stderr.matchAll(/database is locked \(SQL: delete from \S+ where "id" = (\d+)\)/g)].map((m) => m[1]);
        const left = (await t.laravel('rows')).map((row: any) => String(row.id));
        expect(left, `rows left, other than those whose delete Laravel reported refused (${refused.join(', ')})`).toEqual(
          left.filter((id: string) => refused.includes(id)),
        );
        if (t.url.includes('://')) expect(left, 'rows left on a server database').toEqual([]);
      } finally {
        await q.close();
      }
    }));

  it('the reserve takes the lock Laravel takes on this server', () =>
    withJobsTable(url, async (t) => {
      const laravel = await t.laravel('lock');
      const q = open(t);
      try {
        const ours = await q.lockForPopping();
        const theirs = laravel.lock === true ? (t.url.includes('://') ? 'for update' : '') : String(laravel.lock).toLowerCase();
        expect(ours, `Laravel's lock (${JSON.stringify(laravel.lock)}, query: ${laravel.sql})`).toBe(theirs);
        expect(laravel.sql.toLowerCase().endsWith(ours ? `limit 1 ${ours}` : 'limit 1'), "the clause ends Laravel's query").toBe(true);
      } finally {
        await q.close();
      }
    }));
});
