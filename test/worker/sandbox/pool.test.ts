/**
 * Sandboxed handlers (sandbox/pool.ts) on real Redis: the handlers module runs in worker
 * threads with the same job API, a CPU-bound handler holds up neither the other jobs nor the
 * main thread, and a job past its timeout ends its thread, not the process.
 */
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  buildJob,
  buildPayload,
  loadHandlers,
  sandboxedHandlers,
  type PayloadOptions,
  type SandboxedHandlers,
} from '../../../src/index.js';
import { once } from 'node:events';
import { Worker as Thread } from 'node:worker_threads';
import { threadSource } from '../../../src/worker/sandbox/thread.js';
import { root } from '../../helpers/php.js';
import { workerSetup, type WorkerSetup } from '../../helpers/worker.js';

const MODULE = join(root, 'test/worker/fixtures/sandbox-handlers.mjs');
let env: WorkerSetup;
let dir: string;
let sandbox: SandboxedHandlers | undefined;

beforeEach(() => {
  env = workerSetup('sandbox');
  dir = mkdtempSync(join(tmpdir(), 'lqb-sandbox-'));
  // Threads take a copy of the environment when they start.
  process.env.LQB_SANDBOX_RECORD = join(dir, 'runs.jsonl');
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
  await env.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const runs = (): Record<string, any>[] => {
  const file = process.env.LQB_SANDBOX_RECORD!;
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
};

function payload(className: string, props: Record<string, unknown> = {}, options: PayloadOptions = {}): string {
  return buildPayload(buildJob({ className, properties: props, serializesModels: false }), options).raw;
}

describe('sandboxed handlers', () => {
  it('run in a thread with the job’s fields, and the job is done as in-process', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Hello', { name: 'Ada', n: 3, tags: ['a', 'b'] }));
    sandbox = await sandboxedHandlers(MODULE, { threads: 1 });
    await env.worker(sandbox.handlers, { stopWhenEmpty: true }).run();
    const [run] = runs();
    expect(run, 'App\\Jobs\\Hello did not run').toBeDefined();
    expect(run).toMatchObject({
      name: 'App\\Jobs\\Hello',
      command: { name: 'Ada', n: 3, tags: ['a', 'b'] },
      args: [],
      attempts: 1,
      queue: 'default',
      displayName: 'App\\Jobs\\Hello',
      isMainThread: false,
    });
    expect(run!.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(env.events.map((e) => e.event)).toEqual(['processing', 'processed', 'stopping']);
    expect(await env.queue.size()).toBe(0);
  });

  it('carry out release(), fail() and delete() on the real job, and a throw is an exception, with its failed() hook run in the thread', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Release', {}, { maxTries: 3 }));
    await env.queue.pushRaw(payload('App\\Jobs\\Fail', {}, { maxTries: 3 }));
    await env.queue.pushRaw(payload('App\\Jobs\\Delete', {}, { maxTries: 3 }));
    await env.queue.pushRaw(payload('App\\Jobs\\Failing', { n: 7 }, { maxTries: 1 }));
    sandbox = await sandboxedHandlers(MODULE, { threads: 2 });
    await env.worker(sandbox.handlers, { stopWhenEmpty: true, concurrency: 2 }).run();
    const attempts = (name: string) =>
      runs()
        .filter((run) => run.name === name && !run.hook)
        .map((run) => run.attempts);
    expect(attempts('App\\Jobs\\Release'), 'App\\Jobs\\Release released itself on attempt 1').toEqual([1, 2]);
    expect(attempts('App\\Jobs\\Fail')).toEqual([1]);
    expect(attempts('App\\Jobs\\Delete')).toEqual([1]);
    const exceptions = (await env.failer.all()).map((record) => record.exception.split('\n')[0]!.replace(/ in \S+$/, '')).sort();
    expect(exceptions).toEqual(['Illuminate\\Queue\\ManuallyFailedException: given up', 'TypeError: no good 7']);
    expect(
      runs()
        .filter((run) => run.hook === 'failed')
        .map((run) => [run.name, run.error]),
    ).toEqual([['App\\Jobs\\Failing', 'TypeError: no good 7']]);
    expect(await env.queue.size(), 'jobs left in Redis').toBe(0);
  });

  it('a CPU-bound handler holds up neither the other jobs nor the main thread', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Crunch', { ms: 1500 }, { timeout: 10 }));
    for (let n = 1; n <= 4; n++) await env.queue.pushRaw(payload('App\\Jobs\\Wait', { n, ms: 100 }));
    sandbox = await sandboxedHandlers(MODULE, { threads: 3 });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 50);
    const started = Date.now();
    await env.worker(sandbox.handlers, { stopWhenEmpty: true, concurrency: 3 }).run();
    clearInterval(ticker);
    const crunchDone = runs().find((run) => run.name === 'App\\Jobs\\Crunch' && run.phase === 'done')!.t;
    const waits = runs()
      .filter((run) => run.name === 'App\\Jobs\\Wait')
      .map((run) => run.t);
    expect(waits, 'the Wait jobs').toHaveLength(4);
    expect(Math.max(...waits), 'the last Wait job ended after the 1.5 s Crunch').toBeLessThan(crunchDone);
    // The main thread's timers ran all along: about one tick per 50 ms of the run.
    expect(ticks, 'main-thread ticks during a run of ' + (Date.now() - started) + ' ms').toBeGreaterThan((crunchDone - started) / 50 / 2);
  });

  it('a job past its timeout ends its thread (a for (;;) too), which is replaced; the process and the next jobs go on', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Spin', {}, { timeout: 1, maxTries: 3 }));
    await env.queue.pushRaw(payload('App\\Jobs\\Hello', { n: 2 }));
    sandbox = await sandboxedHandlers(MODULE, { threads: 1 });
    const worker = env.worker(sandbox.handlers, { stopWhenEmpty: true });
    const blocked: unknown[] = [];
    worker.on('blocked', (event) => blocked.push(event));
    await worker.run();
    expect(env.events.filter((e) => e.job === 'App\\Jobs\\Spin').map((e) => e.event)).toEqual(['processing', 'timed-out']);
    expect(sandbox.replaced(), 'threads ended at a timeout and replaced').toBe(1);
    expect(
      runs().filter((run) => run.name === 'App\\Jobs\\Hello'),
      'the job after the spinning one',
    ).toHaveLength(1);
    expect(blocked, 'the main thread was blocked').toEqual([]);
    expect(await env.queue.reservedSize(), 'App\\Jobs\\Spin, left reserved to come back after retry_after').toBe(1);
  });

  it('a thread’s script runs when a loader wrapped its functions in __name calls (tsx, esbuild’s keepNames)', async () => {
    // What tsx makes of `const f = () => …` inside a function: a call to a helper the thread lacks.
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the script as tsx would hand it over, run as it is
    const main = new Function(
      "const f = __name(() => require('node:worker_threads').parentPort.postMessage('ran'), 'f'); f();",
    ) as () => void;
    const thread = new Thread(threadSource(main), { eval: true });
    try {
      const [message] = await Promise.race([
        once(thread, 'message'),
        once(thread, 'error').then(([error]) => [`the thread failed: ${error}`]),
      ]);
      expect(message).toBe('ran');
    } finally {
      await thread.terminate();
    }
  });

  it('a handler that ends its thread (process.exit, an uncaught error) fails its job with the reason; a fresh thread runs the next', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Exit', {}, { maxTries: 1 }));
    await env.queue.pushRaw(payload('App\\Jobs\\Stray', {}, { maxTries: 1 }));
    await env.queue.pushRaw(payload('App\\Jobs\\Hello', { n: 3 }));
    sandbox = await sandboxedHandlers(MODULE, { threads: 1 });
    await env.worker(sandbox.handlers, { stopWhenEmpty: true }).run();
    const exceptions = (await env.failer.all()).map((record) => record.exception.split('\n')[0]!.replace(/ in \S+$/, '')).sort();
    expect(exceptions).toEqual(['Error: the sandbox thread ended (exit code 3) while running the job', 'RangeError: stray']);
    expect(
      runs().filter((run) => run.name === 'App\\Jobs\\Hello'),
      'the job after them',
    ).toHaveLength(1);
  });

  it('a module that cannot be read is refused at start, naming the file', async () => {
    const broken = join(dir, 'broken.mjs');
    await import('node:fs').then((fs) => fs.writeFileSync(broken, 'export default {\n'));
    await expect(sandboxedHandlers(broken)).rejects.toThrow(/broken\.mjs could not be loaded in a sandbox thread: SyntaxError/);
  });
});

