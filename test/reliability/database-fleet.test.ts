/**
 * A mixed fleet on Laravel's database queue: Laravel 8.83's own workers (`queue:work database`)
 * and Node workers (new Worker(new DatabaseQueue(...)), test/helpers/database-worker.ts) on one
 * jobs table, on SQLite, MariaDB and PostgreSQL, run 2,000 jobs Laravel dispatched: plain ones,
 * flaky ones (fail on attempt 1, succeed on 2) and failing ones (three attempts, then failed).
 * Each job runs exactly the attempts Laravel's rules give it, on whichever side, nothing is left
 * in the table, and each failure is recorded once.
 *
 * SQLite: Laravel 8's transactions are deferred, and SQLite refuses at once ("database is
 * locked") a transaction that read and then wants to write while another connection holds the
 * write lock, whoever holds it: PHP's workers meet it among themselves. Where it strikes a
 * delete or a release after the job ran, that row stays reserved (Laravel's issue: its job says it
 * was deleted). Such jobs, named by the error Laravel reported, are the only ones let off the
 * exact count, and Node's workers must never meet the lock themselves. How often PHP's workers
 * meet it is measured, printed and not asserted (it follows the disk and the load): a PHP-only
 * fleet of three workers against two PHP workers and a Node worker, on the same mix (half the jobs).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DatabaseQueue } from '../../src/database/index.js';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { QUEUE_DATABASES, withJobsTable, type JobsTable } from '../helpers/jobs-table.js';
import { root } from '../helpers/php.js';
import { php, run, type RunResult } from '../helpers/processes.js';
import { bySize } from '../helpers/tier.js';

const RECORDS = bySize(340, 1700);
const FLAKY = bySize(40, 200);
const FAILING = bySize(20, 100);
const PHP_WORKERS = 2;
const WORKER_FLAGS = ['--tries=3', '--backoff=0', '--stop-when-empty', '--sleep=0'];
const NODE_OPTIONS = { concurrency: 16, tries: 3, backoff: [0], stopWhenEmpty: true, sleep: 0 };

const RECORD = 'App\\Jobs\\Bridge\\RecordJob';
const FLAKY_JOB = 'App\\Jobs\\Bridge\\FlakyJob';
const FAILING_JOB = 'App\\Jobs\\Bridge\\FailingJob';

type Run = Record<string, any>;

interface FleetResult {
  php: RunResult[];
  node: RunResult[];
  runs: Run[];
  /** PHP's "database is locked" errors, by the statement they struck. */
  locked: { sql: string; id: string | undefined }[];
  left: Run[];
  /** The PHP workers' time at the table: their number times the fleet's run. */
  workerSeconds: number;
}

const lines = (file: string): Run[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];

/** A job of worker-app.php's, as Laravel 8.83's database driver writes it (test/e2e/database-queue.test.ts holds RecordJob's to Laravel's bytes). */
function laravelJob(className: string, properties: { name: string; value: unknown }[]): string {
  const command = buildJob({ className, properties, queueable: { connection: 'database', queue: 'default', delay: null } }, '8');
  return buildPayload(command, { profile: '8', driver: 'database' }).raw;
}

/** The mix, pushed in one go (Laravel's own dispatch commits each push alone: minutes on a busy disk). */
async function push(t: JobsTable, scale = 1): Promise<void> {
  const queue = DatabaseQueue.open(t.url, { table: t.table });
  const jobs: string[] = [];
  for (let n = 0; n < RECORDS * scale; n++)
    jobs.push(
      laravelJob(RECORD, [
        ...['tries', 'timeout', 'backoff', 'maxExceptions'].map((name) => ({ name, value: null })),
        { name: 'n', value: n },
        { name: 'label', value: 'fleet' },
        { name: 'ratio', value: 0.5 },
        { name: 'items', value: [1] },
        { name: 'flag', value: null },
      ]),
    );
  for (let n = 0; n < FLAKY * scale; n++)
    jobs.push(
      laravelJob(FLAKY_JOB, [
        { name: 'n', value: n },
        { name: 'failTimes', value: 1 },
      ]),
    );
  for (let n = 0; n < FAILING * scale; n++)
    jobs.push(
      laravelJob(FAILING_JOB, [
        { name: 'tries', value: null },
        { name: 'maxExceptions', value: null },
        { name: 'n', value: n },
        { name: 'message', value: 'never' },
      ]),
    );
  // Shuffled, so that releases and failures are spread along the run.
  for (let i = jobs.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [jobs[i], jobs[j]] = [jobs[j]!, jobs[i]!];
  }
  try {
    await queue.bulkRaw(jobs);
  } finally {
    await queue.close();
  }
}

