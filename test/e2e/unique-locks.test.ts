/**
 * Unique jobs' locks against Debian's real Laravel 8.83: Laravel dispatches (PendingDispatch
 * takes the lock, drops a duplicate), then either Laravel's own worker or `lqb work` runs the
 * job, and the lock ends as Laravel's worker leaves it: gone after success, before the handler
 * for ShouldBeUniqueUntilProcessing, gone on failure, kept when the job is released. In the
 * Redis cache store and in the database store's cache_locks (SQLite); and with the stock
 * skeleton's two Redis connections, where locks live on `lock_connection` (`default`), not with
 * the cache's values, in both directions (Laravel dispatches and lqb works, lqb dispatches and Laravel works).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lqb, php, scratchPerTest, type Scratch } from '../helpers/processes.js';
import { root } from '../helpers/php.js';
import { REDIS_URL, rawClient, removePrefix } from '../helpers/redis.js';
import { connect } from '../../src/connect/index.js';

const QUEUE = 'unique';
const HANDLERS = join(root, 'test/e2e/fixtures/bookkeeping-handlers.mjs');
// A Redis prefix and scratch directory of each test's own, removed after it.
const current = scratchPerTest('e2e-unique', QUEUE);
let prefix: string;
let s: Scratch;
beforeEach(() => ({ prefix, s } = current));

type Side = 'php' | 'node';
interface Spec {
  label?: string;
  uniqueId?: string;
  until?: boolean;
  byMethod?: boolean;
  opaque?: boolean;
}

const bookkeeping = async (kind: string, options: object) => {
  const result = await php('laravel-bookkeeping.php', [kind, JSON.stringify(options)], s.env);
  expect(result.stderr, `laravel-bookkeeping.php ${kind}`).toBe('');
  return JSON.parse(result.stdout) as Record<string, any>;
};

/** The class shapes as `lqb shapes` gives them (read by PHP's reflection). */
const shapesFile = async () => {
  const file = join(s.dir, 'shapes.json');
  writeFileSync(file, JSON.stringify(await bookkeeping('shapes', {})));
  return file;
};

/**
 * Laravel dispatches the job twice (the second is dropped while the lock is held), the given
 * side runs the queue, and what the lock became and what the handler saw are returned.
 */
async function runOn(side: Side, spec: Spec, flags: string[] = []) {
  const options = { n: 1, label: 'ok', uniqueId: 'u1', ...spec };
  const before = (side === 'php' ? s.phpRuns() : s.nodeRuns()).length;
  // Each run starts from empty queues and no Redis lock: nothing left by the last one.
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  expect(await bookkeeping('unique', options), 'the first dispatch is queued').toEqual({ queued: true });
  expect(await bookkeeping('unique', options), 'a duplicate is dropped while the lock is held').toEqual({ queued: false });
  const run =
    side === 'php'
      ? await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env)
      : await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', ...flags], s.env);
  expect(run.status, `${side} worker: ${run.stderr}`).toBe(0);
  const runs = (side === 'php' ? s.phpRuns() : s.nodeRuns()).slice(before);
  const lock = (await bookkeeping('lock', options)) as { owner: string | null };
  return { runs, lockAfter: lock.owner !== null, stdout: run.stdout, requeued: (await bookkeeping('unique', options)).queued as boolean };
}

/** Runs the same case on Laravel's worker and on lqb work (each in a fresh prefix), and compares. */
async function sameOnBothSides(spec: Spec, flags: () => Promise<string[]> | string[] = () => []) {
  const php = await runOn('php', spec);
  const node = await runOn('node', spec, await flags());
  expect(
    node.runs.map((r) => r.lockHeld),
    'lock held while the handler ran, Node as PHP',
  ).toEqual(php.runs.map((r) => r.lockHeld));
  expect({ lockAfter: node.lockAfter, requeued: node.requeued }, 'the lock after the run, Node as PHP').toEqual({
    lockAfter: php.lockAfter,
    requeued: php.requeued,
  });
  return { php, node };
}

