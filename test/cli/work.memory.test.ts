/**
 * `lqb work --memory` counts the whole process, as `queue:work --memory` does: the live JS heaps
 * of the main thread and of every sandbox thread, and the Buffers they hold. A worker whose jobs
 * keep memory exits 12 before its queue is done, in-process or `--sandbox`, whether the memory
 * is kept in JS objects or in Buffers; one whose jobs leave only garbage does not; and a sandbox
 * thread that grows without end within one job is ended as a crash (its job released or failed
 * by the rules), the process going on. Each runs the built CLI against real Redis.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { root } from '../helpers/php.js';
import { scratchPerTest, type RunResult } from '../helpers/processes.js';
import { prefixedClient } from '../helpers/redis.js';

const HANDLERS = join(root, 'test/cli/fixtures/memory-handlers.mjs');
const current = scratchPerTest('memory');
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Pushes `count` jobs of `className`, numbered from `from`. */
async function push(className: string, count: number, from = 1): Promise<void> {
  const client = prefixedClient(current.prefix);
  try {
    const queue = new RedisQueue(client);
    const payloads = Array.from({ length: count }, (_, i) => buildPayload(buildJob({ className, properties: { n: from + i } })).raw);
    await queue.bulkRaw(payloads);
  } finally {
    client.disconnect();
  }
}

/** `lqb work --handlers=memory-handlers.mjs FLAGS` to its end (killed, and so failing, after 3 minutes). */
function work(flags: string[]): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', [join(root, 'dist/cli/main.js'), 'work', `--handlers=${HANDLERS}`, '--sleep=0', ...flags], {
      env: current.s.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(() => child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const guard = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(guard);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

const said = (result: RunResult) => `exit ${result.status ?? result.signal}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;

/** The jobs of `className` that finished, by number. */
const done = (className: string) =>
  current.s
    .nodeRuns()
    .filter((run) => run.class === className && run.phase === 'done')
    .map((run) => run.n as number);

/** Each failed job's class and the first line of its exception. */
async function failed(): Promise<{ class: string; exception: string }[]> {
  const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
  try {
    return (await failer.all()).map((record) => ({
      class: (JSON.parse(record.payload) as { displayName: string }).displayName,
      exception: record.exception.split('\n')[0]!,
    }));
  } finally {
    await failer.close();
  }
}

const MODES: [string, string[]][] = [
  ['in-process', []],
  // Two threads, each holding about half of what is kept: only their sum passes the limit.
  ['--sandbox --concurrency=2', ['--sandbox', '--concurrency=2']],
];
/** 40 jobs of 20 MB kept: 800 MB if nothing stopped the worker, six times --memory=128. */
const KEPT_JOBS = 40;

describe('lqb work --memory counts what the jobs keep, in the main thread and in sandbox threads', () => {
  for (const [mode, flags] of MODES) {
    for (const [className, where] of [
      ['App\\Jobs\\KeepBuffer', 'a Buffer'],
      ['App\\Jobs\\KeepObjects', 'JS objects'],
    ] as const) {
      it(`${mode}: jobs that each keep 20 MB in ${where} end it with exit 12 before the queue is done`, async () => {
        await push(className, KEPT_JOBS);
        const result = await work([...flags, '--memory=128', '--stop-when-empty']);
        expect(result.status, `lqb work ${flags.join(' ')} --memory=128 over ${KEPT_JOBS} jobs of ${className}: ${said(result)}`).toBe(12);
        expect(result.stdout, 'the stopping line, naming what was measured').toMatch(
          /Stopping: +memory.*JS heaps and Buffers live after their last full collections hold \d+ MB.*at or past the memory limit of 128 MB/,
        );
        const finished = done(className);
        expect(finished.length, `${className} jobs finished before exit 12 (of ${KEPT_JOBS}): ${said(result)}`).toBeGreaterThan(0);
        expect(finished.length, `${className} jobs finished before exit 12 (of ${KEPT_JOBS}): ${said(result)}`).toBeLessThan(KEPT_JOBS);
      });
    }
  }

  for (const [mode, flags] of MODES) {
    it(`${mode}: jobs that leave 100 MB of garbage each and keep nothing run to the end of the queue`, async () => {
      const jobs = 30;
      await push('App\\Jobs\\Garbage', jobs);
      const result = await work([...flags, '--memory=128', '--stop-when-empty']);
      expect(result.status, `lqb work ${flags.join(' ')} --memory=128 over ${jobs} Garbage jobs: ${said(result)}`).toBe(0);
      expect(result.stdout).toMatch(/Stopping: +empty/);
      expect(
        done('App\\Jobs\\Garbage').sort((a, b) => a - b),
        'Garbage jobs finished',
      ).toEqual(Array.from({ length: jobs }, (_, i) => i + 1));
    });
  }
});

describe('lqb work --sandbox --memory: a thread that grows without end within one job', () => {
  // --memory=40 caps each thread at 160 MB (four times it).
  // Whichever comes first ends it: V8 at the heap cap, or the pool when the thread's own report
  // after a full collection is past it (a busy machine can make that report come first). Both are
  // the same crash at the same cap.
  it('in JS objects: ended at its heap cap, as a crash; the job is released, then failed, and the worker goes on', async () => {
    await push('App\\Jobs\\HogObjects', 1);
    await push('App\\Jobs\\Record', 2, 2);
    const result = await work(['--sandbox', '--memory=40', '--tries=2', '--stop-when-empty']);
    expect(result.status, `lqb work --sandbox --memory=40 --tries=2: ${said(result)}`).toBe(0);
    const hog = current.s.nodeRuns().filter((run) => run.class === 'App\\Jobs\\HogObjects');
    expect(
      hog.map((run) => `${run.phase} attempt ${run.attempts}`),
      'HogObjects: released after its first crash, run again',
    ).toEqual(['start attempt 1', 'start attempt 2']);
    expect(
      done('App\\Jobs\\Record').sort((a, b) => a - b),
      'the jobs after it',
    ).toEqual([2, 3]);
    expect(await failed()).toEqual([
      {
        class: 'App\\Jobs\\HogObjects',
        exception: expect.stringMatching(
          /^SandboxOutOfMemory: the sandbox thread(?:'s JS heap reached its cap of 160 MB while running the job| held \d+ MB \(JS heap and Buffers\) after a full collection, past its cap of 160 MB: ended)/,
        ),
      },
    ]);
  });

  it('in Buffers, which V8 does not cap: the pool ends it once it reports more than its cap, as a crash; the job fails and the worker goes on', async () => {
    await push('App\\Jobs\\HogBuffers', 1);
    await push('App\\Jobs\\Record', 2, 2);
    const result = await work(['--sandbox', '--memory=40', '--tries=1', '--stop-when-empty']);
    expect(result.status, `lqb work --sandbox --memory=40 --tries=1: ${said(result)}`).toBe(0);
    expect(
      done('App\\Jobs\\Record').sort((a, b) => a - b),
      'the jobs after it',
    ).toEqual([2, 3]);
    expect(await failed()).toEqual([
      {
        class: 'App\\Jobs\\HogBuffers',
        exception: expect.stringMatching(
          /^SandboxOutOfMemory: the sandbox thread held \d+ MB \(JS heap and Buffers\) after a full collection, past its cap of 160 MB: ended/,
        ),
      },
    ]);
  });
});
