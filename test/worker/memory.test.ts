/**
 * The worker's memory (memory.ts) with sandbox threads, on real Redis: each thread's live memory
 * counts in the process's, and a limit the figures say is reached is confirmed by a full
 * collection before the worker stops, so a job's working set, let go at its end but caught by
 * a collection mid-job, does not count as kept; what is kept does.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload, sandboxedHandlers, type SandboxedHandlers } from '../../src/index.js';
import { liveMemoryMb, liveMemoryReaches } from '../../src/worker/memory.js';
import { root } from '../helpers/php.js';
import { workerSetup, type WorkerSetup } from '../helpers/worker.js';

const MODULE = join(root, 'test/worker/fixtures/sandbox-memory.mjs');
let env: WorkerSetup;
let sandbox: SandboxedHandlers | undefined;

beforeEach(() => {
  env = workerSetup('memory');
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
  await env.cleanup();
});

/** Runs one job of `className` holding `mb` MB in a sandbox thread, to its end. */
async function runInSandbox(className: string, mb: number): Promise<void> {
  await env.queue.pushRaw(buildPayload(buildJob({ className, properties: { mb }, serializesModels: false })).raw);
  sandbox = await sandboxedHandlers(MODULE, { threads: 1 });
  await env.worker(sandbox.handlers, { stopWhenEmpty: true }).run();
  expect(
    env.events.map((event) => event.event),
    `${className} holding ${mb} MB ran to its end`,
  ).toEqual(['processing', 'processed', 'stopping']);
}

describe('a sandbox thread’s memory in the process’s', () => {
  it('a working set caught by a collection mid-job counts until a full collection confirms it is gone', async () => {
    await runInSandbox('App\\Jobs\\WorkingSet', 320);
    const reported = liveMemoryMb();
    expect(reported, 'MB the thread reported after its last collection, which ran while its job held 320 MB').toBeGreaterThanOrEqual(128);
    expect(await liveMemoryReaches(128), `a limit of 128 MB reached, with ${reported} MB reported before the confirming collection`).toBe(
      false,
    );
    expect(liveMemoryMb(), 'MB after the confirming collection').toBeLessThan(64);
  });

  it('what a job keeps is still there after the confirming collection', async () => {
    await runInSandbox('App\\Jobs\\Keep', 160);
    expect(await liveMemoryReaches(128), `a limit of 128 MB reached, with 160 MB kept (${liveMemoryMb()} MB counted)`).toBe(true);
    expect(liveMemoryMb(), 'MB after the confirming collection').toBeGreaterThanOrEqual(160);
  });
});
