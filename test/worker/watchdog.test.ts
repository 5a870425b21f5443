/**
 * The timeout holds when a handler blocks the event loop (watchdog.ts), in an embedded worker:
 * the job is timed out, never reported done, and the watchdog's `blocked` event says which job
 * held the loop, while the host process goes on (test/e2e/blocking-handlers.test.ts has `lqb
 * work`, which ends the process as Laravel's alarm does).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Worker, buildJob, buildPayload, type PayloadOptions, type WorkerEvent } from '../../src/index.js';
import { workerSetup, type WorkerSetup } from '../helpers/worker.js';
import { startShiftedRedis } from '../helpers/redis.js';
import { RedisQueue, connectRedis } from '../../src/redis/index.js';

let env: WorkerSetup;
beforeEach(() => {
  env = workerSetup('watchdog');
});
afterEach(() => env.cleanup());

function payload(className: string, options: PayloadOptions = {}): string {
  return buildPayload(buildJob({ className, properties: {}, serializesModels: false }), options).raw;
}

/** Synchronous work: the event loop does nothing else for `ms`. */
function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const eventsOf = (job: string) => env.events.filter((e) => e.job === job).map((e) => e.event);

describe('a handler that settles after its timeout', () => {
  it('is timed out, not processed: with attempts left its job stays reserved, to come back after retry_after', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Crunch', { timeout: 1, maxTries: 3 }));
    await env.worker({ 'App\\Jobs\\Crunch': async () => blockFor(1500) }, { stopWhenEmpty: true }).run();
    expect(eventsOf('App\\Jobs\\Crunch'), 'App\\Jobs\\Crunch ran 1.5 s past a timeout of 1 s').toContain('timed-out');
    expect(eventsOf('App\\Jobs\\Crunch'), 'App\\Jobs\\Crunch ran 1.5 s past a timeout of 1 s and was reported done').not.toContain(
      'processed',
    );
    expect(await env.queue.reservedSize(), 'App\\Jobs\\Crunch was deleted as if it had succeeded').toBe(1);
    expect(await env.failer.all()).toEqual([]);
  });

  it('on its last attempt is failed as Laravel fails a timed-out job (MaxAttemptsExceededException)', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Crunch', { timeout: 1, maxTries: 1 }));
    const worker = env.worker({ 'App\\Jobs\\Crunch': async () => blockFor(1500) }, { stopWhenEmpty: true });
    await worker.run();
    const failed = await env.failer.all();
    expect(failed, 'App\\Jobs\\Crunch on its last attempt was not failed').toHaveLength(1);
    expect(failed[0]!.exception).toMatch(
      /^Illuminate\\Queue\\MaxAttemptsExceededException: App\\Jobs\\Crunch has been attempted too many times or run too long\. The job may have previously timed out\. in /,
    );
    expect(worker.stats()).toMatchObject({ timedOut: 1, processed: 0 });
  });

  it('that throws is timed out too, not released with its backoff as an exception would be', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Crunch', { timeout: 1, maxTries: 3 }));
    await env
      .worker(
        {
          'App\\Jobs\\Crunch': async () => {
            blockFor(1500);
            throw new Error('crunched too long');
          },
        },
        { stopWhenEmpty: true },
      )
      .run();
    expect(eventsOf('App\\Jobs\\Crunch')).toContain('timed-out');
    expect(eventsOf('App\\Jobs\\Crunch'), 'App\\Jobs\\Crunch was released as after an exception').not.toContain('released');
    expect(await env.queue.reservedSize()).toBe(1);
  });
});