describe('Laravel dispatches a ShouldBeUnique job; Laravel’s worker or lqb work runs it (Redis cache store)', () => {
  it('success: the lock is held while it runs and gone after, so the next dispatch is queued', async () => {
    const { node } = await sameOnBothSides({});
    expect(node.runs).toMatchObject([{ lockHeld: true, props: { uniqueId: 'u1' } }]);
    expect(node.lockAfter).toBe(false);
    expect(node.requeued).toBe(true);
  });

  it('ShouldBeUniqueUntilProcessing, with the class shapes: the lock is gone before the handler runs', async () => {
    const { node } = await sameOnBothSides({ until: true }, async () => [`--shapes=${await shapesFile()}`]);
    expect(node.runs).toMatchObject([{ lockHeld: false }]);
    expect(node.lockAfter).toBe(false);
  });

  it('ShouldBeUniqueUntilProcessing without shapes: released after the run instead (the command does not say), never kept', async () => {
    const node = await runOn('node', { until: true });
    expect(node.runs).toMatchObject([{ lockHeld: true }]);
    expect(node.lockAfter).toBe(false);
  });

  it('failure: the lock is released when the job fails', async () => {
    const { node } = await sameOnBothSides({ label: 'fail' });
    expect(node.stdout).toMatch(/Failed: +App\\Jobs\\Bookkeeping\\UniqueJob/);
    expect(node.lockAfter).toBe(false);
  });

  it('release: a job released for a retry keeps its lock', async () => {
    const { node } = await sameOnBothSides({ label: 'release' });
    expect(node.lockAfter).toBe(true);
    expect(node.requeued).toBe(false);
  });
});

describe('a uniqueId() method, Laravel 8.83 (the payload carries no lock key): lqb work with the class shapes', () => {
  const opaqueId = createHash('md5').update('opaque-1').digest('hex');
  const queued = async () => {
    const raw = rawClient();
    const counts = await Promise.all([
      raw.llen(`${prefix}queues:${QUEUE}`),
      raw.zcard(`${prefix}queues:${QUEUE}:delayed`),
      raw.zcard(`${prefix}queues:${QUEUE}:reserved`),
    ]);
    raw.disconnect();
    return { ready: counts[0], delayed: counts[1], reserved: counts[2] };
  };

  it("translated by lqb shapes ('method-' . $this->n): the lock is released as Laravel’s worker releases it", async () => {
    const { node } = await sameOnBothSides({ byMethod: true, uniqueId: 'method-1' }, async () => [`--shapes=${await shapesFile()}`]);
    expect(node.runs).toMatchObject([{ lockHeld: true }]);
    expect(node.lockAfter).toBe(false);
    expect(node.requeued).toBe(true);
  });

  it('untranslated (md5()), the handler giving uniqueId in JavaScript: the lock is released as Laravel’s worker releases it', async () => {
    const { node } = await sameOnBothSides({ opaque: true, uniqueId: opaqueId }, async () => [`--shapes=${await shapesFile()}`]);
    expect(node.runs).toMatchObject([{ lockHeld: true }]);
    expect(node.lockAfter).toBe(false);
    expect(node.requeued).toBe(true);
  });

  it('untranslated and no uniqueId function: exit 2 before taking any job, naming class and method; with --share given back, and PHP frees the lock', async () => {
    const spec = { n: 1, opaque: true, uniqueId: opaqueId };
    expect(await bookkeeping('unique', spec)).toEqual({ queued: true });
    const work = (flags: string[]) =>
      lqb(
        [
          'work',
          `--handlers=${join(root, 'test/e2e/fixtures/opaque-unique-handlers.mjs')}`,
          `--queue=${QUEUE}`,
          '--stop-when-empty',
          '--sleep=0',
          ...flags,
        ],
        s.env,
      );
    const shapes = await shapesFile();

    const refused = await work([`--shapes=${shapes}`, '--no-share']);
    expect(refused.status, refused.stderr).toBe(2);
    expect(refused.stdout).toMatch(
      /App\\Jobs\\Bookkeeping\\UniqueByOpaqueMethodJob is ShouldBeUnique and defines uniqueId\(\), which lqb shapes could not translate \(it calls or names md5, which is not translated\)/,
    );
    expect(refused.stdout, 'lqb work took a job').not.toMatch(/Processing:/);
    expect(await queued(), 'the job after lqb work refused').toEqual({ ready: 1, delayed: 0, reserved: 0 });
    expect((await bookkeeping('lock', spec)).owner, 'the lock after lqb work refused').not.toBeNull();

    const shared = await work([`--shapes=${shapes}`, '--share', '--share-delay=1']);
    expect(shared.status, shared.stderr).toBe(0);
    expect(shared.stdout).toMatch(/Given back: +App\\Jobs\\Bookkeeping\\UniqueByOpaqueMethodJob/);
    const back = await queued();
    expect({ queued: back.ready + back.delayed, reserved: back.reserved }, 'the job after lqb work --share').toEqual({
      queued: 1,
      reserved: 0,
    });
    expect((await bookkeeping('lock', spec)).owner, 'the lock after lqb work --share').not.toBeNull();
    // Given back with --share-delay=1: visible to Laravel's worker a second later.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const laravel = await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env);
    expect(laravel.status, laravel.stderr).toBe(0);
    expect(s.phpRuns().map((r) => r.class)).toEqual(['App\\Jobs\\Bookkeeping\\UniqueByOpaqueMethodJob']);
    expect((await bookkeeping('lock', spec)).owner, 'the lock after Laravel’s worker ran the job').toBeNull();
  });
});

