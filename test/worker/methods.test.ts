/**
 * A worker's unique jobs whose class defines uniqueId() (src/worker/methods.ts, locks/uniqueness.ts):
 * with the translation `lqb shapes` made of it, or a handler's uniqueId function, the lock its
 * dispatch took is released after the job; with neither, the class is refused at start (status 2,
 * no job taken), or its jobs given back with `share`; without shapes, one line at start says
 * what the worker cannot know. Shapes read by PHP's reflection from php-fixture-gen/methods-app
 * (Laravel 8.83); real Redis.
 */
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload, decodePayload } from '../../src/laravel/index.js';
import { serialize } from '../../src/php/index.js';
import { reflectShapes, shapedCommand, type ShapesFile } from '../../src/shapes/index.js';
import { RedisLockStore, Worker, sandboxedHandlers, type HandlerMap } from '../../src/worker/index.js';
import { RESERVE, laravelWritesReserve } from '../helpers/methods-app.js';
import { root } from '../helpers/php.js';
import { workerSetup, type WorkerSetup } from '../helpers/worker.js';

const QUEUE = 'methods';
let shapes: ShapesFile;
let env: WorkerSetup;
let locks: RedisLockStore;

beforeAll(async () => {
  shapes = await reflectShapes({ app: join(root, 'php-fixture-gen/methods-app') });
});
beforeEach(() => {
  env = workerSetup('worker-methods');
  locks = new RedisLockStore(env.client, 'laravel_cache');
});
afterEach(() => env.cleanup());

const reserve = RESERVE;
const opaque = { product: { class: 'App\\Models\\Product', id: 7 }, sku: 'B2' };

/** Pushes the class's job as Laravel 8.83 would, its lock taken under `key` first (as PendingDispatch takes it). */
async function dispatched(className: string, values: Record<string, unknown>, key: string): Promise<void> {
  expect(await locks.acquire(key, 'php-owner', 0), `the lock ${key} was free`).toBe(true);
  await env.queue.pushRaw(buildPayload(shapedCommand(shapes, className, values, { profile: '8' }).command, { profile: '8' }).raw, QUEUE);
}

function worker(handlers: HandlerMap, options: { share?: boolean; shapes?: ShapesFile | undefined; laravel?: string } = {}): Worker {
  return new Worker(
    env.queue,
    handlers,
    { queues: [QUEUE], stopWhenEmpty: true, sleep: 0.05, memory: 0, share: options.share ?? false, shareDelay: 0 },
    {
      failer: env.failer,
      locks,
      log: (e) => env.events.push(e),
      ...('shapes' in options ? (options.shapes ? { shapes: options.shapes } : {}) : { shapes }),
      ...(options.laravel ? { laravel: options.laravel } : {}),
    },
  );
}

