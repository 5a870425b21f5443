/**
 * The worker's record of what it ran (src/record/recorder.ts), a real Worker on real Redis and
 * on Laravel's jobs table (made by Laravel 8.83's Schema builder) on SQLite, MariaDB and
 * PostgreSQL: what completed and what failed is counted per minute, queue and class with its
 * runtime, a job released or timed out with attempts left is not; the latest completed jobs are
 * kept; the heartbeat is there while the worker runs and gone once it stopped. A store that
 * cannot be written costs one warning, never a job.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { buildJob, buildPayload, type PayloadOptions } from '../../src/index.js';
import { DatabaseQueue } from '../../src/database/index.js';
import { DatabaseUuidFailedJobProvider, Worker, type HandlerMap, type WorkerEvent } from '../../src/worker/index.js';
import { takenClasses } from '../../src/worker/handlers.js';
import { nodeRecorder } from '../../src/record/recorder.js';
import { nodeRecordView, type NodeRecordView } from '../../src/record/view.js';
import { freePort } from '../../src/testing/index.js';
import { QUEUE_DATABASES, withJobsTable } from '../helpers/jobs-table.js';
import { workerSetup, type WorkerSetup } from '../helpers/worker.js';

function payload(className: string, options: PayloadOptions = {}): string {
  return buildPayload(buildJob({ className, properties: {}, serializesModels: false }), options).raw;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for `check` to hold, reading again every 20 ms, for up to 10 s. */
async function until<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after 10 s`);
    await pause(20);
  }
}

/**
 * Jobs of every outcome on `queue`: two that complete, one that fails, one released, one timed
 * out for good (failed) and one timed out with attempts left (still reserved); then the worker's
 * heartbeat is read while a last job holds it, and the record once it stopped.
 */
async function runAndRead(
  push: (raw: string, queue: string) => Promise<unknown>,
  makeWorker: (handlers: HandlerMap) => Worker,
  view: NodeRecordView,
  queue: string,
  connection: string,
): Promise<void> {
  const started = Math.floor(Date.now() / 1000);
  for (const [className, options] of [
    ['App\\Jobs\\Ok', {}],
    ['App\\Jobs\\Ok', { displayName: 'Nightly invoices' }],
    ['App\\Jobs\\Fails', { maxTries: 1 }],
    ['App\\Jobs\\Releases', { maxTries: 5 }],
    ['App\\Jobs\\Hangs', { timeout: 1, maxTries: 1 }],
    ['App\\Jobs\\Hangs', { timeout: 1, maxTries: 3 }],
    ['App\\Jobs\\Holds', {}],
  ] as [string, PayloadOptions][])
    await push(payload(className, options), queue);
  let heartbeatSeen = false;
  const worker = makeWorker({
    'App\\Jobs\\Ok': () => pause(30),
    'App\\Jobs\\Fails': () => {
      throw new Error('no invoice');
    },
    'App\\Jobs\\Releases': (job) => job.release(60),
    'App\\Jobs\\Hangs': (job) => new Promise((resolve) => job.signal.addEventListener('abort', resolve)),
    // Holds the worker until its heartbeat has been read with this job in hand.
    'App\\Jobs\\Holds': async () => {
      const live = await until(
        () => view.workers(),
        (beats) => beats.some((beat) => beat.queues.includes(queue) && beat.inHand === 1),
        `the heartbeat of the worker on ${queue}`,
      );
      const beat = live.find((one) => one.queues.includes(queue))!;
      expect(beat, `the heartbeat of the worker on ${queue}`).toMatchObject({
        pid: process.pid,
        connection,
        queues: [queue],
        concurrency: 1,
        inHand: 1,
        every: 0.1,
        classes: ['App\\Jobs\\Ok', 'App\\Jobs\\Fails', 'App\\Jobs\\Releases', 'App\\Jobs\\Hangs', 'App\\Jobs\\Holds'],
      });
      expect(beat.since >= started - 1 && beat.lastPoll >= beat.since, `since ${beat.since}, lastPoll ${beat.lastPoll}`).toBe(true);
      heartbeatSeen = true;
    },
  });
  const stop = await worker.run();
  expect(stop.reason, 'how the worker stopped').toBe('empty');
  expect(heartbeatSeen, 'the heartbeat was read while the worker ran').toBe(true);

  const rows = (await view.minutes(started - 60)).filter((row) => row.queue === queue);
  const byClass = new Map<string, { completed: number; failed: number; runtimeMs: number }>();
  for (const row of rows) {
    const sum = byClass.get(row.className) ?? { completed: 0, failed: 0, runtimeMs: 0 };
    byClass.set(row.className, {
      completed: sum.completed + row.completed,
      failed: sum.failed + row.failed,
      runtimeMs: sum.runtimeMs + row.runtimeMs,
    });
  }
  const counts = Object.fromEntries([...byClass].map(([className, sum]) => [className, [sum.completed, sum.failed]]));
  expect(counts, `completed and failed per class on ${queue} (released and still-reserved jobs not counted)`).toEqual({
    'App\\Jobs\\Ok': [2, 0],
    'App\\Jobs\\Fails': [0, 1],
    'App\\Jobs\\Hangs': [0, 1],
    'App\\Jobs\\Holds': [1, 0],
  });
  const ok = byClass.get('App\\Jobs\\Ok')!.runtimeMs;
  expect(ok >= 55 && ok < 5_000, `the runtime of App\\Jobs\\Ok's two runs of 30 ms: ${ok} ms`).toBe(true);
  const hangs = byClass.get('App\\Jobs\\Hangs')!.runtimeMs;
  expect(hangs >= 990, `the runtime of App\\Jobs\\Hangs' run to its 1 s timeout: ${hangs} ms`).toBe(true);

  const recent = await view.recent(0, 1_000);
  const ours = recent.jobs.filter((job) => job.queue === queue);
  expect(
    ours.map((job) => [job.className, job.name, job.connection]),
    `the latest completed jobs on ${queue}, newest first`,
  ).toEqual([
    ['App\\Jobs\\Holds', 'App\\Jobs\\Holds', connection],
    ['App\\Jobs\\Ok', 'Nightly invoices', connection],
    ['App\\Jobs\\Ok', 'App\\Jobs\\Ok', connection],
  ]);
  expect(
    ours.every((job) => typeof job.uuid === 'string' && job.finishedAt >= started),
    'each with its uuid and when it finished',
  ).toBe(true);
  expect(
    (await view.workers()).filter((beat) => beat.queues.includes(queue)),
    `the heartbeat once the worker on ${queue} stopped`,
  ).toEqual([]);
}

