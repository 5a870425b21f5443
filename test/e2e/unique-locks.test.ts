/**
 * Unique jobs' locks against Debian's real Laravel 8.83: Laravel dispatches (PendingDispatch
 * takes the lock, drops a duplicate), then either Laravel's own worker or `lqb work` runs the
 * job, and the lock ends as Laravel's worker leaves it: gone after success, before the handler
 * for ShouldBeUniqueUntilProcessing, gone on failure, kept when the job is released. In the
 * Redis cache store and in the database store's cache_locks (SQLite).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { lqb, php, scratchPerTest, type Scratch } from '../helpers/processes.js';
import { root } from '../helpers/php.js';
import { rawClient, removePrefix } from '../helpers/redis.js';

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
  expect(node.runs.map((r) => r.lockHeld), 'lock held while the handler ran, Node as PHP').toEqual(php.runs.map((r) => r.lockHeld));
  expect({ lockAfter: node.lockAfter, requeued: node.requeued }, 'the lock after the run, Node as PHP').toEqual({ lockAfter: php.lockAfter, requeued: php.requeued });
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

  it('a uniqueId() method (PHP) with no key in the payload: the log names the class, the lock is not silently dropped', async () => {
    expect(await bookkeeping('unique', { n: 1, byMethod: true })).toEqual({ queued: true });
    const run = await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', '--no-share', `--shapes=${await shapesFile()}`], s.env);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/Error: +App\\Jobs\\Bookkeeping\\UniqueByMethodJob: App\\Jobs\\Bookkeeping\\UniqueByMethodJob defines uniqueId\(\)/);
    // Laravel's key holds uniqueId()'s result, which only PHP knows: the lock stays, and the log said so.
    expect((await bookkeeping('lock', { byMethod: true, uniqueId: 'method-1' })).owner).not.toBeNull();
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

  it('failure and release: deleted on failure, kept on release', async () => {
    database();
    const failed = await sameOnBothSides({ label: 'fail', uniqueId: 'f' }, database);
    expect(failed.node.lockAfter).toBe(false);
    database();
    const released = await sameOnBothSides({ label: 'release', uniqueId: 'r' }, database);
    expect(released.node.lockAfter).toBe(true);
  });
});
