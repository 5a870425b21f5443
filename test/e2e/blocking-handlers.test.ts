/**
 * A handler that blocks the event loop (issue 22, part 1). Laravel pushes SlowJobs; Node's
 * handlers (fixtures/blocking-handlers.mjs) hold the loop synchronously, as CPU-bound code does.
 * Laravel's own worker, given the same job, is ended by its alarm at the timeout: SIGKILL to
 * itself (Worker::kill with posix loaded). `lqb work` must end the same way, at the same time,
 * whatever the handler does (even `for (;;)`, even after SIGTERM), and the job must come back
 * once, after retry_after, counted as Laravel counts a timed-out job.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { DatabaseUuidFailedJobProvider, Worker } from '../../src/worker/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { prefixedClient } from '../helpers/redis.js';
import { lqb, php, scratchPerTest, type RunResult } from '../helpers/processes.js';
import { root } from '../helpers/php.js';

const HANDLERS = join(root, 'test/e2e/fixtures/blocking-handlers.mjs');
const QUEUE = 'blocking';
const current = scratchPerTest('blocking', QUEUE);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function dispatchSlow(props: Record<string, unknown>): Promise<void> {
  const pushed = await php('laravel-dispatch.php', ['slow', JSON.stringify({ queue: QUEUE, ...props })], current.s.env);
  expect(pushed.status, pushed.stderr).toBe(0);
}

async function failedFirstLines(): Promise<string[]> {
  const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
  try {
    return (await failer.all()).map((record) => record.exception.split('\n')[0]!.replace(/ in \S+$/, ''));
  } finally {
    await failer.close();
  }
}

/** `lqb work` as a process of its own, with the moment it ended. */
function work(
  args: string[],
  onStart?: (child: ReturnType<typeof spawn>) => void,
): Promise<RunResult & { endedAt: number; pid: number | undefined }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'node',
      [join(root, 'dist/cli/main.js'), 'work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--sleep=0.1', ...args],
      { env: current.s.env },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const guard = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(guard);
      resolve({ status, signal, stdout, stderr, endedAt: Date.now(), pid: child.pid });
    });
    onStart?.(child);
  });
}

const startOf = (n: number, attempts = 1) =>
  current.s.nodeRuns().find((run) => run.props.n === n && run.attempts === attempts && run.phase === 'start');

