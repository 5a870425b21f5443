/**
 * connect() with a Laravel `.env`, against Debian's real Laravel 8.83 on real Redis.
 *   - The library produces (queue.dispatch), Laravel's own queue:work consumes (laravel-worker.php).
 *   - Laravel produces (laravel-dispatch.php), the library's worker consumes with typed handlers.
 *   - stop({ timeout }) keeps its deadline; a Redis that is not there makes connect() reject in time.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, type LaravelQueue } from '../../src/connect/index.js';
import { connectionFrom } from '../../src/cli/connection.js';
import { freePort } from '../../src/testing/index.js';
import { Worker, WorkerUsageError, type WorkerEvent } from '../../src/worker/Worker.js';
import type { QueueCache } from '../../src/worker/cache.js';
import { defineHandlers } from '../../src/worker/handlers.js';
import { php, scratch, type Scratch, laravelDispatch as pushedByLaravel } from '../helpers/processes.js';
import { rawClient, removePrefix } from '../helpers/redis.js';

const QUEUE = 'embedded';
const APP_KEY = `base64:${Buffer.alloc(32, 7).toString('base64')}`;
let s: Scratch;
let appName: string;
let prefix: string;
let envFile: string;
let queue: LaravelQueue | undefined;

beforeEach(() => {
  const tag = randomBytes(4).toString('hex');
  appName = `Lqb Connect ${tag}`;
  // What Laravel 8's config/database.php makes of APP_NAME: Str::slug($name, '_').'_database_'.
  prefix = `lqb_connect_${tag}_database_`;
  s = scratch(prefix, QUEUE);
  envFile = join(s.dir, '.env');
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  writeFileSync(
    envFile,
    [
      `APP_NAME="${appName}"`,
      `APP_KEY=${APP_KEY}`,
      `REDIS_HOST=${url.hostname}`,
      `REDIS_PORT=${url.port || 6379}`,
      'REDIS_PASSWORD=null',
      `REDIS_QUEUE=${QUEUE}`,
      'DB_CONNECTION=sqlite',
      'DB_DATABASE=failed.sqlite',
      '',
    ].join('\n'),
  );
});

afterEach(async () => {
  await queue?.close();
  queue = undefined;
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  s.remove();
});

const laravelDispatch = (kind: string, options: object) => pushedByLaravel(s.env, QUEUE, kind, options);

describe('connect({ env })', () => {
  it('resolves what lqb --env resolves: the APP_NAME prefix, REDIS_QUEUE, the cache, APP_KEY, the sqlite failed-jobs database', async () => {
    queue = await connect({ env: envFile });
    expect(queue.settings, 'connect() and lqb --env read the same .env differently').toEqual(connectionFrom({ env: envFile }));
    expect(queue.prefix, 'the key prefix is not APP_NAME’s').toBe(prefix);
    expect(queue.defaultQueue, 'the default queue is not REDIS_QUEUE').toBe(QUEUE);
    expect(queue.cachePrefix, 'the cache prefix is not APP_NAME’s').toBe(`lqb_connect_${prefix.split('_')[2]}_cache`);
    expect(queue.settings.cacheUrl, 'the cache is not on database 1').toMatch(/\/1$/);
    expect(queue.settings.lockUrl, 'locks are not on the stock lock_connection, `default` (REDIS_DB 0)').toMatch(/\/0$/);
    expect(queue.settings.failedDb, 'the failed-jobs database is not DB_DATABASE beside the .env').toBe(
      `sqlite://${join(s.dir, 'failed.sqlite')}`,
    );
    expect(queue.encrypter, 'APP_KEY gave no encrypter').toBeDefined();
  });

  it('dispatch: Laravel 8.83’s worker runs what it pushes, a Date as a Carbon, a delay (a Date) when due', async () => {
    queue = await connect({ env: envFile });
    const at = new Date('2024-05-06T07:08:09.123Z');
    const now = await queue.dispatch('App\\Jobs\\Bridge\\RecordJob', { n: 1, label: 'now', ratio: 2.5, items: { at }, flag: true });
    const later = await queue.dispatch(
      'App\\Jobs\\Bridge\\RecordJob',
      { n: 2, label: 'later', ratio: 0.5, items: [], flag: null },
      { delay: new Date(Date.now() + 1500), tries: 3, timeout: 30 },
    );
    expect(now, 'dispatch did not answer {uuid, id, queue}').toMatchObject({
      queue: QUEUE,
      uuid: expect.any(String),
      id: expect.any(String),
    });
    expect(await queue.size(), 'size() does not count the ready and the delayed job').toBe(2);
    await new Promise((r) => setTimeout(r, 2100));
    const result = await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env);
    expect(result.status, `Laravel's worker failed: ${result.stderr}`).toBe(0);
    const runs = s.phpRuns();
    expect(
      runs.map((r) => r.props.n),
      'Laravel did not run both jobs, in order',
    ).toEqual([1, 2]);
    expect(runs[0], 'the properties did not arrive with their PHP types').toMatchObject({
      uuid: now.uuid,
      queue: QUEUE,
      props: { label: 'now', ratio: 2.5, flag: true, types: { n: 'int', ratio: 'float', flag: 'bool' } },
    });
    expect(String(runs[0]!.props.items.at), 'the Date did not arrive as a Carbon of its moment').toMatch(/^2024-05-06T07:08:09\.123/);
    expect(runs[1], 'the delayed job is not the one dispatched').toMatchObject({ uuid: later.uuid, props: { label: 'later' } });
  });

  it('worker: typed handlers run what Laravel pushed; a failure lands in the .env’s database; events and stats say so', async () => {
    queue = await connect({ env: envFile });
    const pushed = await laravelDispatch('record', { n: 1, count: 3, label: 'from php', ratio: 1.5, items: [1] });
    const [failing] = await laravelDispatch('failing', { n: 9, message: 'cannot do it' });
    const seen: { n: number; label: string }[] = [];
    const handlers = defineHandlers<{
      'App\\Jobs\\Bridge\\RecordJob': { command: { n: number; label: string } };
      'App\\Jobs\\Bridge\\FailingJob': { command: { n: number; message: string } };
    }>({
      'App\\Jobs\\Bridge\\RecordJob': async (job) => void seen.push({ n: job.command.n, label: job.command.label }),
      'App\\Jobs\\Bridge\\FailingJob': async (job) => {
        throw new Error(job.command.message);
      },
    });
    const worker = queue.worker(handlers, { stopWhenEmpty: true, sleep: 0, memory: 0 });
    const events: string[] = [];
    const errors: unknown[] = [];
    for (const name of ['processing', 'processed', 'failed', 'released', 'stopping'] as const) {
      worker.on(name, (event: WorkerEvent, error?: Error) => {
        events.push(`${name}${event.job ? ` ${event.job}` : ''}`);
        if (name === 'failed') errors.push(error);
      });
    }
    expect((await worker.run()).reason, 'the worker did not stop for an empty queue').toBe('empty');
    expect(seen, 'the handler did not see the jobs’ properties').toEqual([1, 2, 3].map((n) => ({ n, label: 'from php' })));
    expect(
      events.filter((e) => e.startsWith('processed')),
      'not one processed event per job',
    ).toHaveLength(3);
    expect(events, 'no failed event for the failing job').toContain('failed App\\Jobs\\Bridge\\FailingJob');
    expect(errors[0], 'the failed event did not carry the Error itself').toBeInstanceOf(Error);
    expect((errors[0] as Error).message).toBe('cannot do it');
    expect(events.at(-1), 'stopping is not the last event').toBe('stopping');
    expect(worker.stats(), 'the counters do not say what happened').toMatchObject({
      processed: 3,
      failed: 1,
      inFlight: 0,
      running: false,
      perQueue: { [QUEUE]: { processed: 3, failed: 1 } },
    });
    const failed = await queue.failer.all();
    expect(
      failed.map((f) => f.uuid),
      'the failure is not in the .env’s failed_jobs',
    ).toEqual([failing!.uuid]);
    expect(pushed).toHaveLength(3);
  });

  it('stop({ timeout }) keeps its deadline: a job still running is left reserved, and the reason says so', async () => {
    queue = await connect({ env: envFile });
    await queue.dispatch('App\\Jobs\\Bridge\\RecordJob', { n: 1, label: 'slow', ratio: 1.5, items: [] });
    let aborted: unknown;
    const worker = queue.worker(
      {
        'App\\Jobs\\Bridge\\RecordJob': (job) =>
          new Promise<void>((resolve) => {
            job.signal.addEventListener('abort', () => ((aborted = job.signal.reason), resolve()));
          }),
      },
      { sleep: 0.05, memory: 0, timeout: 0 },
    );
    const stopping: string[] = [];
    worker.on('stopping', (event: WorkerEvent) => stopping.push(event.reason ?? ''));
    const running = worker.run();
    await expect(worker.run(), 'a second run() at once was not refused').rejects.toThrow(WorkerUsageError);
    while (worker.stats().inFlight === 0) await new Promise((r) => setTimeout(r, 10));
    const started = Date.now();
    const stop = await worker.stop({ timeout: 300 });
    expect(Date.now() - started, 'stop() did not keep its 300 ms deadline').toBeLessThan(1500);
    expect(stop, 'the reason does not say the job was left reserved').toMatchObject({
      status: 0,
      reason: 'stopped',
      leftReserved: 1,
      detail: expect.stringMatching(/left reserved.*retry_after/),
    });
    expect(await running, 'run() did not resolve as stop() did').toEqual(stop);
    expect(stopping, 'no stopping event').toEqual(['stopped']);
    expect(aborted, 'the handler’s signal was not aborted at the deadline').toBeInstanceOf(Error);
    await new Promise((r) => setTimeout(r, 50));
    expect(await queue.connection.reservedSize(QUEUE), 'the job is not left reserved').toBe(1);
    // A finished worker may run again.
    const again = worker.run();
    expect((await worker.stop()).reason, 'a second run could not be stopped').toBe('stopped');
    await again;
  });

  it('a worker must be told where failures go, and queues: [] is a usage error', async () => {
    queue = await connect({ env: envFile });
    expect(() => new Worker(queue!.connection, {}, {}, {}), 'a worker without a failer was made').toThrow(/where failed jobs go/);
    expect(() => queue!.worker({}, { queues: [] }), 'queues: [] was taken').toThrow(WorkerUsageError);
    expect(() => new Worker(queue!.connection, {}, {}, { failer: false })).not.toThrow();
  });

  it('an option name it does not know, or a value of the wrong kind, is a usage error naming it', async () => {
    queue = await connect({ env: envFile });
    const refused = (options: object) => {
      try {
        queue!.worker({}, options);
      } catch (error) {
        expect(error, `${JSON.stringify(options)}: not a WorkerUsageError`).toBeInstanceOf(WorkerUsageError);
        return (error as Error).message;
      }
      return 'taken';
    };
    expect(refused({ queue: ['mail'] }), 'queue (for queues) was taken').toMatch(
      /^unknown worker option "queue" \(did you mean queues\?\)/,
    );
    expect(refused({ stopWhenEmty: true }), 'a misspelt stopWhenEmpty was taken').toMatch(
      /"stopWhenEmty" \(did you mean stopWhenEmpty\?\)/,
    );
    expect(refused({ retryafter: 30 }), 'a misspelt retryAfter (worker()’s own) was taken').toMatch(
      /"retryafter" \(did you mean retryAfter\?\)/,
    );
    expect(refused({ queues: 'high,default' }), 'queues as one string was taken').toMatch(/^queues must be a list of queue names/);
    expect(refused({ backoff: 10 }), 'backoff as a number was taken').toMatch(/^backoff must be a list of seconds/);
    expect(refused({ tries: '3' }), 'tries as a string was taken').toMatch(/^tries must be a number, 0 or more, not "3"/);
    expect(refused({ concurrency: 0 }), 'concurrency 0 was taken').toMatch(/^concurrency must be a whole number, 1 or more/);
    expect(refused({ once: 'yes' }), 'once as a string was taken').toMatch(/^once must be true or false/);
    expect(refused({ record: true }), 'record: true was taken').toMatch(/^record must be false or \{ keepSeconds, recent, flushEvery \}/);
    expect(refused({ record: { recent: -1 } }), 'record.recent -1 was taken').toMatch(
      /^record\.recent must be a whole number, 0 or more, not -1/,
    );
    const worker = queue.worker({}, { queues: ['a'], retryAfter: 30, blockFor: null, tries: undefined, failer: false });
    expect(worker.options.tries, 'tries: undefined did not keep its default').toBe(1);
    expect(
      () => new Worker(queue!.connection, {}, { queue: ['x'] } as never, { failer: false }),
      'the Worker itself took an unknown option',
    ).toThrow(/unknown worker option "queue"/);
  });
});

describe('close()', () => {
  it('stops the workers it made and closes every client and pool it opened', async () => {
    const opened = await connect({ env: envFile });
    const worker = opened.worker({}, { sleep: 0.05, memory: 0 });
    const running = worker.run();
    const failer = opened.failer;
    await failer.all();
    await opened.close();
    expect((await running).reason, 'the running worker was not stopped').toBe('stopped');
    await new Promise((r) => setTimeout(r, 50));
    const clients = {
      queue: opened.connection.client.status,
      cache: (opened.cache as QueueCache).client.status,
      worker: worker.queue.clients?.[0]?.status,
    };
    expect(clients, 'a Redis client is still open').toEqual({ queue: 'end', cache: 'end', worker: 'end' });
    await expect(failer.all(), 'the failed-jobs pool is still open').rejects.toThrow();
    await expect(opened.dispatch('App\\Jobs\\X'), 'a closed queue still dispatches').rejects.toThrow(/closed/);
  });
});

describe('connect() when Redis is not there', () => {
  it('rejects within connectTimeout, naming the host and not the password', async () => {
    const port = await freePort();
    const started = Date.now();
    const error = await connect({ redis: `redis://:sekret-pw@127.0.0.1:${port}/0`, connectTimeout: 500 }).catch((e: unknown) => e);
    expect(Date.now() - started, 'connect() took longer than its timeout').toBeLessThan(1500);
    expect(error, 'connect() did not reject').toBeInstanceOf(Error);
    expect((error as Error).message, 'the error does not name where Redis was looked for').toContain(`127.0.0.1:${port}`);
    expect((error as Error).message, 'the error shows the password').not.toContain('sekret-pw');
  });

  it('rejects within connectTimeout for a server that never answers', async () => {
    const { createServer } = await import('node:net');
    const sockets: import('node:net').Socket[] = [];
    const server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const started = Date.now();
      const error = await connect({ redis: `redis://127.0.0.1:${port}`, connectTimeout: 400 }).catch((e: unknown) => e);
      expect(Date.now() - started, 'connect() took longer than its timeout').toBeLessThan(1500);
      expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    } finally {
      for (const socket of sockets) socket.destroy();
      server.close();
    }
  });
});
