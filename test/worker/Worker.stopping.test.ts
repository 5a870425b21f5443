/**
 * An embedded worker's stop() while a handler runs that ignores job.signal: stop() resolves by
 * the job's timeout, not when the handler's own timer would end, and the job's outcome is the
 * timeout's (Laravel's rules: failed on its last attempt, else left reserved for retry_after).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import type { StopReason } from '../../src/worker/index.js';
import { workerSetup, type WorkerSetup } from '../helpers/worker.js';
import { rawClient } from '../helpers/redis.js';

let env: WorkerSetup;
/** The handlers' ten-minute timers, cleared after each test so none outlives it. */
const timers: NodeJS.Timeout[] = [];
beforeEach(() => {
  env = workerSetup('worker-stopping');
});
afterEach(async () => {
  for (const timer of timers.splice(0)) clearTimeout(timer);
  await env.cleanup();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whichever comes first: the promise's value, or 'still waiting' after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  let timer!: NodeJS.Timeout;
  const late = new Promise<'still waiting'>((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('stop() while a handler that ignores job.signal runs past its timeout', () => {
  for (const tries of [1, 3]) {
    it(`tries ${tries}: resolves by the job's timeout, the job ${tries === 1 ? 'failed' : 'left reserved'}`, async () => {
      const pushed = buildPayload(buildJob({ className: 'App\\Jobs\\Deaf', properties: { n: 1 } }));
      await env.queue.pushRaw(pushed.raw);
      let started = false;
      const worker = env.worker(
        {
          'App\\Jobs\\Deaf': async () => {
            started = true;
            await new Promise((resolve) => timers.push(setTimeout(resolve, 600_000)));
          },
        },
        { timeout: 1, tries },
      );
      const running = worker.run();
      for (let waited = 0; !started && waited < 20_000; waited += 50) await pause(50);
      expect(started, 'the Deaf job started within 20 s').toBe(true);
      const stopped: StopReason | 'still waiting' = await within(worker.stop(), 30_000);
      expect(stopped, "stop()'s answer within 30 s (the job's timeout is 1 s, its handler's timer 10 minutes)").toMatchObject({
        status: 0,
        reason: 'stopped',
      });
      expect(await running, "run()'s answer").toMatchObject({ reason: 'stopped' });
      expect(
        env.events.map((e) => e.event),
        "the worker's events",
      ).toEqual(['processing', 'timed-out', 'stopping']);
      const failed = (await env.failer.all()).map((row) => row.uuid);
      const raw = rawClient();
      const reserved = (await raw.zrange(`${env.prefix}queues:default:reserved`, 0, -1)).map((p) => JSON.parse(p).uuid as string);
      raw.disconnect();
      expect(failed, 'failed_jobs uuids').toEqual(tries === 1 ? [pushed.envelope.uuid] : []);
      expect(reserved, 'reserved uuids').toEqual(tries === 1 ? [] : [pushed.envelope.uuid]);
    }, 90_000);
  }
});
