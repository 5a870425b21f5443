/**
 * withoutOverlapping() and rateLimited() beside Laravel 8.83's own WithoutOverlapping and
 * RateLimited: Laravel dispatches the jobs (php-fixture-gen/guards-dispatch.php) and shows what
 * its middleware keeps in the cache; Node's Worker runs the same jobs with guarded handlers on
 * real Redis and must keep the same keys, values and TTLs, and honour what PHP left there.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Worker, rateLimited, withoutOverlapping, type HandlerJob } from '../../src/index.js';
import { QueueCache, RedisLock, rateLimitKeys } from '../../src/worker/index.js';
import { connectRedis } from '../../src/redis/index.js';
import type { ShapesFile } from '../../src/shapes/shape.js';
import { php } from '../helpers/processes.js';
import { REDIS_URL, rawClient, removePrefix } from '../helpers/redis.js';
import { workerSetup, type WorkerSetup } from '../helpers/worker.js';

let env: WorkerSetup;
beforeEach(() => {
  env = workerSetup('guards');
});
afterEach(() => env.cleanup());

const OVERLAP = 'App\\Jobs\\Bridge\\OverlapJob';
const LIMITED = 'App\\Jobs\\Bridge\\LimitedJob';

/** Runs guards-dispatch.php under this test's prefix; its JSON lines. */
async function laravel(kind: string, options: Record<string, unknown> = {}, extraEnv: Record<string, string> = {}): Promise<any[]> {
  const result = await php('guards-dispatch.php', [kind, JSON.stringify(options)], {
    ...process.env,
    REDIS_PREFIX: env.prefix,
    QUEUE_NAME: 'default',
    ...extraEnv,
  });
  if (result.status !== 0) throw new Error(`guards-dispatch.php ${kind} exited ${result.status}: ${result.stderr}`);
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Every key under the prefix (named without it) with its value and TTL, as the PHP probe prints them. */
async function cacheKeys(): Promise<Record<string, { value: string | null; ttl: number }>> {
  const raw = rawClient();
  try {
    const out: Record<string, { value: string | null; ttl: number }> = {};
    for (const key of (await raw.keys(`${env.prefix}*`)).sort()) {
      if ((await raw.type(key)) !== 'string') continue;
      out[key.slice(env.prefix.length)] = { value: await raw.get(key), ttl: await raw.ttl(key) };
    }
    return out;
  } finally {
    raw.disconnect();
  }
}

/** Keys with the owner (random) and TTL (counting down) told as Laravel's probe's would be compared. */
const comparable = (keys: Record<string, { value: string | null; ttl: number }>) =>
  Object.fromEntries(
    Object.entries(keys).map(([key, { value, ttl }]) => [
      key,
      { value: /^[A-Za-z0-9]{16}$/.test(value ?? '') ? 'OWNER(16)' : value, ttl: ttl > 0 ? 'TTL>0' : ttl },
    ]),
  );

describe('withoutOverlapping', () => {
  it('holds the lock WithoutOverlapping takes: the same key, an owner of 16 letters and digits, the same TTL; released after', async () => {
    const [fromPhp] = await laravel('probe-overlap', { key: 'k7', expireAfter: 30 });
    expect(fromPhp.ran).toBe(true);
    await laravel('overlap', { key: 'k7' });
    let inside: Awaited<ReturnType<typeof cacheKeys>> = {};
    const handler = withoutOverlapping(
      (job) => String(job.command.key),
      { expireAfter: 30 },
      async () => {
        inside = await cacheKeys();
      },
    );
    await env.worker({ [OVERLAP]: handler }, { once: true }).run();
    const lockOnly = Object.fromEntries(Object.entries(inside).filter(([key]) => key.startsWith('laravel_cache:')));
    expect(Object.keys(lockOnly)).toEqual([`laravel_cache:laravel-queue-overlap:${OVERLAP}:k7`]);
    expect(comparable(lockOnly)).toEqual(comparable(fromPhp.keys));
    expect(Object.values(lockOnly)[0]!.ttl).toBeGreaterThan(25);
    expect(Object.keys(await cacheKeys()).filter((key) => key.startsWith('laravel_cache:'))).toEqual([]);
    expect(env.events.map((e) => e.event)).toEqual(['processing', 'processed', 'stopping']);
  });

  it('a lock of no expireAfter never expires, as SETNX leaves it', async () => {
    await laravel('overlap', { key: 'forever' });
    let ttl: number | undefined;
    await env
      .worker(
        {
          [OVERLAP]: withoutOverlapping(
            'forever',
            async () => void (ttl = (await cacheKeys())[`laravel_cache:laravel-queue-overlap:${OVERLAP}:forever`]?.ttl),
          ),
        },
        { once: true },
      )
      .run();
    expect(ttl).toBe(-1);
  });

  it('a job that finds the lock held elsewhere is released after releaseAfter, its attempt used, and the lock left to its owner', async () => {
    const held = new RedisLock(env.cache, `laravel-queue-overlap:${OVERLAP}:busy`, 0, 'someoneElse12345');
    expect(await held.acquire()).toBe(true);
    const [dispatched] = await laravel('overlap', { key: 'busy', tries: 5 });
    let ran = false;
    const before = Math.floor(Date.now() / 1000);
    await env
      .worker(
        {
          [OVERLAP]: withoutOverlapping(
            (job) => String(job.command.key),
            { releaseAfter: 7 },
            async () => void (ran = true),
          ),
        },
        { once: true },
      )
      .run();
    expect(ran).toBe(false);
    expect(env.events.map((e) => e.event)).toEqual(['processing', 'released', 'stopping']);
    const raw = rawClient();
    const delayed = await raw.zrange(`${env.prefix}queues:default:delayed`, 0, -1, 'WITHSCORES');
    raw.disconnect();
    expect(JSON.parse(delayed[0]!)).toMatchObject({ uuid: dispatched.uuid, attempts: 1 });
    expect(Number(delayed[1])).toBeGreaterThanOrEqual(before + 7);
    expect(Number(delayed[1])).toBeLessThanOrEqual(before + 9);
    expect(await held.currentOwner()).toBe('someoneElse12345');
  });

  it('with dontRelease, a job that finds the lock held is deleted without running, as Laravel deletes it', async () => {
    await new RedisLock(env.cache, `laravel-queue-overlap:${OVERLAP}:busy`, 0, 'someoneElse12345').acquire();
    await laravel('overlap', { key: 'busy' });
    let ran = false;
    await env.worker({ [OVERLAP]: withoutOverlapping('busy', { dontRelease: true }, async () => void (ran = true)) }, { once: true }).run();
    expect(ran).toBe(false);
    expect(env.events.map((e) => e.event)).toEqual(['processing', 'processed', 'stopping']);
    expect(await env.queue.size()).toBe(0);
  });

  it('gives the lock up when the handler throws, and keeps the handler’s failed() hook', async () => {
    await laravel('overlap', { key: 'k1', tries: 1 });
    const failedWith: unknown[] = [];
    const inner = Object.assign(
      async () => {
        throw new Error('inside the lock');
      },
      { failed: async (_job: HandlerJob, error: unknown) => void failedWith.push((error as Error).message) },
    );
    const handler = withoutOverlapping('k1', inner);
    expect(handler.guards).toEqual(['withoutOverlapping']);
    await env.worker({ [OVERLAP]: handler }, { once: true }).run();
    expect(failedWith).toEqual(['inside the lock']);
    expect(Object.keys(await cacheKeys()).filter((key) => key.startsWith('laravel_cache:'))).toEqual([]);
  });
});

describe('withoutOverlapping with the stock skeleton’s two connections (values on `cache`, locks on `default`)', () => {
  const VALUES_DB = 1;
  afterEach(async () => {
    const raw = new Redis(`${REDIS_URL}/${VALUES_DB}`);
    await removePrefix(raw, env.prefix);
    raw.disconnect();
  });

  it('takes its lock where Laravel’s WithoutOverlapping takes it: on the lock connection, not with the cache’s values', async () => {
    const name = `laravel_cache:laravel-queue-overlap:${OVERLAP}:k9`;
    // Laravel's CacheManager with config/cache.php's redis store: connection cache (db 1), lock_connection default (db 0).
    const [fromPhp] = await laravel('probe-overlap', { key: 'k9', expireAfter: 30 }, { REDIS_CACHE_DB: String(VALUES_DB) });
    expect(Object.keys(fromPhp.keys), 'Laravel’s WithoutOverlapping lock on the default connection').toEqual([name]);
    await laravel('overlap', { key: 'k9' });
    const values = connectRedis({ url: `${REDIS_URL}/${VALUES_DB}`, prefix: env.prefix });
    const cache = new QueueCache(values, 'laravel_cache', ':', env.client);
    let inLocksDb: Awaited<ReturnType<typeof cacheKeys>> = {};
    let inValuesDb: string[] = [];
    const handler = withoutOverlapping('k9', { expireAfter: 30 }, async () => {
      inLocksDb = await cacheKeys();
      // KEYS takes no key prefix: this test's own, so other tests' keys in that database do not count.
      inValuesDb = await values.keys(`${env.prefix}*`);
    });
    try {
      await new Worker(
        env.queue,
        { [OVERLAP]: handler },
        { once: true, sleep: 0.05, memory: 0 },
        { failer: false, cache, log: (e) => env.events.push(e) },
      ).run();
    } finally {
      values.disconnect();
    }
    expect(env.events.map((e) => e.event)).toEqual(['processing', 'processed', 'stopping']);
    expect(
      Object.keys(inLocksDb).filter((key) => key.startsWith('laravel_cache:')),
      'the lock on the lock connection while the handler ran',
    ).toEqual([name]);
    expect(comparable({ [name]: inLocksDb[name]! }), 'owner and TTL as Laravel’s').toEqual(comparable({ [name]: fromPhp.keys[name] }));
    expect(inValuesDb, 'keys on the cache connection while the handler ran').toEqual([]);
    expect(
      Object.keys(await cacheKeys()).filter((key) => key.startsWith('laravel_cache:')),
      'the lock after',
    ).toEqual([]);
  });
});

describe('rateLimited', () => {
  it('counts under the key RateLimited uses: md5 of the limiter’s name and the limit’s key', () => {
    expect(rateLimitKeys('bridge-limit', { maxAttempts: 3, key: 'k7' })).toEqual([
      { key: createHash('md5').update('bridge-limitk7').digest('hex'), maxAttempts: 3, decayMinutes: 1 },
    ]);
    expect(rateLimitKeys('n', [{ maxAttempts: 1, key: 42 }, { maxAttempts: 2 }]).map((l) => l.key)).toEqual([
      createHash('md5').update('n42').digest('hex'),
      createHash('md5').update('n').digest('hex'),
    ]);
    expect(rateLimitKeys('n', null)).toEqual([]);
    expect(() => rateLimitKeys('n', { maxAttempts: 1, key: 1.5 })).toThrow(/1.5 is not a whole number/);
  });

  it('after two hits in PHP, runs one job and releases the next until the window ends plus 3 s, keys as Laravel keeps them', async () => {
    const [fromPhp] = await laravel('probe-limited', { key: 'k7', hits: 2 });
    expect(fromPhp.ran).toBe(2);
    const md5 = createHash('md5').update('bridge-limitk7').digest('hex');
    expect(Object.keys(fromPhp.keys)).toEqual([`laravel_cache:${md5}`, `laravel_cache:${md5}:timer`]);
    const timer = Number(fromPhp.keys[`laravel_cache:${md5}:timer`].value);
    await laravel('limited', { key: 'k7', count: 2, tries: 5 });
    const ran: number[] = [];
    const handler = rateLimited(
      'bridge-limit',
      (job) => ({ maxAttempts: 3, key: String(job.command.key) }),
      async (job) => void ran.push(Number(job.command.n)),
    );
    await env.worker({ [LIMITED]: handler }, { stopWhenEmpty: true }).run();
    expect(ran).toEqual([1]);
    expect(env.events.map((e) => e.event)).toEqual(['processing', 'processed', 'processing', 'released', 'stopping']);
    const keys = await cacheKeys();
    expect(keys[`laravel_cache:${md5}`]!.value).toBe('3');
    expect(keys[`laravel_cache:${md5}:timer`]!.value).toBe(String(timer));
    const raw = rawClient();
    const delayed = await raw.zrange(`${env.prefix}queues:default:delayed`, 0, -1, 'WITHSCORES');
    raw.disconnect();
    // availableIn + 3, from the timer PHP set.
    expect(Number(delayed[1])).toBeGreaterThanOrEqual(timer + 3 - 1);
    expect(Number(delayed[1])).toBeLessThanOrEqual(timer + 3 + 1);
  });

  it('Node’s hits open the window PHP then honours: after three in Node, PHP’s RateLimited does not run the job', async () => {
    await laravel('limited', { key: 'k9', count: 3 });
    await env
      .worker(
        {
          [LIMITED]: rateLimited(
            'bridge-limit',
            (job) => ({ maxAttempts: 3, key: String(job.command.key) }),
            async () => undefined,
          ),
        },
        { stopWhenEmpty: true },
      )
      .run();
    const [fromPhp] = await laravel('probe-limited', { key: 'k9', hits: 1 });
    expect(fromPhp.ran).toBe(0);
    const md5 = createHash('md5').update('bridge-limitk9').digest('hex');
    expect(fromPhp.keys[`laravel_cache:${md5}`]).toMatchObject({ value: '3' });
    expect(fromPhp.keys[`laravel_cache:${md5}:timer`].ttl).toBeGreaterThan(50);
  });

  it('with dontRelease, a job over the limit is deleted without running', async () => {
    await laravel('limited', { key: 'k3', count: 2 });
    const ran: number[] = [];
    await env
      .worker(
        {
          [LIMITED]: rateLimited(
            'bridge-limit',
            { maxAttempts: 1, key: 'k3' },
            { dontRelease: true },
            async (job) => void ran.push(Number(job.command.n)),
          ),
        },
        { stopWhenEmpty: true },
      )
      .run();
    expect(ran).toEqual([1]);
    expect(env.events.map((e) => e.event)).toEqual(['processing', 'processed', 'processing', 'processed', 'stopping']);
    expect(await env.queue.size()).toBe(0);
  });
});

describe('the log names job middleware PHP would run', () => {
  const shapes = (methods: string[], middlewareDefault?: string): ShapesFile => ({
    version: 1,
    laravel: '8.83.26',
    php: '8.2',
    classes: {
      [OVERLAP]: {
        name: OVERLAP,
        kind: 'job',
        parent: null,
        interfaces: ['Illuminate\\Contracts\\Queue\\ShouldQueue'],
        traits: [],
        serializer: 'SerializesModels',
        properties: [
          {
            name: 'middleware',
            visibility: 'public',
            class: OVERLAP,
            type: null,
            nullable: true,
            serialized: true,
            ...(middlewareDefault ? { default: middlewareDefault } : {}),
          },
        ],
        declared: {},
        methods,
      },
    },
  });

  const warnings = (worker: Worker) => worker.run().then(() => env.events.filter((e) => e.event === 'warning').map((e) => e.reason));

  it('once per class, from a middleware() method in the shapes', async () => {
    await laravel('overlap', { key: 'a', count: 2 });
    const worker = new Worker(
      env.queue,
      { [OVERLAP]: async () => undefined },
      { stopWhenEmpty: true, sleep: 0.05, memory: 0 },
      { failer: false, cache: env.cache, shapes: shapes(['middleware', 'failed']), log: (e) => env.events.push(e) },
    );
    expect(await warnings(worker)).toEqual([
      `${OVERLAP} has job middleware (its middleware() method) that runs in PHP only: Node does not apply it; wrap its Node handler in withoutOverlapping() or rateLimited() to share PHP’s WithoutOverlapping locks and RateLimited limits`,
    ]);
  });

  it('from middleware the payload carries (->through()), without shapes', async () => {
    await laravel('overlap', { key: 'a', through: true });
    const worker = new Worker(
      env.queue,
      { [OVERLAP]: async () => undefined },
      { once: true, sleep: 0.05, memory: 0 },
      { failer: false, cache: env.cache, log: (e) => env.events.push(e) },
    );
    expect(await warnings(worker)).toEqual([
      expect.stringMatching(
        /^App\\Jobs\\Bridge\\OverlapJob has job middleware \(in its payload: Illuminate\\Queue\\Middleware\\WithoutOverlapping\) that runs in PHP only/,
      ),
    ]);
  });

  it('names the guards a wrapped handler applies; an empty $middleware default says nothing', async () => {
    await laravel('overlap', { key: 'a' });
    const guarded = new Worker(
      env.queue,
      { [OVERLAP]: withoutOverlapping('a', async () => undefined) },
      { once: true, sleep: 0.05, memory: 0 },
      { failer: false, cache: env.cache, shapes: shapes(['middleware']), log: (e) => env.events.push(e) },
    );
    expect(await warnings(guarded)).toEqual([
      `${OVERLAP} has job middleware (its middleware() method) that runs in PHP only: Node does not apply it; its Node handler applies withoutOverlapping()`,
    ]);
    env.events.length = 0;
    await laravel('overlap', { key: 'b' });
    const plain = new Worker(
      env.queue,
      { [OVERLAP]: async () => undefined },
      { once: true, sleep: 0.05, memory: 0 },
      { failer: false, cache: env.cache, shapes: shapes([], 'a:0:{}'), log: (e) => env.events.push(e) },
    );
    expect(await warnings(plain)).toEqual([]);
  });
});
