/**
 * How `lqb work` ends, as a supervisor sees it: on --max-jobs with a blocking wait, on SIGTERM
 * while its Redis is gone, on --stop-when-empty with a long --sleep, and never on memory it does
 * not use for jobs. Each runs the built CLI against real Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { freePort, waitForRedis } from '../../src/testing/index.js';
import { root } from '../helpers/php.js';
import { HANDLERS, scratchPerTest } from '../helpers/processes.js';
import { prefixedClient } from '../helpers/redis.js';

const current = scratchPerTest('stopping');
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Running {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The exit status, or 'still running' when it has not exited within `ms`. */
  exit(ms: number): Promise<number | string | null>;
}

function work(flags: string[], env: NodeJS.ProcessEnv = current.s.env): Running {
  const child = spawn('node', [join(root, 'dist/cli/main.js'), 'work', `--handlers=${HANDLERS}`, ...flags], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  cleanups.push(() => child.kill('SIGKILL'));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exit: (ms) => Promise.race([exited, pause(ms).then(() => 'still running')]),
  };
}

function record(n: number, seconds = 0): string {
  const job =
    seconds > 0
      ? buildJob({ className: 'App\\Jobs\\Bridge\\SlowJob', properties: { n, seconds } })
      : buildJob({ className: 'App\\Jobs\\Bridge\\RecordJob', properties: { n } });
  return buildPayload(job).raw;
}

function queueFor(prefix: string): RedisQueue {
  const client = prefixedClient(prefix);
  cleanups.push(() => client.disconnect());
  return new RedisQueue(client);
}

describe('lqb work ends when it should', () => {
  for (const maxJobs of [1, 3]) {
    it(`--max-jobs=${maxJobs} --block-for=5 on a quiet queue exits after its last job`, async () => {
      const queue = queueFor(current.prefix);
      const worker = work([`--max-jobs=${maxJobs}`, '--block-for=5']);
      await pause(800); // started on an empty queue: it is waiting on :notify
      for (let n = 0; n < maxJobs; n++) {
        await queue.pushRaw(record(n));
        await pause(200);
      }
      expect(await worker.exit(10_000), `exit of --max-jobs=${maxJobs}; output: ${worker.stdout()}`).toBe(0);
      expect(worker.stdout()).toMatch(/Stopping: +max-jobs/);
      expect(current.s.nodeRuns().length).toBe(maxJobs);
    });
  }

  it('SIGTERM to an idle worker whose Redis has gone away ends it at once', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'lqb-gone-'));
    const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir], { stdio: 'ignore' });
    cleanups.push(() => {
      server.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });
    await waitForRedis(port);
    const worker = work(['--sleep=0.2'], { ...current.s.env, REDIS_URL: `redis://127.0.0.1:${port}` });
    await pause(1000);
    server.kill('SIGKILL');
    await pause(1000); // the worker is now waiting for a connection that is not coming back
    const signalledAt = Date.now();
    worker.child.kill('SIGTERM');
    expect(await worker.exit(8000), `exit after SIGTERM; stderr: ${worker.stderr()}`).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(5000);
  });

  it('--stop-when-empty with a job still running exits when it finishes, not after --sleep', async () => {
    const queue = queueFor(current.prefix);
    await queue.pushRaw(record(1, 1));
    const startedAt = Date.now();
    const worker = work(['--stop-when-empty', '--sleep=30', '--concurrency=2']);
    expect(await worker.exit(15_000), `exit; output: ${worker.stdout()}`).toBe(0);
    expect(Date.now() - startedAt, 'ms from start to exit, with a 1 s job and --sleep=30').toBeLessThan(15_000);
    expect(current.s.nodeRuns().map((r) => r.phase)).toEqual(['start', 'done']);
  });

  it('--memory is the JS heap, as memory_get_usage() is PHP’s: an idle worker at 64 MB runs on; 0 is no limit', async () => {
    const queue = queueFor(current.prefix);
    await queue.bulkRaw([record(1), record(2)]);
    // A Node process's RSS starts near 60 to 70 MB; its heap near 10.
    const low = work(['--stop-when-empty', '--memory=64', '--sleep=0']);
    expect(await low.exit(10_000), `exit with --memory=64; output: ${low.stdout()}`).toBe(0);
    expect(low.stdout()).toMatch(/Stopping: +empty/);
    await queue.pushRaw(record(3));
    const none = work(['--stop-when-empty', '--memory=0', '--sleep=0']);
    expect(await none.exit(10_000), `exit with --memory=0; stderr: ${none.stderr()}`).toBe(0);
    expect(current.s.nodeRuns().map((r) => r.props.n)).toEqual([1, 2, 3]);
  });

  it('says in one line at start when --timeout is not below --retry-after', async () => {
    const worker = work(['--stop-when-empty', '--timeout=90', '--retry-after=60']);
    expect(await worker.exit(10_000)).toBe(0);
    // The other start line (without shapes, unique locks of uniqueId() methods cannot be known) aside.
    const warnings = worker
      .stdout()
      .split('\n')
      .filter((line) => line.includes('Warning:') && !line.includes('without class shapes'));
    expect(warnings).toEqual([expect.stringMatching(/Warning: +--timeout \(90 s\) is not below --retry-after \(60 s\)/)]);
  });
});
