/**
 * Jobs that outlive retry_after. Laravel pushes 40 SlowJobs of 3 s on a connection whose
 * retry_after is 1 s; `lqb work` takes them all and renews their reservations while they run,
 * and Laravel's own worker, polling the same queue the whole time, takes none of them early.
 * Each job runs once, to its end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { HANDLERS, lqb, php, scratch, type RunResult, type Scratch } from '../helpers/processes.js';
import { rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const QUEUE = 'long';
const JOBS = 40;
const prefix = uniquePrefix('long');
const s: Scratch = scratch(prefix, QUEUE);
let node: RunResult;
let laravel: RunResult;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  await php('laravel-dispatch.php', ['slow', JSON.stringify({ queue: QUEUE, n: 1, count: JOBS, seconds: 3 })], s.env);
  const running = lqb(
    [
      'work',
      `--handlers=${HANDLERS}`,
      `--queue=${QUEUE}`,
      '--retry-after=1',
      '--timeout=10',
      '--tries=3',
      `--concurrency=${JOBS}`,
      '--stop-when-empty',
      '--sleep=0.1',
    ],
    s.env,
    { timeoutMs: 60_000 },
  );
  // Laravel's worker starts once Node holds every job, and polls until well after they are done.
  const deadline = Date.now() + 20_000;
  while (s.nodeRuns().filter((r) => r.phase === 'start').length < JOBS && Date.now() < deadline) await pause(50);
  [node, laravel] = await Promise.all([
    running,
    php('laravel-worker.php', [`--queue=${QUEUE}`, '--retry-after=1', '--tries=3', '--sleep=0', '--max-time=5'], s.env, {
      timeoutMs: 60_000,
    }),
  ]);
}, 90_000);

afterAll(async () => {
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  s.remove();
});

describe('Laravel pushes jobs that outlive retry_after; Node runs them beside Laravel’s worker', () => {
  it('each job runs once in Node, to its end', () => {
    expect(node.status, node.stderr).toBe(0);
    const runs = new Map<number, string[]>();
    for (const run of s.nodeRuns()) runs.set(run.props.n, [...(runs.get(run.props.n) ?? []), run.phase]);
    const odd = [...runs].filter(([, phases]) => phases.join() !== 'start,done').map(([n, phases]) => `job ${n}: ${phases.join(', ')}`);
    expect(odd).toEqual([]);
    expect(runs.size).toBe(JOBS);
  });

  it('Laravel’s worker, polling the whole time, takes none of them, and none is failed', async () => {
    expect(laravel.status, laravel.stderr).toBe(0);
    expect(laravel.stdout.split('\n').filter((line) => line.includes('Processing:'))).toEqual([]);
    expect(s.phpRuns().map((run) => `job ${run.props.n} ${run.phase} in PHP`)).toEqual([]);
    const failer = DatabaseUuidFailedJobProvider.fromUrl(s.env.LQB_FAILED_DB!);
    const failed = await failer.all();
    await failer.close();
    expect(failed.map((record) => record.exception.split('\n')[0])).toEqual([]);
  });

  it('warns at start that --timeout is not below --retry-after', () => {
    // The other start line (without shapes, unique locks of uniqueId() methods cannot be known) aside.
    expect(node.stdout.split('\n').filter((line) => line.includes('Warning:') && !line.includes('without class shapes'))).toHaveLength(1);
  });
});