describe('the database cache store (cache_locks on SQLite)', () => {
  /** Each call a fresh SQLite file for the locks, for PHP's dispatch and for whichever worker runs next. */
  let files = 0;
  const database = () => {
    s.env.LQB_CACHE_STORE = 'database';
    s.env.LQB_LOCK_DB = join(s.dir, `locks-${++files}.sqlite`);
    return ['--cache-store=database', `--lock-db=${s.env.LQB_LOCK_DB}`];
  };

  it('success: the row is deleted after the run, as by Laravel’s worker', async () => {
    database();
    const { node } = await sameOnBothSides({}, database);
    expect(node.runs).toMatchObject([{ lockHeld: true }]);
    expect(node.lockAfter).toBe(false);
  });

  it('the store named only by the --env file (CACHE_DRIVER=database), as connect({ env }) reads it: lqb work --env deletes the row', async () => {
    const env = () => {
      const [, lockDb] = database();
      const file = join(s.dir, '.env');
      writeFileSync(
        file,
        'APP_NAME=Laravel\nCACHE_DRIVER=database\nQUEUE_CONNECTION=redis\nREDIS_HOST=127.0.0.1\nREDIS_PASSWORD=null\nREDIS_PORT=6379\n',
      );
      return [`--env=${file}`, lockDb!];
    };
    env();
    const { node } = await sameOnBothSides({ uniqueId: 'e1' }, env);
    expect(node.runs, 'lqb work ran the job holding Laravel’s cache_locks row').toMatchObject([{ lockHeld: true }]);
    expect(node.lockAfter, 'the cache_locks row after lqb work --env ran the job').toBe(false);
  });

  it('failure and release: deleted on failure, kept on release', async () => {
    database();
    const failed = await sameOnBothSides({ label: 'fail', uniqueId: 'f' }, database);
    expect(failed.node.lockAfter).toBe(false);
    database();
    const released = await sameOnBothSides({ label: 'release', uniqueId: 'r' }, database);
    expect(released.node.lockAfter).toBe(true);
  });
});

