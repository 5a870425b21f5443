/**
 * The database queue's server killed (SIGKILL of the postmaster, of mariadbd) and restarted again
 * and again under two `lqb work database --concurrency=8`, on PostgreSQL and MariaDB servers of
 * the test's own (test/helpers/db-servers.ts): the queue, the worker's cache (the database store's
 * `cache` table) and its failed-jobs store all on that server. Neither worker dies; each says
 * every outage in one line when it starts and one when it ends; every job runs to its end (a job
 * whose reservation ran out during the outage may run again: at least once), none is lost, and the
 * table ends empty, the finished jobs' deletes having waited for the server rather than being lost.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DatabaseQueue } from '../../src/database/index.js';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { startPrivateMariadb, startPrivatePostgres, type PrivateServer } from '../helpers/db-servers.js';
import { withJobsTable } from '../helpers/jobs-table.js';
import { root } from '../helpers/php.js';
import { HANDLERS, php } from '../helpers/processes.js';
import { bySize } from '../helpers/tier.js';

const KILLS = bySize(3, 10);
const JOBS = bySize(400, 2000);
/** Seconds: short, so that reservations run out during an outage and another reserve takes them. */
const RETRY_AFTER = 3;
/** How long each outage lasts before the server is started again. */
const OUTAGE_MS = 1500;

type Run = Record<string, any>;

/** worker-app.php's SlowJob (records "start", waits, records "done"), as the database driver writes it. */
function slowJob(n: number, seconds: number): string {
  const command = buildJob({ className: 'App\\Jobs\\Bridge\\SlowJob', properties: { n, seconds } });
  return buildPayload(command, { profile: '8', driver: 'database', maxTries: 0 }).raw;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `done` until it holds, or fails naming `what` and what was seen last. */
async function waitFor(what: string, done: () => Promise<boolean> | boolean, seen: () => string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await done()) return;
    await pause(100);
  }
  throw new Error(`waited ${ms / 1000} s for ${what}; last seen: ${seen()}`);
}

/** The runs recorded so far; a record a worker is still appending (no newline yet) waits for the next read. */
function readRuns(file: string): Run[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Run);
}

/** Laravel's database cache store's tables (cache, cache_locks) on the server, made by Laravel's own schema builder. */
async function makeCacheTables(server: PrivateServer): Promise<void> {
  const connection =
    server.engine === 'PostgreSQL'
      ? { driver: 'pgsql', host: '127.0.0.1', port: server.port, database: 'test', username: 'postgres', password: '' }
      : { driver: 'mysql', host: '127.0.0.1', port: server.port, database: 'test', username: 'root', password: '' };
  const request = JSON.stringify({
    connection,
    table: 'cache',
    prefix: 'laravel_cache',
    ops: [{ op: 'create' }, { op: 'create-locks', table: 'cache_locks' }],
  });
  const result = await php('cache-store.php', [], process.env, { input: request });
  if (result.status !== 0) throw new Error(`cache-store.php create exited ${result.status}: ${result.stderr.trim()}`);
}

