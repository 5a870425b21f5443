/**
 * The database driver end to end through `lqb`, against Laravel 8.83's real `database` queue
 * connection and worker (php-fixture-gen/laravel-database-queue.php, laravel-worker.php database):
 * - `lqb work database` runs the jobs Laravel pushed (values and PHP types), fails one into
 *   failed_jobs with the connection `database`; `lqb retry` puts it back in the jobs table, and
 *   Laravel's worker runs it;
 * - `lqb dispatch --connection=database` (a row id for `id`, a delayed job) and Laravel's worker
 *   runs them; a release by Node is run by Laravel as its next attempt;
 * - a Laravel-11-style .env (DB_CONNECTION=sqlite, QUEUE_CONNECTION=database, CACHE_STORE=database)
 *   needs no Redis: Redis is pointed at a port nothing listens on, and every command works;
 *   `lqb restart` writes the `cache` row Laravel's DatabaseStore reads.
 * The crossings on SQLite, MariaDB and PostgreSQL; the .env and retry cases on SQLite.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HANDLERS, lqb, php } from '../helpers/processes.js';
import { REDIS_URL, rawClient } from '../helpers/redis.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/FailedJobProvider.js';
import { root } from '../helpers/php.js';
import { QUEUE_DATABASES, withJobsTable, type JobsTable } from '../helpers/jobs-table.js';

const RECORD_JOB = 'App\\Jobs\\Bridge\\RecordJob';
const FLAKY_JOB = 'App\\Jobs\\Bridge\\FlakyJob';
const CROSSING = QUEUE_DATABASES;

/** The environment for `lqb` on this table: Node's own record file, nothing of Laravel's connection settings but the test's. */
function nodeEnv(t: JobsTable, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...t.env, LQB_NODE_RECORD_FILE: join(t.dir, 'node-runs.jsonl'), ...extra };
  // The flags say the connection: no QUEUE_CONNECTION / LQB_QUEUE_DB / DB_QUEUE_TABLE from the test's PHP side.
  for (const name of ['QUEUE_CONNECTION', 'LQB_QUEUE_DB', 'LQB_JOBS_TABLE', 'DB_QUEUE_TABLE', 'REDIS_URL', 'REDIS_CLUSTER'])
    delete env[name];
  return env;
}