describe('a handler that blocks the event loop past its timeout, as Laravel’s alarm ends it', () => {
  it('Laravel’s worker and lqb work both end by SIGKILL at the timeout; the job comes back after retry_after and is failed with Laravel’s record', async () => {
    // Laravel: its SlowJob sleeps in PHP, and the alarm interrupts it.
    await dispatchSlow({ n: 1, seconds: 4 });
    const laravelStarted = Date.now();
    const laravel = await php('laravel-worker.php', [`--queue=${QUEUE}`, '--timeout=1', '--sleep=0', '--retry-after=2'], current.s.env, {
      timeoutMs: 20_000,
    });
    const laravelRan = Date.now() - laravelStarted;
    expect(laravel.signal, `Laravel's worker ended with status ${laravel.status}: ${laravel.stderr}`).toBe('SIGKILL');
    expect(laravelRan).toBeLessThan(4000);
    const laravelRecord = await failedFirstLines();
    expect(laravelRecord).toEqual([
      'Illuminate\\Queue\\MaxAttemptsExceededException: App\\Jobs\\Bridge\\SlowJob has been attempted too many times or run too long. The job may have previously timed out.',
    ]);
    const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
    await failer.flush();
    await failer.close();

    // Node: the same job, its handler holding the loop for 4 s.
    await dispatchSlow({ n: 1, seconds: 4 });
    const node = await work(['--timeout=1', '--retry-after=2']);
    const started = startOf(1);
    expect(started, 'the job never started in Node').toBeDefined();
    expect(node.signal, `lqb work ended with status ${node.status} (${node.stderr})`).toBe('SIGKILL');
    expect(node.endedAt - started!.t, 'from the job’s start to the process’s end, ms').toBeGreaterThanOrEqual(1000);
    expect(node.endedAt - started!.t, 'from the job’s start to the process’s end, ms').toBeLessThan(2500);
    expect(node.stderr).toMatch(
      /^lqb watchdog: job App\\Jobs\\Bridge\\SlowJob \[\S+\] has blocked the event loop for 1\.\d s, past its timeout of 1 s: ending the process as Laravel's timeout does \(SIGKILL\)/m,
    );
    // lqb work gathers its lines for one write a turn; the watchdog writes what the held loop had
    // gathered before it ends the process, so the log ends with the blocked job's start, as Laravel's does.
    expect(node.stdout, "lqb work's last line, the blocked job's start").toMatch(/Processing:\s+App\\Jobs\\Bridge\\SlowJob\n$/);
    expect(
      current.s.nodeRuns().filter((run) => run.phase === 'done'),
      'the handler ran to its end',
    ).toEqual([]);

    // The next worker takes it once retry_after has passed, and fails it as Laravel did at once.
    // The thread's last renewal kept its fraction of a second, and a pop compares with Redis's
    // whole seconds (as Laravel's time() does): up to a second more before the job is due.
    await pause(3200);
    const next = await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--retry-after=2'], current.s.env, {
      timeoutMs: 20_000,
    });
    expect(next.status, next.stderr).toBe(0);
    expect(await failedFirstLines()).toEqual(laravelRecord);
  }, 60_000);

  it('a for (;;) handler is ended at its timeout, SIGTERM or not', async () => {
    await dispatchSlow({ n: 1, seconds: 5000 });
    const node = await work(['--timeout=1', '--retry-after=5'], (child) => {
      // SIGTERM while the handler spins: no signal handler can run on a blocked loop.
      const waitForStart = setInterval(() => {
        if (!startOf(1)) return;
        clearInterval(waitForStart);
        child.kill('SIGTERM');
      }, 20);
    });
    const started = startOf(1);
    expect(node.signal, `lqb work ended with status ${node.status}`).toBe('SIGKILL');
    expect(node.endedAt - started!.t, 'from the for (;;) job’s start to the process’s end, ms').toBeLessThan(2500);
    expect(node.stderr).toContain('has blocked the event loop');
  }, 30_000);

  it('two workers, one blocking job among async ones: each job completes once, the blocking one is retried once, nothing is failed', async () => {
    // n = 1 holds the loop for 6 s on its first attempt (past --timeout=2); n = 2..8 wait 1 s each.
    await dispatchSlow({ n: 1, seconds: 6 });
    await dispatchSlow({ n: 2, count: 7, seconds: 1 });
    const flags = ['--concurrency=4', '--timeout=2', '--retry-after=4', '--tries=2', '--max-time=12'];
    const [a, b] = await Promise.all([work(flags), work(flags)]);
    const runs = current.s.nodeRuns();
    const [killed, survivor] = startOf(1)!.pid === a.pid ? [a, b] : [b, a];
    expect(killed.signal, 'the worker that ran the blocking job').toBe('SIGKILL');
    expect(survivor.status, survivor.stderr).toBe(0);
    const blockingStart = startOf(1)!.t;
    expect(killed.endedAt - blockingStart, 'the blocking job’s start to its process’s end, ms').toBeLessThan(3500);

    const done = new Map<number, number>();
    for (const run of runs.filter((r) => r.phase === 'done')) done.set(run.props.n, (done.get(run.props.n) ?? 0) + 1);
    const notOnce = [1, 2, 3, 4, 5, 6, 7, 8].filter((n) => done.get(n) !== 1).map((n) => `job ${n} completed ${done.get(n) ?? 0} times`);
    expect(notOnce).toEqual([]);
    const blockingAttempts = runs.filter((run) => run.props.n === 1 && run.phase === 'start').map((run) => run.attempts);
    expect(blockingAttempts, 'the blocking job’s attempts').toEqual([1, 2]);
    const retriedAt = startOf(1, 2)!.t;
    // Reservations are scored in whole seconds from the reserve (as Laravel's are), which comes a
    // little before the start: one can run out up to a second early.
    expect(retriedAt - blockingStart, 'the blocking job came back well before retry_after (4 s)').toBeGreaterThanOrEqual(2800);
    expect(await failedFirstLines()).toEqual([]);
  }, 60_000);
});

describe('an embedded worker whose handler blocks the event loop', () => {
  it('keeps its jobs: the watchdog renews their reservations from its thread, and Laravel’s worker, polling the queue, takes none', async () => {
    await dispatchSlow({ n: 5, seconds: 3 });
    const client = prefixedClient(current.prefix);
    const queue = new RedisQueue(client, { retryAfter: 1 });
    const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
    let laravel: Promise<RunResult> | undefined;
    const handlers = {
      'App\\Jobs\\Bridge\\SlowJob': async () => {
        // Laravel's worker starts polling now, with retry_after 1 s; the loop is then held 3.5 s.
        laravel = php('laravel-worker.php', [`--queue=${QUEUE}`, '--retry-after=1', '--sleep=0', '--max-time=5'], current.s.env, {
          timeoutMs: 20_000,
        });
        const until = Date.now() + 3500;
        while (Date.now() < until);
      },
    };
    const events: string[] = [];
    try {
      await new Worker(
        queue,
        handlers,
        { queues: [QUEUE], timeout: 10, stopWhenEmpty: true, sleep: 0.05, memory: 0 },
        { failer, log: (e) => void events.push(`${e.event} ${e.job ?? ''}`.trim()) },
      ).run();
      const polled = await laravel!;
      expect(polled.status, polled.stderr).toBe(0);
      expect(
        polled.stdout.split('\n').filter((line) => line.includes('Processing:')),
        'Laravel’s worker took the job the blocked Node worker held',
      ).toEqual([]);
      expect(events).toContain('processed App\\Jobs\\Bridge\\SlowJob');
      expect(await failedFirstLines()).toEqual([]);
    } finally {
      await queue.close();
      await failer.close();
      client.disconnect();
    }
  }, 30_000);
});