interface WorkerProcess {
  child: ChildProcess;
  /** Everything it printed. */
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startWorker(server: PrivateServer, table: string, env: NodeJS.ProcessEnv): WorkerProcess {
  const child = spawn(
    'node',
    [
      join(root, 'dist/cli/main.js'),
      'work',
      'database',
      `--queue-db=${server.url}`,
      `--jobs-table=${table}`,
      `--failed-db=${server.url}`,
      '--cache-store=database',
      `--handlers=${HANDLERS}`,
      '--concurrency=8',
      '--sleep=0.05',
      `--retry-after=${RETRY_AFTER}`,
      '--no-share',
      '--quiet',
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Its event lines (standard output, as artisan's) and its start line and crashes (standard error), in one.
  let stderr = '';
  child.stdout.on('data', (chunk) => (stderr += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stderr: () => stderr, exit };
}

const SERVERS: [string, () => Promise<PrivateServer>][] = [
  ['PostgreSQL', startPrivatePostgres],
  ['MariaDB', startPrivateMariadb],
];

describe.each(SERVERS)('two `lqb work database --concurrency=8` while their %s server is killed and restarted', (name, start) => {
  it(
    `live through ${KILLS} kills of the server: an outage line and a back line each time, every one of ${JOBS} jobs run, none left in the table`,
    async () => {
      const server = await start();
      try {
        await withJobsTable(
          () => server.url,
          async (t) => {
            await makeCacheTables(server);
            const records = join(t.dir, 'node-runs.jsonl');
            const env: NodeJS.ProcessEnv = { ...t.env, LQB_NODE_RECORD_FILE: records };
            for (const variable of ['QUEUE_CONNECTION', 'LQB_QUEUE_DB', 'LQB_JOBS_TABLE', 'LQB_FAILED_DB', 'REDIS_URL'])
              delete env[variable];
            const queue = DatabaseQueue.open(server.url, { table: t.table, retryAfter: RETRY_AFTER });
            const doneJobs = () =>
              new Set(
                readRuns(records)
                  .filter((r) => r.phase === 'done')
                  .map((r) => r.props.n as number),
              );
            try {
              await queue.bulkRaw(Array.from({ length: JOBS }, (_, n) => slowJob(n, 0.05)));
              const workers = [startWorker(server, t.table, env), startWorker(server, t.table, env)];
              const alive = () =>
                workers
                  .map((w, i) => (w.child.exitCode === null && w.child.signalCode === null ? '' : `worker ${i + 1} exited: ${w.stderr()}`))
                  .join('');
              try {
                for (let kill = 1; kill <= KILLS; kill++) {
                  // Kill it at work: once some jobs have run since the last restart.
                  const before = doneJobs().size;
                  await waitFor(
                    `jobs to run before kill ${kill}`,
                    () => doneJobs().size >= Math.min(JOBS, before + Math.ceil(JOBS / (KILLS + 2))) || alive() !== '',
                    () => `${doneJobs().size} done`,
                  );
                  expect(alive(), `before kill ${kill}`).toBe('');
                  await server.kill();
                  await pause(OUTAGE_MS);
                  await server.restart();
                  // Each worker has said the outage, and that the server is back.
                  await waitFor(
                    `each worker to say outage ${kill} ended`,
                    () => workers.every((w) => (w.stderr().match(/answers again/g) ?? []).length >= kill) || alive() !== '',
                    () => workers.map((w, i) => `worker ${i + 1}: ${w.stderr().slice(-600)}`).join(' | '),
                  );
                  expect(alive(), `after kill ${kill}`).toBe('');
                }
                await waitFor(
                  'every job to run and the table to empty',
                  async () => doneJobs().size === JOBS && (await queue.size()) === 0,
                  () => `${doneJobs().size} of ${JOBS} done; ${alive()}`,
                );
                expect(alive(), 'both workers, once every job ran').toBe('');
              } finally {
                for (const worker of workers) worker.child.kill('SIGTERM');
              }
              const exits = await Promise.all(workers.map((w) => w.exit));
              for (const [i, worker] of workers.entries()) {
                const stderr = worker.stderr();
                expect(exits[i], `worker ${i + 1}'s exit after SIGTERM; its standard error: ${stderr.slice(-2000)}`).toEqual({
                  code: 0,
                  signal: null,
                });
                expect(stderr, `worker ${i + 1}: no unhandled error`).not.toMatch(/Unhandled|uncaught/i);
                const down = stderr.match(/the queue's database is unreachable[^\n]*/g) ?? [];
                const up = stderr.match(/answers again[^\n]*/g) ?? [];
                // One line when each outage starts and one when it ends (none per retry).
                expect(up.length, `worker ${i + 1}'s back lines: ${up.join(' | ')}`).toBeGreaterThanOrEqual(KILLS);
                expect(down.length, `worker ${i + 1}'s outage lines, one per back line: ${down.join(' | ')}`).toBe(up.length);
                expect(down[0], `worker ${i + 1}'s outage line names the server`).toContain(
                  `${name === 'MariaDB' ? 'MySQL' : name} at 127.0.0.1:${server.port}/test`,
                );
                expect(stderr, `worker ${i + 1}: no error line besides the outages`).not.toMatch(/could not (finish|renew)/);
              }
              const runs = readRuns(records);
              const missing = Array.from({ length: JOBS }, (_, n) => n).filter((n) => !doneJobs().has(n));
              expect(missing, 'jobs never run to their end').toEqual([]);
              const started = new Map<number, number>();
              for (const r of runs) if (r.phase === 'start') started.set(r.props.n, (started.get(r.props.n) ?? 0) + 1);
              const twice = [...started].filter(([, count]) => count > 1).length;
              // At least once: only a job whose reservation ran out during an outage runs again.
              expect(twice, `jobs run more than once, of ${JOBS}`).toBeLessThan(JOBS / 4);
              expect(await queue.size(), 'rows left in the jobs table (reserved or not)').toBe(0);
            } finally {
              await queue.close();
            }
          },
        );
      } finally {
        await server.remove();
      }
    },
    bySize(300_000, 900_000),
  );
});