describe('a ShouldBeUnique class with a uniqueId() method', () => {
  it('translated by lqb shapes: the lock under the model key it names is released after the job', async () => {
    await dispatched('App\\Jobs\\ReserveProduct', reserve, 'laravel_unique_job:App\\Jobs\\ReserveProduct42');
    const ran: unknown[] = [];
    const stop = await worker({ 'App\\Jobs\\ReserveProduct': async (job) => void ran.push(job.command.sku) }).run();
    expect([stop.status, ran]).toEqual([0, ['A1']]);
    expect(await locks.owner('laravel_unique_job:App\\Jobs\\ReserveProduct42'), 'the lock after the job').toBeNull();
  });

  it('untranslated, with the handler’s uniqueId function: its result names the lock, which is released', async () => {
    await dispatched('App\\Jobs\\Untranslatable', opaque, 'laravel_unique_job:App\\Jobs\\Untranslatableb2-7');
    const handler = Object.assign(async () => undefined, {
      uniqueId: (job: { command: Record<string, any> }) => `${String(job.command.sku).toLowerCase()}-${job.command.product.id}`,
    });
    const stop = await worker({ 'App\\Jobs\\Untranslatable': handler }).run();
    expect(stop.status).toBe(0);
    expect(env.events.filter((e) => e.event === 'processed').map((e) => e.job)).toEqual(['App\\Jobs\\Untranslatable']);
    expect(await locks.owner('laravel_unique_job:App\\Jobs\\Untranslatableb2-7'), 'the lock after the job').toBeNull();
  });

  it('untranslated, with the uniqueId function of a sandboxed handler: it runs in a thread, and its result names the lock, which is released', async () => {
    await dispatched('App\\Jobs\\Untranslatable', opaque, 'laravel_unique_job:App\\Jobs\\Untranslatableb2-7');
    const sandbox = await sandboxedHandlers(join(root, 'test/worker/fixtures/sandbox-unique.mjs'), { threads: 1 });
    try {
      const stop = await worker(sandbox.handlers).run();
      expect(stop.status, `the sandboxed worker was refused: ${JSON.stringify(env.events.filter((e) => e.event !== 'processing'))}`).toBe(
        0,
      );
      expect(env.events.filter((e) => e.event === 'processed').map((e) => e.job)).toEqual(['App\\Jobs\\Untranslatable']);
      expect(await locks.owner('laravel_unique_job:App\\Jobs\\Untranslatableb2-7'), 'the lock after the sandboxed job').toBeNull();
    } finally {
      await sandbox.close();
    }
  });

  it('a uniqueId function that throws: the job still succeeds, the log names the class, the lock stays', async () => {
    await dispatched('App\\Jobs\\Untranslatable', opaque, 'laravel_unique_job:App\\Jobs\\Untranslatable-thrown');
    const handler = Object.assign(async () => undefined, {
      uniqueId: () => {
        throw new Error('no id today');
      },
    });
    const stop = await worker({ 'App\\Jobs\\Untranslatable': handler }).run();
    expect(stop.status).toBe(0);
    expect(env.events.filter((e) => e.event === 'processed').map((e) => e.job)).toEqual(['App\\Jobs\\Untranslatable']);
    expect(env.events.filter((e) => e.event === 'error').map((e) => e.error)).toEqual([
      'the uniqueId function given for App\\Jobs\\Untranslatable threw: no id today',
    ]);
    expect(await locks.owner('laravel_unique_job:App\\Jobs\\Untranslatable-thrown')).toBe('php-owner');
  });

  it('untranslated and no uniqueId function: refused at start, naming the class and the method; status 2, the job untouched', async () => {
    await dispatched('App\\Jobs\\Untranslatable', opaque, 'laravel_unique_job:App\\Jobs\\Untranslatable-opaque');
    let ran = 0;
    const stop = await worker({
      'App\\Jobs\\Untranslatable': async () => void ran++,
      'App\\Jobs\\ReserveProduct': async () => undefined,
    }).run();
    expect([stop.status, stop.reason, ran]).toEqual([2, 'refused', 0]);
    expect(env.events.filter((e) => e.event === 'error').map((e) => e.error)).toEqual([
      expect.stringMatching(
        /^App\\Jobs\\Untranslatable is ShouldBeUnique and defines uniqueId\(\), which lqb shapes could not translate \(it calls or names md5, which is not translated\), and its handler gives no uniqueId function: .*no job is taken/,
      ),
    ]);
    expect(
      env.events.filter((e) => e.event === 'processing'),
      'a job was taken',
    ).toEqual([]);
    expect(await env.queue.size(QUEUE), 'the job is still queued').toBe(1);
    expect(await locks.owner('laravel_unique_job:App\\Jobs\\Untranslatable-opaque')).toBe('php-owner');
  });

  it('untranslated, on Laravel 11.39+ (whose payload carries the lock key): not refused', async () => {
    const stop = await worker({ 'App\\Jobs\\Untranslatable': async () => undefined }, { shapes: { ...shapes, laravel: '11.39.0' } }).run();
    expect(stop.status).toBe(0);
    expect(env.events.filter((e) => e.event === 'error')).toEqual([]);
  });

  it('untranslated, with share: its jobs are given back for PHP, the others run', async () => {
    await dispatched('App\\Jobs\\Untranslatable', opaque, 'laravel_unique_job:App\\Jobs\\Untranslatable-opaque');
    const w = worker({ 'App\\Jobs\\Untranslatable': async () => undefined }, { share: true });
    const said = env.events;
    // Given back with no delay it comes straight back: stop after the first give-back.
    w.on('given-back', () => void w.stop());
    const stop = await w.run();
    expect(stop.status).toBe(0);
    expect(said.filter((e) => e.event === 'error').map((e) => e.error)).toEqual([
      expect.stringMatching(/^App\\Jobs\\Untranslatable is ShouldBeUnique .* its jobs are given back for PHP workers/),
    ]);
    expect(said.filter((e) => e.event === 'given-back').map((e) => e.job)).toEqual(['App\\Jobs\\Untranslatable']);
    expect(await env.queue.size(QUEUE), 'the job is back in the queue').toBe(1);
    expect(await locks.owner('laravel_unique_job:App\\Jobs\\Untranslatable-opaque')).toBe('php-owner');
  });
});