describe('on Redis', () => {
  let env: WorkerSetup;
  beforeEach(() => {
    env = workerSetup('record');
  });
  afterEach(() => env.cleanup());

  it('counts what completed and failed per minute, keeps the latest completed, and the heartbeat while it runs', async () => {
    const view = nodeRecordView({ redis: env.client });
    await runAndRead(
      (raw, queue) => env.queue.pushRaw(raw, queue),
      (handlers) =>
        env.worker(
          handlers,
          { queues: ['records'], stopWhenEmpty: true },
          { recorders: [nodeRecorder({ redis: env.client }, { flushEvery: 0.1 }, { classes: takenClasses(handlers) })] },
        ),
      view,
      'records',
      'redis',
    );
    expect(await env.queue.reservedSize('records'), 'the job timed out with attempts left, still reserved').toBe(1);
  });

  it('a store that cannot be written: one warning, and every job runs as it would', async () => {
    // A Redis client that refuses each command at once: nothing listens on its port.
    const down = new Redis({ port: await freePort(), lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
    down.on('error', () => undefined);
    for (let n = 0; n < 3; n++) await env.queue.pushRaw(payload('App\\Jobs\\Ok'));
    const stop = await env
      .worker(
        { 'App\\Jobs\\Ok': () => pause(50) },
        { stopWhenEmpty: true },
        { recorders: [nodeRecorder({ redis: down }, { flushEvery: 0.02 })] },
      )
      .run();
    down.disconnect();
    expect(stop.reason).toBe('empty');
    const said = (event: WorkerEvent['event']) => env.events.filter((event_) => event_.event === event);
    expect(said('processed').length, 'the jobs processed').toBe(3);
    expect(
      said('warning').map((warning) => warning.reason),
      'the warnings said',
    ).toEqual([expect.stringMatching(/^the record of this worker's jobs was not written: /)]);
  });
});

describe('a store that does not answer (an outage the client waits out)', () => {
  let env: WorkerSetup;
  beforeEach(() => {
    env = workerSetup('record-outage');
  });
  afterEach(() => env.cleanup());

  it('the run ends without waiting for it, said once; the job ran', async () => {
    // Commands wait in the client's queue for a server that never comes, as the worker's patient clients do.
    const never = new Redis({ port: await freePort(), maxRetriesPerRequest: null, retryStrategy: () => 50 });
    never.on('error', () => undefined);
    try {
      await env.queue.pushRaw(payload('App\\Jobs\\Ok'));
      const started = performance.now();
      const stop = await env
        .worker(
          { 'App\\Jobs\\Ok': () => pause(1_200) },
          { stopWhenEmpty: true },
          { recorders: [nodeRecorder({ redis: never }, { flushEvery: 0.1 })] },
        )
        .run();
      const took = performance.now() - started;
      expect(stop.reason).toBe('empty');
      expect(took < 3_000, `the run took ${Math.round(took)} ms: it waited for the record`).toBe(true);
      expect(env.events.filter((event) => event.event === 'processed').length, 'the job processed').toBe(1);
      expect(
        env.events.filter((event) => event.event === 'warning').map((warning) => warning.reason),
        'the warnings said',
      ).toEqual([expect.stringMatching(/^the record of this worker's last jobs was not written: its store has not answered for \d+s$/)]);
    } finally {
      never.disconnect();
    }
  });
});

describe.each(QUEUE_DATABASES)('on the database queue, %s', (_name, url) => {
  it('keeps the same record in the jobs table’s database', () =>
    withJobsTable(url, async (t) => {
      const where = t.url.includes('://') ? t.url : `sqlite://${t.url}`;
      const queue = DatabaseQueue.open(where, { table: t.table, retryAfter: 90 });
      const failer = DatabaseUuidFailedJobProvider.fromUrl(`sqlite://${t.dir}/failed.sqlite`);
      // The servers' `test` database is shared with other files' workers: a queue of this test's own.
      const queueName = `records-${randomBytes(3).toString('hex')}`;
      try {
        await runAndRead(
          (raw, name_) => queue.pushRaw(raw, name_),
          (handlers) =>
            new Worker(
              queue,
              handlers,
              { queues: [queueName], stopWhenEmpty: true, sleep: 0.05, memory: 0, share: false, connectionName: 'database' },
              { failer, recorders: [nodeRecorder({ database: queue.db }, { flushEvery: 0.1 }, { classes: takenClasses(handlers) })] },
            ),
          nodeRecordView({ database: queue.db }),
          queueName,
          'database',
        );
      } finally {
        await failer.close();
        await queue.close();
      }
    }));
});
