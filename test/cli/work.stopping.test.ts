/**
 * How `lqb work` ends, as a supervisor sees it: on --max-jobs with a blocking wait, on SIGTERM
 * while its Redis is gone, on --stop-when-empty with a long --sleep, and never on memory it does
 * not use for jobs. Each runs the built CLI against real Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { freePort, waitForRedis } from '../../src/testing/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { root } from '../helpers/php.js';
import { HANDLERS, scratchPerTest } from '../helpers/processes.js';
import { prefixedClient, rawClient } from '../helpers/redis.js';

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

function work(flags: string[], env: NodeJS.ProcessEnv = current.s.env, handlers = HANDLERS): Running {
  const child = spawn('node', [join(root, 'dist/cli/main.js'), 'work', `--handlers=${handlers}`, ...flags], {
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
      expect(await worker.exit(60_000), `exit of --max-jobs=${maxJobs}; output: ${worker.stdout()}`).toBe(0);
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
    expect(await eventually(() => worker.stderr().includes('worker starting'), 60_000), `the start line; stderr: ${worker.stderr()}`).toBe(
      true,
    );
    server.kill('SIGKILL');
    // The worker is now waiting for a connection that is not coming back, and has said so.
    expect(
      await eventually(() => worker.stdout().includes('Redis is unreachable'), 60_000),
      `the outage line; stdout: ${worker.stdout()}`,
    ).toBe(true);
    worker.child.kill('SIGTERM');
    // Without the stop, it would wait on that connection for ever: 30 s tells the two apart on a busy machine.
    expect(await worker.exit(30_000), `exit after SIGTERM, within 30 s; stderr: ${worker.stderr()}`).toBe(0);
  });

  it('--stop-when-empty with a job still running exits when it finishes, not after --sleep', async () => {
    const queue = queueFor(current.prefix);
    await queue.pushRaw(record(1, 1));
    // --sleep far past what a busy machine adds to the 1 s job: an exit before it did not wait it out.
    const worker = work(['--stop-when-empty', '--sleep=600', '--concurrency=2']);
    expect(await worker.exit(90_000), `exit within 90 s, with a 1 s job and --sleep=600; output: ${worker.stdout()}`).toBe(0);
    expect(current.s.nodeRuns().map((r) => r.phase)).toEqual(['start', 'done']);
  });

  it('--memory is the JS heap, as memory_get_usage() is PHP’s: an idle worker at 64 MB runs on; 0 is no limit', async () => {
    const queue = queueFor(current.prefix);
    await queue.bulkRaw([record(1), record(2)]);
    // A Node process's RSS starts near 60 to 70 MB; its heap near 10.
    const low = work(['--stop-when-empty', '--memory=64', '--sleep=0']);
    expect(await low.exit(60_000), `exit with --memory=64; output: ${low.stdout()}`).toBe(0);
    expect(low.stdout()).toMatch(/Stopping: +empty/);
    await queue.pushRaw(record(3));
    const none = work(['--stop-when-empty', '--memory=0', '--sleep=0']);
    expect(await none.exit(60_000), `exit with --memory=0; stderr: ${none.stderr()}`).toBe(0);
    expect(current.s.nodeRuns().map((r) => r.props.n)).toEqual([1, 2, 3]);
  });

  it('says in one line at start when --timeout is not below --retry-after', async () => {
    const worker = work(['--stop-when-empty', '--timeout=90', '--retry-after=60']);
    expect(await worker.exit(60_000), `exit; output: ${worker.stdout()}`).toBe(0);
    // The other start line (without shapes, unique locks of uniqueId() methods cannot be known) aside.
    const warnings = worker
      .stdout()
      .split('\n')
      .filter((line) => line.includes('Warning:') && !line.includes('without class shapes'));
    expect(warnings).toEqual([expect.stringMatching(/Warning: +--timeout \(90 s\) is not below --retry-after \(60 s\)/)]);
  });
});

/**
 * A handler deaf to its timeout: it never reads job.signal, and waits out a ten-minute timer of
 * its own. It says when it starts by writing a line to LQB_NODE_RECORD_FILE.
 */
const DEAF_HANDLERS = `import { appendFileSync } from 'node:fs';
export default {
  'App\\\\Jobs\\\\Deaf': async (job) => {
    appendFileSync(process.env.LQB_NODE_RECORD_FILE, JSON.stringify({ phase: 'start', uuid: job.uuid }) + '\\n');
    await new Promise((resolve) => setTimeout(resolve, 600_000));
  },
};
`;

/** Polls `check` until it is true, for up to `ms`; whether it became true. */
async function eventually(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await pause(100);
  }
  return check();
}

describe('lqb work after SIGTERM, its job past --timeout with a handler that ignores job.signal', () => {
  for (const tries of [1, 3]) {
    const outcome =
      tries === 1 ? 'failed into failed_jobs (its last attempt)' : 'left reserved, to come back after retry_after (attempts left)';
    it(`--tries=${tries}: the process ends by the job's timeout, not the handler's timer; the job is ${outcome}`, async () => {
      const handlers = join(current.s.dir, 'deaf.mjs');
      writeFileSync(handlers, DEAF_HANDLERS);
      const queue = queueFor(current.prefix);
      const pushed = buildPayload(buildJob({ className: 'App\\Jobs\\Deaf', properties: { n: 1 } }));
      await queue.pushRaw(pushed.raw);
      const worker = work(['--timeout=2', `--tries=${tries}`, '--sleep=0.2', '--retry-after=90'], current.s.env, handlers);
      const started = await eventually(() => current.s.nodeRuns().length > 0, 20_000);
      expect(started, `the Deaf job started within 20 s; stderr: ${worker.stderr()}`).toBe(true);
      worker.child.kill('SIGTERM');
      // Its timeout is 2 s: 30 s is far past it, and far short of the handler's ten minutes.
      expect(await worker.exit(30_000), `exit after SIGTERM, within 30 s; output: ${worker.stdout()} ${worker.stderr()}`).toBe(0);
      expect(worker.stdout(), 'what the worker said').toMatch(/Stopping: +signal/);
      const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
      const failed = (await failer.all()).map((row) => row.uuid);
      await failer.close();
      const raw = rawClient();
      const reserved = (await raw.zrange(`${current.prefix}queues:default:reserved`, 0, -1)).map((p) => JSON.parse(p).uuid as string);
      raw.disconnect();
      if (tries === 1) {
        expect(failed, 'failed_jobs uuids: the Deaf job timed out on its last attempt').toEqual([pushed.envelope.uuid]);
        expect(reserved, 'reserved uuids').toEqual([]);
      } else {
        expect(failed, 'failed_jobs uuids: the Deaf job has attempts left').toEqual([]);
        expect(reserved, 'reserved uuids: the Deaf job, to come back after retry_after').toEqual([pushed.envelope.uuid]);
      }
    }, 90_000);
  }
});