describe('the stock skeleton’s two connections: values on `cache` (REDIS_CACHE_DB 1), locks on `default` (REDIS_DB 0)', () => {
  // config/cache.php's redis store since 8.x: 'connection' => 'cache', 'lock_connection' => 'default'.
  const LOCKS_DB = 0;
  const VALUES_DB = 1;
  /** Both sides configured as the stock skeleton: Laravel through CacheManager, lqb through --env. */
  const stock = () => {
    Object.assign(s.env, { REDIS_DB: String(LOCKS_DB), REDIS_CACHE_DB: String(VALUES_DB) });
    const file = join(s.dir, '.env');
    writeFileSync(
      file,
      'APP_NAME=Laravel\nCACHE_DRIVER=redis\nQUEUE_CONNECTION=redis\nREDIS_HOST=127.0.0.1\nREDIS_PASSWORD=null\nREDIS_PORT=6379\n',
    );
    return [`--env=${file}`];
  };
  /** The lock's owner in each database, by the raw key Laravel's RedisStore gives it. */
  const ownerIn = async (name: string) => {
    const key = `${prefix}laravel_cache:${name}`;
    const [locks, values] = [new Redis(`${REDIS_URL}/${LOCKS_DB}`), new Redis(`${REDIS_URL}/${VALUES_DB}`)];
    try {
      return { locksDb: await locks.get(key), valuesDb: await values.get(key) };
    } finally {
      locks.disconnect();
      values.disconnect();
    }
  };
  afterEach(async () => {
    const raw = new Redis(`${REDIS_URL}/${VALUES_DB}`);
    await removePrefix(raw, prefix);
    raw.disconnect();
  });

  it('Laravel dispatches, lqb work --env runs: the lock Laravel took in the lock database is freed, and the next dispatch is queued', async () => {
    const flags = stock();
    const key = 'laravel_unique_job:App\\Jobs\\Bookkeeping\\UniqueJobu1';
    expect(await bookkeeping('unique', { n: 1, label: 'ok', uniqueId: 'u1' }), 'Laravel’s first dispatch').toEqual({ queued: true });
    expect(await ownerIn(key), 'where Laravel’s PendingDispatch took the lock').toEqual({
      locksDb: expect.stringMatching(/^\w{16}$/),
      valuesDb: null,
    });
    const run = await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', ...flags], s.env);
    expect(run.status, run.stderr).toBe(0);
    expect(s.nodeRuns(), 'lqb work ran the job holding Laravel’s lock').toMatchObject([{ lockHeld: true, props: { uniqueId: 'u1' } }]);
    expect(await ownerIn(key), 'the lock after lqb work ran the job').toEqual({ locksDb: null, valuesDb: null });
    expect(await bookkeeping('unique', { n: 2, label: 'ok', uniqueId: 'u1' }), 'Laravel’s next dispatch is not dropped').toEqual({
      queued: true,
    });
  });

  it('the same run on Laravel’s worker and lqb work: held while running, freed on failure, kept on release', async () => {
    const ok = await sameOnBothSides({}, stock);
    expect(ok.node.lockAfter).toBe(false);
    const failed = await sameOnBothSides({ label: 'fail', uniqueId: 'f' }, stock);
    expect(failed.node.lockAfter).toBe(false);
    const released = await sameOnBothSides({ label: 'release', uniqueId: 'r' }, stock);
    expect(released.node.lockAfter).toBe(true);
  });

  it('connect({ env }).worker(): the library frees the lock Laravel took, in the lock database', async () => {
    const [flag] = stock();
    const key = 'laravel_unique_job:App\\Jobs\\Bookkeeping\\UniqueJobu9';
    expect(await bookkeeping('unique', { n: 1, label: 'ok', uniqueId: 'u9' }), 'Laravel’s dispatch').toEqual({ queued: true });
    const before = process.env;
    // connect() reads the process's environment over the .env, as lqb does: this test's settings.
    process.env = { ...s.env };
    const queue = await connect({ env: flag!.slice('--env='.length), failedDb: join(s.dir, 'failed.sqlite') }).finally(
      () => (process.env = before),
    );
    try {
      const ran: string[] = [];
      await queue
        .worker(
          { 'App\\Jobs\\Bookkeeping\\UniqueJob': async (job) => void ran.push(String(job.command.uniqueId)) },
          { queues: [QUEUE], once: true, sleep: 0 },
        )
        .run();
      expect(ran, 'the worker ran the job').toEqual(['u9']);
    } finally {
      await queue.close();
    }
    expect(await ownerIn(key), 'the lock after connect()’s worker ran the job').toEqual({ locksDb: null, valuesDb: null });
  });

  it('lqb dispatch --env takes the lock in the lock database, where Laravel’s worker frees it', async () => {
    const flags = stock();
    const shapes = join(s.dir, 'lqb-shapes.json');
    const made = await lqb(
      ['shapes', `--app=${join(root, 'php-fixture-gen/shapes-app')}`, '--class=App\\Jobs\\ImportFeed', `--out=${shapes}`],
      s.env,
    );
    expect(made.status, made.stderr).toBe(0);
    const dispatch = () =>
      lqb(['dispatch', 'App\\Jobs\\ImportFeed', '--props={"feed":"news"}', `--queue=${QUEUE}`, `--shapes=${shapes}`, ...flags], s.env);
    const first = await dispatch();
    expect(first.status, first.stderr).toBe(0);
    const key = 'laravel_unique_job:App\\Jobs\\ImportFeed';
    expect(await ownerIn(key), 'where lqb dispatch took the lock').toEqual({ locksDb: expect.stringMatching(/^\w{16}$/), valuesDb: null });
    const worker = await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env);
    expect(worker.status, worker.stderr).toBe(0);
    expect(
      s.phpRuns().map((r) => [r.class, r.props.feed]),
      'Laravel’s worker ran the job',
    ).toEqual([['App\\Jobs\\ImportFeed', 'news']]);
    expect(await ownerIn(key), 'the lock after Laravel’s worker ran the job').toEqual({ locksDb: null, valuesDb: null });
    const again = await dispatch();
    expect(JSON.parse(again.stdout).uuid, `dispatched again once Laravel freed the lock: ${again.stderr}`).toEqual(expect.any(String));
  });
});