/** The flags naming the database connection: its database and jobs table. */
const dbFlags = (t: JobsTable) => [`--queue-db=${t.url.includes('://') ? t.url : `sqlite://${t.url}`}`, `--jobs-table=${t.table}`];

function lines(file: string): Record<string, any>[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
}

async function laravelWorker(t: JobsTable, flags: string[]): Promise<Record<string, any>[]> {
  const before = lines(t.env.LQB_RECORD_FILE!).length;
  const result = await php('laravel-worker.php', ['database', ...flags], t.env, { timeoutMs: 60_000 });
  if (result.status !== 0) throw new Error(`laravel-worker.php exited ${result.status}: ${result.stderr.trim()}`);
  return lines(t.env.LQB_RECORD_FILE!).slice(before);
}

async function ok(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const result = await lqb(args, env, { timeoutMs: 60_000 });
  if (result.status !== 0) throw new Error(`lqb ${args[0]} exited ${result.status}: ${result.stderr.trim()}`);
  return result.stdout;
}

/** Laravel 8.83's DatabaseStore (cache-store.php) on a SQLite file: its cache tables made, or a value read. */
function laravelCache(file: string, prefix: string, ops: object[]): unknown[] {
  return JSON.parse(
    execFileSync('php', [`${root}php-fixture-gen/cache-store.php`], {
      input: JSON.stringify({ connection: { driver: 'sqlite', database: file, prefix: '' }, table: 'cache', prefix, ops }),
      encoding: 'utf8',
    }),
  ) as unknown[];
}

const TYPES = { n: 'int', label: 'string', ratio: 'float', items: 'array', flag: 'null' };

describe.each(CROSSING)('lqb on the database connection with Laravel 8.83, on %s', (name, url) => {
  // SQLite keeps the worker's cache in the app's database (no Redis named); a shared server's
  // `cache` table is not this test's to make, so there the cache is Redis's, under the test's prefix.
  const sqlite = name === 'SQLite';
  const cacheFlags = (t: JobsTable): string[] =>
    sqlite ? [] : ['--redis=redis://127.0.0.1:6379', `--prefix=${t.env.REDIS_PREFIX}`, '--cache-prefix=laravel_cache'];
  // The database store's tables in the app's database: the one failed_jobs is in (LQB_FAILED_DB, shared with Laravel's worker).
  const prepare = (t: JobsTable) => {
    if (!sqlite) return;
    // Laravel's SQLite connection opens a file that is there.
    if (!existsSync(t.env.LQB_FAILED_DB!)) writeFileSync(t.env.LQB_FAILED_DB!, '');
    laravelCache(t.env.LQB_FAILED_DB!, 'laravel_cache', [{ op: 'create' }, { op: 'create-locks', table: 'cache_locks' }]);
  };

  it('lqb work database runs what Laravel pushed; a failure is recorded for `database`; lqb retry puts it back and Laravel runs it', () =>
    withJobsTable(url, async (t) => {
      prepare(t);
      const env = nodeEnv(t);
      const ran = '7d7c1b1e-0000-4000-8000-0000000000a1';
      const failing = '7d7c1b1e-0000-4000-8000-0000000000a2';
      const { id } = await t.laravel('record', { uuid: ran, n: 7, label: 'héllo/wörld', ratio: 2.0, items: [1, 'two'] });
      await t.laravel('record', { uuid: failing, n: 8, label: 'fail-in-node', ratio: 0.25, items: [] });

      const work = await lqb(
        ['work', 'database', ...dbFlags(t), ...cacheFlags(t), `--handlers=${HANDLERS}`, '--stop-when-empty', '--no-share', '--sleep=0'],
        env,
        { timeoutMs: 60_000 },
      );
      expect(work.status, `lqb work database exited: ${work.stderr}`).toBe(0);
      expect(work.stderr, 'the start line names the jobs table').toContain(`database ${t.table} in `);
      const runs = lines(env.LQB_NODE_RECORD_FILE!);
      expect(
        runs.map((run) => [run.uuid, run.attempts, run.jobId, run.props.n, run.props.label, run.props.ratio, run.props.items]),
        'what Node ran: the row id, attempts from the column, the values Laravel wrote',
      ).toEqual([
        [ran, 1, String(id), 7, 'héllo/wörld', 2, [1, 'two']],
        [failing, 1, expect.any(String), 8, 'fail-in-node', 0.25, []],
      ]);

      const failed = (await ok(['failed', '--json', '--connection=database', ...dbFlags(t)], env))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(
        failed.map((f) => [f.id, f.connection, f.queue]),
        'failed_jobs: the job Node failed, named for the database connection',
      ).toEqual([[failing, 'database', 'default']]);
      expect(await t.laravel('rows'), 'the jobs table once both ran').toEqual([]);

      expect(await ok(['retry', failing, '--connection=database', ...dbFlags(t)], env)).toContain(
        `The failed job [${failing}] has been pushed back`,
      );
      const rows = (await t.laravel('rows')) as Record<string, any>[];
      expect(
        rows.map((row) => [JSON.parse(row.payload).uuid, Number(row.attempts), row.reserved_at]),
        'the retried job, back in the jobs table as a fresh row',
      ).toEqual([[failing, 0, null]]);

      const php = await laravelWorker(t, ['--stop-when-empty']);
      expect(
        php.map((run) => [run.uuid, run.attempts, run.props.label, run.props.types]),
        'Laravel’s worker runs the retried job',
      ).toEqual([[failing, 1, 'fail-in-node', TYPES]]);
      expect(await ok(['failed', '--json', '--connection=database', ...dbFlags(t)], env), 'failed_jobs after the retry').toBe('');
    }));

  it('lqb dispatch --connection=database: a row id, a delayed job and a release, each run by Laravel’s worker', () =>
    withJobsTable(url, async (t) => {
      prepare(t);
      const env = nodeEnv(t);
      const db = ['--connection=database', ...dbFlags(t), ...cacheFlags(t)];
      const props = JSON.stringify({ n: 3, label: 'from node', ratio: 1.5, items: [1, 2], flag: null });
      const now = JSON.parse(await ok(['dispatch', RECORD_JOB, `--props=${props}`, ...db], env));
      // An hour's delay: still delayed whatever the machine's pace when find and size look.
      const later = JSON.parse(
        await ok(['dispatch', RECORD_JOB, `--props=${props.replace('from node', 'later')}`, '--delay=3600', ...db], env),
      );
      const rows = (await t.laravel('rows')) as Record<string, any>[];
      expect(
        rows.map((row) => [Number(row.id), Number(row.available_at) - Number(row.created_at), Object.keys(JSON.parse(row.payload))]),
        'the rows dispatch wrote: the id it printed, the delay, no id or attempts in the payload',
      ).toEqual([
        [now.id, 0, expect.not.arrayContaining(['id', 'attempts'])],
        [later.id, 3600, expect.not.arrayContaining(['id', 'attempts'])],
      ]);
      const found = JSON.parse(await ok(['find', String(later.id), ...db], env));
      expect([found.state, found.id, found.attempts], 'lqb find of the delayed row').toEqual(['delayed', String(later.id), 0]);
      expect(JSON.parse(await ok(['size', '--json', ...db], env)), 'lqb size').toMatchObject({ size: 2, ready: 1, delayed: 1 });

      const first = await laravelWorker(t, ['--stop-when-empty']);
      expect(
        first.map((run) => [Number(run.jobId), run.uuid, run.props.label, run.props.types]),
        'Laravel runs the job due now, not the delayed one',
      ).toEqual([[now.id, now.uuid, 'from node', TYPES]]);
      expect(await ok(['clear', 'database', ...dbFlags(t), ...cacheFlags(t)], env), 'lqb clear database').toContain(
        'Cleared 1 jobs from the [default] queue',
      );
      const soon = JSON.parse(await ok(['dispatch', RECORD_JOB, `--props=${props.replace('from node', 'soon')}`, '--delay=2', ...db], env));
      const second = await laravelWorker(t, ['--max-jobs=1', '--sleep=1', '--max-time=30']);
      expect(
        second.map((run) => [Number(run.jobId), run.uuid, run.props.label]),
        'Laravel runs a delayed job once it is due',
      ).toEqual([[soon.id, soon.uuid, 'soon']]);

      // Node's attempt 1 throws and releases; Laravel's worker runs attempt 2 from the new row.
      const flaky = JSON.parse(await ok(['dispatch', FLAKY_JOB, '--props={"n":5,"failTimes":1}', ...db], env));
      const work = await lqb(
        ['work', 'database', ...dbFlags(t), ...cacheFlags(t), `--handlers=${HANDLERS}`, '--once', '--tries=2', '--no-share'],
        env,
        { timeoutMs: 60_000 },
      );
      expect(work.status, `lqb work --once exited: ${work.stderr}`).toBe(0);
      const released = (await t.laravel('rows')) as Record<string, any>[];
      expect(
        released.map((row) => [JSON.parse(row.payload).uuid, Number(row.attempts), row.reserved_at]),
        'the row Node’s release left: a new row, attempts 1, not reserved',
      ).toEqual([[flaky.uuid, 1, null]]);
      const third = await laravelWorker(t, ['--stop-when-empty', '--tries=2']);
      expect(
        third.map((run) => [run.uuid, run.attempts]),
        'Laravel runs the released job as its second attempt',
      ).toEqual([[flaky.uuid, 2]]);
      expect(await t.laravel('rows'), 'nothing left').toEqual([]);
    }));
});

describe('a Laravel-11-style .env on SQLite: no Redis at all', () => {
  it('works, dispatches, sizes, fails and retries with Redis pointed at nothing; lqb restart writes the row Laravel reads', () =>
    withJobsTable(QUEUE_DATABASES[0]![1], async (t) => {
      const prefix = 'lqbapp_cache_';
      laravelCache(t.url, prefix, [{ op: 'create' }, { op: 'create-locks', table: 'cache_locks' }]);
      const envFile = join(t.dir, '.env');
      writeFileSync(
        envFile,
        [
          'APP_NAME=Laravel',
          'DB_CONNECTION=sqlite',
          `DB_DATABASE=${t.url}`,
          'QUEUE_CONNECTION=database',
          `DB_QUEUE_TABLE=${t.table}`,
          'CACHE_STORE=database',
          `CACHE_PREFIX=${prefix}`,
          // Every skeleton's .env names REDIS_HOST; nothing listens on this port, so any Redis client would never be ready.
          'REDIS_HOST=127.0.0.1',
          'REDIS_PORT=1',
          '',
        ].join('\n'),
      );
      const env = nodeEnv(t);
      for (const name of ['LQB_FAILED_DB', 'REDIS_PREFIX', 'CACHE_PREFIX', 'CACHE_DRIVER', 'CACHE_STORE', 'DB_CONNECTION'])
        delete env[name];
      const app = [`--env=${envFile}`];

      const pushed = '7d7c1b1e-0000-4000-8000-0000000000b1';
      await t.laravel('record', { uuid: pushed, n: 1, label: 'fail-in-node', ratio: 0.5, items: [1] });
      const work = await lqb(['work', ...app, `--handlers=${HANDLERS}`, '--stop-when-empty', '--no-share', '--sleep=0'], env, {
        timeoutMs: 30_000,
      });
      expect(work.status, `lqb work --env exited: ${work.stderr}`).toBe(0);
      expect(work.stderr, 'nothing said about Redis').not.toMatch(/redis/i);
      expect(
        lines(env.LQB_NODE_RECORD_FILE!).map((run) => run.uuid),
        'what Node ran',
      ).toEqual([pushed]);
      const failed = JSON.parse(await ok(['failed', '--json', ...app], env));
      expect([failed.id, failed.connection], 'failed_jobs in the app’s database, for the database connection').toEqual([
        pushed,
        'database',
      ]);
      await ok(['retry', 'all', ...app], env);

      const dispatched = JSON.parse(
        await ok(['dispatch', RECORD_JOB, '--props={"n":2,"label":"env","ratio":1.0,"items":[],"flag":true}', ...app], env),
      );
      expect(dispatched.id, 'the row id, an int as Laravel’s insertGetId gives it').toEqual(expect.any(Number));
      expect(JSON.parse(await ok(['size', '--json', ...app], env)), 'lqb size: the retried and the dispatched job').toMatchObject({
        size: 2,
      });
      const runs = await laravelWorker(t, ['--stop-when-empty']);
      expect(
        runs.map((run) => [run.uuid, run.props.label]),
        'Laravel runs both',
      ).toEqual([
        [pushed, 'fail-in-node'],
        [dispatched.uuid, 'env'],
      ]);

      const before = Math.floor(Date.now() / 1000);
      expect(await ok(['restart', ...app], env)).toContain('Broadcasting queue restart signal.');
      const [signal] = laravelCache(t.url, prefix, [{ op: 'get', key: 'illuminate:queue:restart' }]);
      expect(Number(signal) - before, 'the restart time Laravel’s DatabaseStore reads from the cache table').toBeGreaterThanOrEqual(0);
      expect(await ok(['pause', 'default', ...app], env)).toContain('[database:default] has been paused');
      const [paused] = laravelCache(t.url, prefix, [{ op: 'get', key: 'illuminate:queue:paused:database:default' }]);
      expect(paused, 'the pause switch Laravel reads').toBe(true);
    }));
});

describe('lqb retry pushes onto the connection each record names', () => {
  it('a record of `redis` goes to Redis and one of `database` to the jobs table, whichever connection the flags name', () =>
    withJobsTable(QUEUE_DATABASES[0]![1], async (t) => {
      const env = nodeEnv(t);
      const failer = DatabaseUuidFailedJobProvider.fromUrl(t.env.LQB_FAILED_DB!);
      const redisJob = '7d7c1b1e-0000-4000-8000-0000000000e1';
      const dbJob = '7d7c1b1e-0000-4000-8000-0000000000e2';
      const payload = (uuid: string, redis: boolean) =>
        JSON.stringify({
          uuid,
          displayName: RECORD_JOB,
          job: 'Illuminate\\Queue\\CallQueuedHandler@call',
          data: { commandName: RECORD_JOB, command: 'O:8:"stdClass":0:{}' },
          ...(redis ? { id: 'abc', attempts: 1 } : {}),
        });
      const redis = rawClient();
      try {
        await failer.log('redis', 'default', payload(redisJob, true), 'boom');
        await failer.log('database', 'default', payload(dbJob, false), 'boom');
        const flags = ['--connection=database', ...dbFlags(t), `--redis=${REDIS_URL}`, `--prefix=${t.env.REDIS_PREFIX}`];
        const out = await ok(['retry', 'all', ...flags], env);
        expect(out.trim().split('\n'), 'both retried').toHaveLength(2);
        const onRedis = await redis.lrange(`${t.env.REDIS_PREFIX}queues:default`, 0, -1);
        expect(
          onRedis.map((raw) => [JSON.parse(raw).uuid, JSON.parse(raw).attempts]),
          'the redis record, on Redis with its attempts reset',
        ).toEqual([[redisJob, 0]]);
        const rows = (await t.laravel('rows')) as Record<string, any>[];
        expect(
          rows.map((row) => JSON.parse(row.payload).uuid),
          'the database record, in the jobs table',
        ).toEqual([dbJob]);
      } finally {
        await failer.close();
        redis.disconnect();
      }
    }));
});
