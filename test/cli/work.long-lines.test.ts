/**
 * A job failing with a megabyte of message holds neither the worker's loop nor its other jobs:
 * the line `lqb work` prints is cut (and says how much more there was) before it is scrubbed,
 * failed_jobs keeps the message whole, and the job beside it in hand keeps its reservation
 * renewed after the failure is said. Runs the built `lqb work` against real Redis.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { root } from '../helpers/php.js';
import { HANDLERS, scratchPerTest } from '../helpers/processes.js';
import { prefixedClient } from '../helpers/redis.js';

const current = scratchPerTest('long-lines');
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value, or fails naming `what` after `ms`. */
async function waitFor<T>(what: string, ms: number, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}`);
    await pause(100);
  }
}

/**
 * A message as the scrubber's old patterns met it at their worst (a pattern retried from each
 * letter of a long run, to its end): a URL's password near the start, then one run of letters and
 * digits, then an '=', `size` characters in all.
 */
function hostileMessage(size: number): string {
  const head = 'could not reach redis://app:Pa55word@cache:6379 with ';
  const tail = ' and b=c';
  return head + 'QmFzZTY0cnVu'.repeat(size / 12).slice(0, size - head.length - tail.length) + tail;
}

describe('a job failing with a huge message', () => {
  for (const size of [200_000, 1 << 20]) {
    it(`${size} characters: the line is cut, failed_jobs has it whole, the slow job beside it stays renewed`, async () => {
      const client = prefixedClient(current.prefix);
      const queue = new RedisQueue(client);
      cleanups.push(() => client.disconnect());
      const message = hostileMessage(size);
      const slow = buildJob({ className: 'App\\Jobs\\Bridge\\SlowJob', properties: { n: 1, seconds: 12 } });
      await queue.pushRaw(buildPayload(slow).raw, 'default');
      const failing = buildJob({ className: 'App\\Jobs\\Bridge\\FailingJob', properties: { message } });
      await queue.pushRaw(buildPayload(failing).raw, 'default');

      const child = spawn(
        'node',
        [join(root, 'dist/cli/main.js'), 'work', `--handlers=${HANDLERS}`, '--concurrency=2', '--retry-after=6', '--sleep=0.2'],
        { env: current.s.env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      cleanups.push(() => child.kill('SIGKILL'));
      let stdout = '';
      child.stdout.on('data', (d) => (stdout += d));

      const line = await waitFor(`the Failed line of a ${size}-character message`, 60_000, () =>
        stdout.split('\n').find((l) => l.includes('Failed:')),
      );
      expect(line.length, `the Failed line: ${line.slice(0, 200)}…`).toBeLessThan(5000);
      expect(line, 'the Failed line says what it left off').toMatch(/… \(\d+ more characters\)$/);
      expect(line, 'the Failed line hides the password').toContain('redis://app:***@cache:6379');
      expect(line).not.toContain('Pa55word');

      // The slow job is still in hand; its reservation is renewed after the failure was said.
      const reserved = `${current.prefix}queues:default:reserved`;
      const scoreOf = async () => Number((await client.zrange('queues:default:reserved', 0, 0, 'WITHSCORES'))[1]);
      const before = await scoreOf();
      expect(Number.isFinite(before), `the slow job is in ${reserved}`).toBe(true);
      await waitFor('a renewal of the slow job after the failure', 30_000, async () => ((await scoreOf()) > before ? true : undefined));

      const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
      cleanups.push(() => void failer.close());
      const [recorded] = await failer.all();
      expect(recorded?.exception.includes(message), 'failed_jobs holds the whole message').toBe(true);
      child.kill('SIGTERM');
      await waitFor('the worker to stop', 60_000, () => (child.exitCode !== null || child.signalCode !== null ? true : undefined));
      const runs = current.s.nodeRuns().filter((r) => r.class === 'App\\Jobs\\Bridge\\SlowJob' && r.phase === 'start');
      expect(runs.length, 'the slow job was taken once').toBe(1);
    });
  }
});