describe('lqb work --sandbox: the handlers in worker threads', () => {
  it('runs the jobs Laravel pushes with what Laravel sent, its rules unchanged: a retry, a failure in failed_jobs', async () => {
    const pushed = await php(
      'laravel-dispatch.php',
      ['record', JSON.stringify({ queue: QUEUE, n: 1, label: 'sandboxed', ratio: 0.25, items: [1, 'two', { three: 3 }], flag: true })],
      current.s.env,
    );
    expect(pushed.status, pushed.stderr).toBe(0);
    expect((await php('laravel-dispatch.php', ['flaky', JSON.stringify({ queue: QUEUE, n: 2, failTimes: 1 })], current.s.env)).status).toBe(
      0,
    );
    expect(
      (
        await php(
          'laravel-dispatch.php',
          ['failing', JSON.stringify({ queue: QUEUE, n: 3, message: 'no luck in a thread' })],
          current.s.env,
        )
      ).status,
    ).toBe(0);
    const node = await lqb(
      [
        'work',
        `--handlers=${join(root, 'test/e2e/fixtures/handlers.mjs')}`,
        `--queue=${QUEUE}`,
        '--sandbox',
        '--concurrency=2',
        '--tries=2',
        '--stop-when-empty',
        '--sleep=0.1',
      ],
      current.s.env,
      { timeoutMs: 30_000 },
    );
    expect(node.status, node.stderr).toBe(0);
    const runs = current.s.nodeRuns();
    expect(runs.find((run) => run.class === 'App\\Jobs\\Bridge\\RecordJob')?.props).toMatchObject({
      n: 1,
      label: 'sandboxed',
      ratio: 0.25,
      items: [1, 'two', { three: 3 }],
      flag: true,
    });
    expect(
      runs.filter((run) => run.class === 'App\\Jobs\\Bridge\\FlakyJob').map((run) => run.attempts),
      'FlakyJob n=2 failing once, --tries=2',
    ).toEqual([1, 2]);
    expect(await failedFirstLines(), `failed_jobs, after lqb work said: ${node.stdout}`).toEqual(['Error: no luck in a thread']);
    expect(new Set(runs.map((run) => run.pid)).size, 'the threads run in the worker’s process').toBe(1);
  }, 60_000);

  it('a blocking handler holds its thread only: the thread is ended at the timeout, the process goes on, each job completes once', async () => {
    await dispatchSlow({ n: 1, seconds: 6 });
    await dispatchSlow({ n: 2, count: 7, seconds: 1 });
    const node = await work(['--sandbox', '--concurrency=4', '--timeout=2', '--retry-after=3', '--tries=2', '--max-time=9']);
    expect(node.status, `lqb work --sandbox ended with ${node.signal ?? node.status}: ${node.stderr}`).toBe(0);
    expect(node.stdout).toMatch(/Timed out:\s+App\\Jobs\\Bridge\\SlowJob/);
    expect(node.stderr, 'the watchdog spoke: the event loop was blocked').not.toContain('lqb watchdog');
    const runs = current.s.nodeRuns();
    const done = new Map<number, number>();
    for (const run of runs.filter((r) => r.phase === 'done')) done.set(run.props.n, (done.get(run.props.n) ?? 0) + 1);
    expect([1, 2, 3, 4, 5, 6, 7, 8].filter((n) => done.get(n) !== 1).map((n) => `job ${n} completed ${done.get(n) ?? 0} times`)).toEqual(
      [],
    );
    expect(
      runs.filter((run) => run.props.n === 1 && run.phase === 'start').map((run) => run.attempts),
      'the blocking job’s attempts',
    ).toEqual([1, 2]);
    // The async jobs ran beside the blocking one, on the other three threads, not after it.
    const beside = runs.filter((run) => run.props.n > 1 && run.phase === 'done' && run.t - startOf(1)!.t < 2000);
    expect(beside.length, 'async jobs done within the blocking job’s 2 s').toBeGreaterThanOrEqual(3);
    expect(await failedFirstLines()).toEqual([]);
  }, 60_000);
});