describe('the watchdog, in an embedded worker', () => {
  it('reports the job that blocked the event loop past its timeout (event and log line), and the process goes on', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Crunch', { timeout: 1, maxTries: 3 }));
    await env.queue.pushRaw(payload('App\\Jobs\\Quick'));
    const heard: WorkerEvent[] = [];
    const lines: string[] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      error: () => undefined,
      warn: (_: object, line?: string) => void lines.push(line ?? ''),
    };
    const handlers = { 'App\\Jobs\\Crunch': async () => blockFor(1600), 'App\\Jobs\\Quick': async () => undefined };
    const worker = new Worker(
      env.queue,
      handlers,
      { sleep: 0.05, memory: 0, stopWhenEmpty: true },
      { failer: env.failer, cache: env.cache, log: (e) => env.events.push(e), logger },
    );
    worker.on('blocked', (event) => heard.push(event));
    await worker.run();
    expect(
      heard.map((e) => [e.job, e.queue, e.attempts]),
      'no blocked event for App\\Jobs\\Crunch',
    ).toEqual([['App\\Jobs\\Crunch', 'default', 1]]);
    expect(heard[0]!.reason).toMatch(/^blocked the event loop for 1\.\d s, past its timeout of 1 s/);
    expect(lines.filter((line) => line.startsWith('blocked App\\Jobs\\Crunch'))).toHaveLength(1);
    expect(eventsOf('App\\Jobs\\Quick'), 'the job after the blocking one').toContain('processed');
  });

  it('watches the next job after a handler that threw as it was called (its slot is not lost), and a plain function blocking past its timeout is timed out', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Throws', { timeout: 5, maxTries: 1 }));
    await env.queue.pushRaw(payload('App\\Jobs\\Crunch', { timeout: 1, maxTries: 3 }));
    const handlers = {
      'App\\Jobs\\Throws': () => {
        throw new Error('thrown as it was called');
      },
      // No async: the throw comes out of the call itself, after the timeout.
      'App\\Jobs\\Crunch': () => {
        blockFor(1500);
        throw new Error('crunched too long');
      },
    };
    const worker = env.worker(handlers, { stopWhenEmpty: true, concurrency: 1 });
    const heard: WorkerEvent[] = [];
    worker.on('blocked', (event) => heard.push(event));
    await worker.run();
    expect((await env.failer.all()).map((record) => record.exception.split('\n')[0]!.replace(/ in \S+$/, ''))).toEqual([
      'Error: thrown as it was called',
    ]);
    expect(
      heard.map((e) => e.job),
      'no blocked event for the job after the one that threw',
    ).toEqual(['App\\Jobs\\Crunch']);
    expect(eventsOf('App\\Jobs\\Crunch')).toEqual(['processing', 'timed-out', 'blocked']);
  });

  it('says nothing of a handler that blocks the loop within its timeout', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Crunch', { timeout: 2, maxTries: 3 }));
    const worker = env.worker({ 'App\\Jobs\\Crunch': async () => blockFor(800) }, { stopWhenEmpty: true });
    const heard: WorkerEvent[] = [];
    worker.on('blocked', (event) => heard.push(event));
    await worker.run();
    expect(heard).toEqual([]);
    expect(eventsOf('App\\Jobs\\Crunch')).toEqual(['processing', 'processed']);
  });

  it('is off with watchdog: false: no thread, no event', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Crunch', { timeout: 1, maxTries: 3 }));
    const worker = env.worker({ 'App\\Jobs\\Crunch': async () => blockFor(1500) }, { stopWhenEmpty: true, watchdog: false });
    const heard: WorkerEvent[] = [];
    worker.on('blocked', (event) => heard.push(event));
    await worker.run();
    expect(heard).toEqual([]);
    // The late settle is still a timeout: that is the worker's own rule, not the watchdog's.
    expect(eventsOf('App\\Jobs\\Crunch')).toContain('timed-out');
  });
});

describe('a job with no timeout (--timeout=0) that blocks the event loop', () => {
  it('is never reported or ended, and its reservation is renewed by the thread while the loop is blocked', async () => {
    const setup = workerSetup('watchdog-t0', { retryAfter: 1 });
    try {
      await setup.queue.pushRaw(payload('App\\Jobs\\Endless'));
      const reserved = `${setup.queue.key('default')}:reserved`;
      let expiredBy: number | undefined;
      const handlers = {
        'App\\Jobs\\Endless': async () => {
          blockFor(2500);
          // Sent before the loop's own renewal can run: what the thread alone left in Redis.
          const [score, [seconds, micros]] = await Promise.all([setup.client.zrange(reserved, 0, 0, 'WITHSCORES'), setup.client.time()]);
          expiredBy = Number(seconds) + Number(micros) / 1e6 - Number(score[1]);
        },
      };
      const worker = setup.worker(handlers, { stopWhenEmpty: true, timeout: 0 });
      const heard: WorkerEvent[] = [];
      worker.on('blocked', (event) => heard.push(event));
      await worker.run();
      expect(heard, 'a job with no timeout was reported blocked').toEqual([]);
      expect(
        expiredBy,
        'App\\Jobs\\Endless (no timeout, retry_after 1 s) blocked the loop 2.5 s: its reservation ran out that many seconds before the loop turned, for any worker to take',
      ).toBeLessThanOrEqual(0);
      expect(setup.events.filter((e) => e.job === 'App\\Jobs\\Endless').map((e) => e.event)).toEqual(['processing', 'processed']);
    } finally {
      await setup.cleanup();
    }
  });
});

