/**
 * Job middleware across the two sides. Laravel 8.83 dispatches the jobs; Laravel's own worker
 * runs them through the classes' WithoutOverlapping and RateLimited middleware, and `lqb work`
 * beside it runs them through withoutOverlapping() and rateLimited() (test/e2e/fixtures/
 * guard-handlers.mjs). Both guard with the same cache keys, so:
 * - overlapping: no two runs of jobs with one key overlap in time, whichever side ran them, and
 *   the side that found the lock taken released the job (1 s later, an attempt used) to run again;
 * - rate limited: PHP and Node spend one budget per limiter key (3 a minute) between them, and
 *   the jobs over it are released until the window ends, plus 3 seconds.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { RECORD_KEY_PATTERN } from '../../src/record/index.js';
import { lqb, php, scratchPerTest } from '../helpers/processes.js';
import { rawClient } from '../helpers/redis.js';
import { root } from '../helpers/php.js';

const QUEUE = 'guarded';
const HANDLERS = join(root, 'test/e2e/fixtures/guard-handlers.mjs');
const current = scratchPerTest('guards', QUEUE);

async function dispatch(kind: string, options: object): Promise<{ uuid: string }[]> {
  const result = await php('guards-dispatch.php', [kind, JSON.stringify({ queue: QUEUE, ...options })], current.s.env);
  expect(result.status, result.stderr).toBe(0);
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

async function failedRecords(): Promise<string[]> {
  const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
  try {
    return (await failer.all()).map((record) => record.exception.split('\n')[0]!);
  } catch {
    return []; // no worker failed anything, so neither created the table
  } finally {
    await failer.close();
  }
}

/** Keys left under the test's prefix, by name without it. */
async function keysLeft(): Promise<string[]> {
  const raw = rawClient();
  try {
    return (await raw.keys(`${current.prefix}*`)).map((key) => key.slice(current.prefix.length)).sort();
  } finally {
    raw.disconnect();
  }
}

describe('WithoutOverlapping in Laravel’s worker, withoutOverlapping() in lqb work, one key', () => {
  it('no two runs overlap, each job runs once to its end, and the side that found the lock released the job', async () => {
    const JOBS = 8;
    // The first job holds the lock for 2 s: lqb work takes it first, so Laravel's worker, started
    // while it runs, finds the lock taken; then both run the rest side by side.
    await dispatch('overlap', { n: 1, count: 1, key: 'shared', seconds: 2, releaseAfter: 1, tries: 50 });
    await dispatch('overlap', { n: 2, count: JOBS - 1, key: 'shared', seconds: 0.3, releaseAfter: 1, tries: 50 });
    const running = lqb(
      ['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--concurrency=2', '--sleep=0.05', '--max-time=12', '--tries=50'],
      current.s.env,
      { timeoutMs: 30_000 },
    );
    const deadline = Date.now() + 10_000;
    while (current.s.nodeRuns().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const [node, laravel] = await Promise.all([
      running,
      php('laravel-worker.php', [`--queue=${QUEUE}`, '--sleep=0', '--max-time=11', '--tries=50'], current.s.env, { timeoutMs: 30_000 }),
    ]);
    expect(node.status, node.stderr).toBe(0);
    expect(laravel.status, laravel.stderr).toBe(0);

    const runs = [...current.s.nodeRuns(), ...current.s.phpRuns()];
    type Span = { side: string; start?: number; done?: number; attempts: number };
    const byJob = new Map<number, Span>();
    const twice: string[] = [];
    for (const run of runs) {
      const n = Number(run.props.n);
      const entry: Span = byJob.get(n) ?? { side: run.side, attempts: run.attempts };
      if (entry[run.phase as 'start' | 'done'] !== undefined) twice.push(`job ${n} ${run.phase} twice`);
      entry[run.phase as 'start' | 'done'] = Number(run.t);
      byJob.set(n, entry);
    }
    expect(twice).toEqual([]);
    expect([...byJob.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: JOBS }, (_, i) => i + 1));
    const spans = [...byJob].map(([n, e]) => ({ n, ...e })).sort((a, b) => a.start! - b.start!);
    const overlaps: string[] = [];
    for (let i = 1; i < spans.length; i++) {
      const [a, b] = [spans[i - 1]!, spans[i]!];
      if (a.done === undefined || b.start! < a.done)
        overlaps.push(
          `job ${b.n} (${b.side}) started ${a.done === undefined ? 'while' : `${(a.done - b.start!).toFixed(1)} ms before`} job ${a.n} (${a.side}) ended`,
        );
    }
    expect(overlaps).toEqual([]);
    expect(spans.every((span) => span.done !== undefined)).toBe(true);
    expect(new Set(spans.map((s) => s.side))).toEqual(new Set(['node', 'php']));

    // Each side found the other's lock and released the job, to run on a later attempt: Node
    // says so; Laravel's worker reserved more jobs than it ran (it logs a release as processed).
    expect(node.stdout.split('\n').filter((line) => line.includes('Released:')).length).toBeGreaterThan(0);
    const phpReserved = laravel.stdout.split('\n').filter((line) => line.includes('Processing:')).length;
    expect(phpReserved).toBeGreaterThan(current.s.phpRuns().filter((run) => run.phase === 'start').length);
    expect(spans.some((span) => span.attempts > 1)).toBe(true);
    expect(await failedRecords()).toEqual([]);
    // Nothing left: no job, no lock.
    // lqb work's record of what it ran (src/record/) is kept on purpose, bounded and expiring: not a lock or a counter left behind.
    expect((await keysLeft()).filter((key) => !key.endsWith(':notify') && !RECORD_KEY_PATTERN.test(key))).toEqual([]);
  }, 60_000);
});