/**
 * Runs the fleet to empty: PHP_WORKERS Laravel workers and `nodeWorkers` Node ones, all at once.
 * A Laravel worker with --stop-when-empty also stops after a pop that failed (its pop returned
 * no job): as under a supervisor, one is started again while the table has jobs due.
 */
async function fleet(t: JobsTable, phpWorkers: number, nodeWorkers: number): Promise<FleetResult> {
  const started = Date.now();
  const env = { ...t.env, LQB_NODE_RECORD_FILE: join(t.dir, 'node-runs.jsonl') };
  const queue = DatabaseQueue.open(t.url, { table: t.table });
  const supervised = async (): Promise<RunResult[]> => {
    const results: RunResult[] = [];
    do results.push(await php('laravel-worker.php', ['database', ...WORKER_FLAGS], env, { timeoutMs: 300_000 }));
    while (results.at(-1)!.status === 0 && (await queue.readySize()) > 0);
    return results;
  };
  const nodeRuns = Array.from({ length: nodeWorkers }, () =>
    run('node', ['--import', 'tsx', join(root, 'test/helpers/database-worker.ts'), JSON.stringify(NODE_OPTIONS)], env, {
      timeoutMs: 300_000,
    }),
  );
  try {
    const [phpResults, nodeResults] = await Promise.all([
      Promise.all(Array.from({ length: phpWorkers }, supervised)).then((slots) => slots.flat()),
      Promise.all(nodeRuns),
    ]);
    const locked = phpResults.flatMap((result) =>
      [...result.stderr.matchAll(/database is locked \(SQL: ([^\n]*?)\) \(/g)].map((m) => ({
        sql: m[1]!,
        id: /"id" = (\d+)/.exec(m[1]!)?.[1],
      })),
    );
    return {
      php: phpResults,
      node: nodeResults,
      runs: [...lines(t.env.LQB_RECORD_FILE!), ...lines(env.LQB_NODE_RECORD_FILE)].filter((r) => !r.failed),
      locked,
      left: await t.laravel('rows'),
      workerSeconds: (phpWorkers * (Date.now() - started)) / 1000,
    };
  } finally {
    await queue.close();
  }
}

/** Attempts each job ran, by uuid, for one class. */
function attemptsByUuid(runs: Run[], className: string): Map<string, number[]> {
  const byUuid = new Map<string, number[]>();
  for (const r of runs.filter((r) => r.class === className)) byUuid.set(r.uuid, [...(byUuid.get(r.uuid) ?? []), r.attempts].sort());
  return byUuid;
}

/** The jobs whose attempts are not `expected`, as uuid: "attempts", leaving out `excused` ones. */
function offenders(runs: Map<string, number[]>, expected: string, excused: Set<string>): Record<string, string> {
  return Object.fromEntries(
    [...runs].filter(([uuid, attempts]) => attempts.join() !== expected && !excused.has(uuid)).map(([uuid, a]) => [uuid, a.join()]),
  );
}

/** PHP's lock errors per thousand PHP job runs. */
const lockRate = (result: FleetResult) => (1000 * result.locked.length) / Math.max(1, result.runs.filter((r) => r.side === 'php').length);

describe.each(QUEUE_DATABASES)('a mixed fleet of Laravel 8.83 and Node workers on one jobs table, on %s', (name, url) => {
  it(
    `runs ${RECORDS + FLAKY + FAILING} jobs with releases and failures: each attempt once, nothing left, each failure recorded once`,
    () =>
      withJobsTable(url, async (t) => {
        const sqlite = !t.url.includes('://');
        // SQLite: the PHP-only fleet first, on the same mix, for its rate of lock errors.
        let alone: FleetResult | undefined;
        if (sqlite) {
          await push(t, 0.5);
          alone = await fleet(t, PHP_WORKERS + 1, 0);
          await t.laravel('clear');
          rmSync(t.env.LQB_RECORD_FILE!, { force: true });
        }
        await push(t);
        const result = await fleet(t, PHP_WORKERS, 1);
        for (const [i, r] of result.php.entries()) expect(r.status, `Laravel worker ${i}: ${r.stderr.slice(-500)}`).toBe(0);
        for (const [i, r] of result.node.entries()) expect(r.status, `Node worker ${i}: ${r.stderr.slice(-500)}`).toBe(0);
        expect(
          result.node.flatMap((r) => r.stderr.split('\n').filter((line) => /locked|busy/i.test(line))),
          'Node meets the lock',
        ).toEqual([]);
        const sides = new Set(result.runs.map((r) => r.side));
        expect([...sides].sort(), 'both sides ran jobs').toEqual(['node', 'php']);

        // The jobs a refused delete or release of Laravel's left reserved: the run with that row id.
        const refusedIds = new Set(result.locked.filter((l) => l.id !== undefined && !/^update /.test(l.sql)).map((l) => l.id!));
        const excused = new Set(
          result.runs.filter((r) => r.side === 'php' && refusedIds.has(String(r.jobId))).map((r) => r.uuid as string),
        );
        if (!sqlite) expect(result.locked, 'lock errors on a server database').toEqual([]);

        const records = attemptsByUuid(result.runs, RECORD);
        expect(records.size, 'plain jobs run').toBe(RECORDS);
        expect(offenders(records, '1', excused), 'plain jobs (uuid: attempts run) not run exactly once, on attempt 1').toEqual({});
        const flaky = attemptsByUuid(result.runs, FLAKY_JOB);
        expect(flaky.size, 'flaky jobs run').toBe(FLAKY);
        expect(offenders(flaky, '1,2', excused), 'flaky jobs (uuid: attempts run) that did not run attempts 1 and 2').toEqual({});
        const failing = attemptsByUuid(result.runs, FAILING_JOB);
        expect(failing.size, 'failing jobs run').toBe(FAILING);
        expect(offenders(failing, '1,2,3', excused), 'failing jobs (uuid: attempts run) that did not run attempts 1, 2 and 3').toEqual({});

        const failer = DatabaseUuidFailedJobProvider.fromUrl(t.env.LQB_FAILED_DB!);
        // The PHP-only fleet's records (SQLite) are of jobs of their own, told apart by uuid.
        const ran = new Set(result.runs.map((r) => r.uuid as string));
        const failed = (await failer.all()).filter((f) => ran.has(f.uuid));
        await failer.close();
        const failedUuids = failed.map((f) => f.uuid).sort();
        expect(failedUuids.length - new Set(failedUuids).size, 'failures recorded twice').toBe(0);
        expect(
          [...failing.keys()].filter((uuid) => !excused.has(uuid) && !failedUuids.includes(uuid)),
          'failing jobs with no failed_jobs record',
        ).toEqual([]);
        expect(
          failed.filter((f) => !failing.has(f.uuid)).map((f) => f.uuid),
          'records of jobs that did not fail',
        ).toEqual([]);
        for (const record of failed)
          expect([record.connection, record.queue], `failed record ${record.uuid}`).toEqual(['database', 'default']);

        // Nothing left, but on SQLite the rows whose delete or release Laravel reported refused.
        expect(
          result.left.filter((row) => !refusedIds.has(String(row.id))).map((row) => [row.id, row.attempts, row.reserved_at]),
          `rows left (Laravel's refused ones: ${[...refusedIds].join(', ')})`,
        ).toEqual([]);

        if (alone) {
          // Printed, not asserted: how often SQLite refuses PHP depends on the disk and the load.
          const rates = (r: FleetResult) =>
            `${r.locked.length} errors, ${lockRate(r).toFixed(1)} per 1,000 PHP job runs, ${((60 * r.locked.length) / r.workerSeconds).toFixed(1)} per PHP worker-minute`;
          console.log(
            `${name}: PHP's "database is locked": ${PHP_WORKERS + 1} PHP workers alone: ${rates(alone)}; ${PHP_WORKERS} PHP workers and a Node worker: ${rates(result)} (${excused.size} jobs struck after running; ${result.runs.filter((r) => r.side === 'php').length} of ${result.runs.length} runs by PHP)`,
          );
        }
      }),
    600_000,
  );
});