describe('the thread’s renewals, on a Redis whose clock is ahead of the host’s', () => {
  it('extend a reservation by Redis’s clock, as reserve and the worker’s renewals score it, never shortening it', async () => {
    // The host's clock an hour behind Redis's: scored by it, a renewal would end the reservation at once.
    const server = await startShiftedRedis(3600);
    const client = connectRedis({ url: `redis://127.0.0.1:${server.port}` });
    const queue = new RedisQueue(client, { retryAfter: 2 });
    try {
      await queue.pushRaw(payload('App\\Jobs\\Crunch', { timeout: 10 }));
      let expiredBy: number | undefined;
      const handlers = {
        'App\\Jobs\\Crunch': async () => {
          blockFor(2500);
          // Sent before the loop's own renewal can run: what the thread alone left in Redis.
          const [score, [seconds, micros]] = await Promise.all([
            client.zrange('queues:default:reserved', 0, 0, 'WITHSCORES'),
            client.time(),
          ]);
          expiredBy = Number(seconds) + Number(micros) / 1e6 - Number(score[1]);
        },
      };
      await new Worker(
        queue,
        handlers,
        { sleep: 0.05, memory: 0, stopWhenEmpty: true },
        { failer: env.failer, log: (e) => env.events.push(e) },
      ).run();
      expect(
        expiredBy,
        'App\\Jobs\\Crunch (retry_after 2 s) blocked the loop 2.5 s: by Redis’s clock its reservation had run out by that many seconds',
      ).toBeLessThanOrEqual(0);
      expect(eventsOf('App\\Jobs\\Crunch')).toEqual(['processing', 'processed']);
    } finally {
      await queue.close();
      client.disconnect();
      server.stop();
    }
  });
});

describe('the watchdog with jobs beside the one blocking the loop (--concurrency)', () => {
  it('names a job whose timeout passed while another blocked the loop as past its timeout, not as the blocker', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Waits', { timeout: 1, maxTries: 3 }));
    await env.queue.pushRaw(payload('App\\Jobs\\Crunch', { timeout: 10, maxTries: 3 }));
    const handlers = {
      // Waits on I/O (a timer), holding nothing; Crunch holds the loop 2 s, within its own timeout.
      'App\\Jobs\\Waits': () => new Promise((resolve) => setTimeout(resolve, 3000)),
      'App\\Jobs\\Crunch': async () => blockFor(2000),
    };
    const worker = env.worker(handlers, { stopWhenEmpty: true, concurrency: 2 });
    const heard: WorkerEvent[] = [];
    worker.on('blocked', (event) => heard.push(event));
    await worker.run();
    expect(
      heard.map((e) => e.job),
      'the jobs reported',
    ).toEqual(['App\\Jobs\\Waits']);
    expect(heard[0]!.reason, 'App\\Jobs\\Waits, waiting on a timer, was reported as blocking the loop').toMatch(
      /^was past its timeout of 1 s while the event loop was blocked for [12]\.\d s, by it or by one of the 1 other job in hand/,
    );
    expect(eventsOf('App\\Jobs\\Crunch'), 'App\\Jobs\\Crunch, blocking within its timeout').toEqual(['processing', 'processed']);
  });
});

describe('the thread’s renewals of a large job', () => {
  it('renew the reservation of a job whose payload is larger than a slot’s 64 KB while it blocks the loop', async () => {
    const setup = workerSetup('watchdog-large', { retryAfter: 1 });
    try {
      const big = buildPayload(
        buildJob({ className: 'App\\Jobs\\Parse', properties: { csv: 'x'.repeat(200_000) }, serializesModels: false }),
        { timeout: 10 },
      ).raw;
      await setup.queue.pushRaw(big);
      const reserved = `${setup.queue.key('default')}:reserved`;
      let expiredBy: number | undefined;
      const handlers = {
        'App\\Jobs\\Parse': async () => {
          blockFor(2500);
          // Sent before the loop's own renewal can run: what the thread alone left in Redis.
          const [score, [seconds, micros]] = await Promise.all([setup.client.zrange(reserved, 0, 0, 'WITHSCORES'), setup.client.time()]);
          expiredBy = Number(seconds) + Number(micros) / 1e6 - Number(score[1]);
        },
      };
      await setup.worker(handlers, { stopWhenEmpty: true }).run();
      expect(
        expiredBy,
        'App\\Jobs\\Parse (200 KB, retry_after 1 s) blocked the loop 2.5 s: its reservation ran out that many seconds before the loop turned',
      ).toBeLessThanOrEqual(0);
      expect(setup.events.filter((e) => e.job === 'App\\Jobs\\Parse').map((e) => e.event)).toEqual(['processing', 'processed']);
    } finally {
      await setup.cleanup();
    }
  });
});