describe('a chain’s next link, pushed by the worker with the shapes', () => {
  it('carries the translated backoff(), retryUntil() and displayName() as Laravel 8.83 writes them', async () => {
    const next = shapedCommand(shapes, 'App\\Jobs\\ReserveProduct', RESERVE, { profile: '8' }).command;
    const first = buildJob({
      className: 'App\\Jobs\\First',
      properties: {},
      queueable: { chained: [Buffer.from(serialize(next)).toString('utf8')] },
    });
    await env.queue.pushRaw(buildPayload(first, { profile: '8' }).raw, QUEUE);
    const stop = await worker({ 'App\\Jobs\\First': async () => undefined }).run();
    expect(stop.status).toBe(0);
    const [raw] = await env.client.lrange('queues:default', 0, -1);
    expect(raw, 'the next link in Redis').toBeDefined();
    const envelope = decodePayload(raw!).envelope as Record<string, unknown>;
    const expected = laravelWritesReserve(Number(envelope.retryUntil) - 300);
    expect({ backoff: envelope.backoff, retryUntil: envelope.retryUntil, displayName: envelope.displayName }).toEqual({
      backoff: expected.backoff,
      retryUntil: expected.retryUntil,
      displayName: expected.displayName,
    });
    expect(
      env.events.filter((e) => e.event === 'warning'),
      'a notice of methods not run',
    ).toEqual([]);
  });
});

describe('a worker without shapes', () => {
  // 11.39 on: the payload names the lock (test/worker/locks checks the release against 12.67 and 13.26's own payloads).
  it.each([
    ['11.38.2', 1],
    ['11.39.0', 0],
    ['12.67.0', 0],
    ['13.26.1', 0],
  ] as const)('for an app on Laravel %s, says the uniqueId() notice %i time(s) at start', async (laravel, times) => {
    await worker({}, { shapes: undefined, laravel }).run();
    const notices = env.events.filter((e) => e.event === 'warning' && /before Laravel 11\.39/.test(e.reason ?? ''));
    expect(notices.length, `the "before Laravel 11.39" notices of a ${laravel} app: ${JSON.stringify(notices)}`).toBe(times);
  });

  it('says once at start that a uniqueId() method’s lock cannot be known before Laravel 11.39; a handler’s uniqueId still names it', async () => {
    await dispatched('App\\Jobs\\ReserveProduct', reserve, 'laravel_unique_job:App\\Jobs\\ReserveProductp-42');
    const handler = Object.assign(async () => undefined, {
      uniqueId: (job: { command: Record<string, any> }) => `p-${job.command.product.id}`,
    });
    const stop = await worker({ 'App\\Jobs\\ReserveProduct': handler }, { shapes: undefined }).run();
    expect(stop.status).toBe(0);
    expect(await locks.owner('laravel_unique_job:App\\Jobs\\ReserveProductp-42'), 'the lock after the job').toBeNull();
    expect(env.events.filter((e) => e.event === 'warning').map((e) => e.reason)).toEqual([
      expect.stringMatching(
        /^without class shapes \(--shapes\), the unique lock of a ShouldBeUnique job whose class defines uniqueId\(\) cannot be known before Laravel 11\.39/,
      ),
    ]);
  });
});