describe('more jobs than threads', () => {
  it('a job whose timeout passes while it waits for a thread is not run, and ends no thread', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Wait', { n: 1, ms: 1500 }, { timeout: 10 }));
    await env.queue.pushRaw(payload('App\\Jobs\\Wait', { n: 2, ms: 10 }, { timeout: 1, maxTries: 3 }));
    sandbox = await sandboxedHandlers(MODULE, { threads: 1 });
    await env.worker(sandbox.handlers, { stopWhenEmpty: true, concurrency: 2 }).run();
    expect(
      runs().map((run) => run.command.n),
      'the Wait jobs run',
    ).toEqual([1]);
    expect(sandbox.replaced(), 'threads ended and replaced, though none ran a job past its timeout').toBe(0);
  });
});

describe('a handlers module of other shapes, sandboxed', () => {
  const SHAPES = join(root, 'test/worker/fixtures/sandbox-shapes.mjs');
  const jobs = ['App\\Jobs\\AsObject', 'App\\Jobs\\ThrowsString', 'App\\Jobs\\ThrowsNumber'];

  /** Runs the three jobs once with `handlers`; what failed_jobs and the record hold after. */
  async function outcome(handlers: Parameters<WorkerSetup['worker']>[0]) {
    const setup = workerSetup('sandbox-shapes');
    try {
      for (const [n, name] of jobs.entries()) await setup.queue.pushRaw(payload(name, { n }, { maxTries: 1 }));
      await setup.worker(handlers, { stopWhenEmpty: true }).run();
      const failed = (await setup.failer.all())
        .map((record) => `${JSON.parse(record.payload).displayName} ${record.exception.split('\n')[0]!.replace(/ in \S+$/, '')}`)
        .sort();
      return { failed, runs: runs().map(({ name, n, hook, error }) => ({ name, n, hook, error })) };
    } finally {
      await setup.cleanup();
      rmSync(process.env.LQB_SANDBOX_RECORD!, { force: true });
    }
  }

  it('with an entry that is no handler is refused as in-process, naming the file and the class', async () => {
    const bad = join(root, 'test/worker/fixtures/sandbox-bad.mjs');
    const inProcess = await loadHandlers(bad).then(
      () => 'loaded',
      (error: Error) => error.message,
    );
    expect(inProcess).toMatch(/the handler for App\\Jobs\\Typo is not a function/);
    await expect(sandboxedHandlers(bad, { threads: 1 }), 'sandboxedHandlers took a module whose App\\Jobs\\Typo is 42').rejects.toThrow(
      inProcess,
    );
  });

  it('run `{ handle, failed }` objects and record a thrown non-Error as the in-process worker does', async () => {
    const inProcess = await outcome(await loadHandlers(SHAPES));
    expect(inProcess.failed, 'the in-process worker failed all three').toHaveLength(3);
    sandbox = await sandboxedHandlers(SHAPES, { threads: 1 });
    const sandboxed = await outcome(sandbox.handlers);
    expect(
      sandboxed,
      'sandboxed, the jobs (handle and failed of App\\Jobs\\AsObject, the exceptions recorded) differ from in-process',
    ).toEqual(inProcess);
  });
});