describe('RateLimited in Laravel’s worker, rateLimited() in lqb work, one limiter', () => {
  it('spend one budget: 3 a minute between them, the rest released until the window ends plus 3 s', async () => {
    await dispatch('limited', { n: 1, count: 2, key: 'team-1', tries: 5 });
    // Laravel runs the first two, then lqb work the third and no more; Laravel, again, none.
    const first = await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', '--tries=5'], current.s.env, {
      timeoutMs: 30_000,
    });
    expect(first.status, first.stderr).toBe(0);
    await dispatch('limited', { n: 3, count: 3, key: 'team-1', tries: 5 });
    const node = await lqb(
      ['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0.05', '--tries=5'],
      current.s.env,
      { timeoutMs: 30_000 },
    );
    expect(node.status, node.stderr).toBe(0);
    await dispatch('limited', { n: 6, count: 1, key: 'team-1', tries: 5 });
    const before = Math.floor(Date.now() / 1000);
    const second = await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', '--tries=5'], current.s.env, {
      timeoutMs: 30_000,
    });
    expect(second.status, second.stderr).toBe(0);
    // Another key has a budget of its own.
    await dispatch('limited', { n: 7, count: 1, key: 'team-2', tries: 5 });
    const other = await lqb(
      ['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0.05', '--tries=5'],
      current.s.env,
      { timeoutMs: 30_000 },
    );
    expect(other.status, other.stderr).toBe(0);

    const ran = [...current.s.phpRuns(), ...current.s.nodeRuns()].map((run) => `${run.props.n} ${run.side}`).sort();
    expect(ran).toEqual(['1 php', '2 php', '3 node', '7 node']);
    expect(node.stdout.split('\n').filter((line) => line.includes('Released:'))).toHaveLength(2);
    // Jobs 4, 5 (released by Node) and 6 (by Laravel) wait in :delayed until the window ends + 3 s.
    const raw = rawClient();
    const delayed = await raw.zrange(`${current.prefix}queues:${QUEUE}:delayed`, 0, -1, 'WITHSCORES');
    raw.disconnect();
    const scores = new Map<number, number>();
    for (let i = 0; i < delayed.length; i += 2) scores.set(JSON.parse(delayed[i]!).attempts, Number(delayed[i + 1]));
    expect(delayed.length / 2).toBe(3);
    for (const score of scores.values()) {
      expect(score).toBeGreaterThan(before + 50);
      expect(score).toBeLessThanOrEqual(before + 64);
    }
    expect(await failedRecords()).toEqual([]);
  }, 60_000);
});
