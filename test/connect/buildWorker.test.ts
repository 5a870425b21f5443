/**
 * The one way a worker is built (src/connect/buildWorker.ts), which connect().worker() and
 * `lqb work` both call: the connection's queue with retry_after and block_for, the lock store
 * the app's cache store names, the failed-jobs store, the start line, and a close() that lets go
 * of every client it opened. Real Redis and SQLite; the APP_KEY check names the setting, never the key.
 */
import { RedisQueue } from '../../src/redis/index.js';
import { DatabaseQueue } from '../../src/database/index.js';
import { rateLimited } from '../../src/worker/middleware.js';
import type { WorkerEvent } from '../../src/worker/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appEncrypter } from '../../src/connect/appKey.js';
import { UNKNOWN_LARAVEL, buildWorker, openLockStore, type BuiltWorker } from '../../src/connect/buildWorker.js';
import { ConnectionSettingsError, resolveConnection, type ConnectionSettings } from '../../src/connect/settings.js';
import { databaseConfig, openDatabase } from '../../src/database/index.js';
import { DatabaseLockStore, RedisLockStore } from '../../src/worker/locks/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/FailedJobProvider.js';
import { REDIS_URL, prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { nodeRecordView } from '../../src/record/index.js';

let dir: string;
let settings: ConnectionSettings;
let built: BuiltWorker | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'lqb-build-'));
  settings = resolveConnection({ redis: REDIS_URL, prefix: uniquePrefix('build'), failedDb: `sqlite://${join(dir, 'app.sqlite')}` });
});

afterEach(async () => {
  await built?.close();
  built = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const handlers = { 'App\\Jobs\\X': async () => undefined };

describe('buildWorker', () => {
  it("reads the connection's own queue unless told otherwise, with retry_after and block_for as given", () => {
    built = buildWorker({
      settings,
      handlers,
      options: {},
      retryAfter: 30,
      blockFor: null,
      bookkeeping: { cacheStore: 'redis' },
      failer: false,
    });
    const queue = built.worker.queue;
    expect(queue.defaultQueue, "the queue a chained job naming none goes to: the connection's").toBe('default');
    expect(queue.retryAfter, 'retry_after').toBe(30);
    expect(built.worker.startLine(), 'the start line: the queue read, and no Laravel version known').toContain(
      `Laravel ${UNKNOWN_LARAVEL}, queues default,`,
    );
  });

  it('names the app’s Laravel in the start line: the one given, else the shapes’', () => {
    built = buildWorker({ settings, handlers, options: {}, bookkeeping: { cacheStore: 'redis' }, failer: false, laravel: '11.4.0' });
    expect(built.worker.startLine(), 'the version given').toMatch(/Laravel 11\.4\.0,/);
  });

  it('fails jobs into the app’s failed_jobs unless given a store, false, or onFailed', async () => {
    const failedJobs = DatabaseUuidFailedJobProvider.fromUrl(settings.failedDb, settings.failedTable);
    let opened = 0;
    const defaultFailer = () => {
      opened++;
      return failedJobs;
    };
    try {
      built = buildWorker({ settings, handlers, options: {}, bookkeeping: { cacheStore: 'redis' }, defaultFailer });
      expect(opened, 'the app’s failed_jobs taken for a worker given nothing').toBe(1);
      await built.close();
      built = buildWorker({
        settings,
        handlers,
        options: {},
        bookkeeping: { cacheStore: 'redis' },
        defaultFailer,
        onFailed: () => undefined,
      });
      expect(opened, 'not taken when onFailed is the record').toBe(1);
    } finally {
      await failedJobs.close();
    }
  });

  it('close() lets go of the Redis clients it opened', async () => {
    built = buildWorker({ settings, handlers, options: {}, bookkeeping: { cacheStore: 'redis' }, failer: false });
    const client = (built.worker.queue as RedisQueue).client;
    // ioredis says `end` once a client it was told to disconnect has closed for good (and reconnects no more).
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    await built.close();
    built = undefined;
    await ended;
    expect(client.status, 'the queue client after close()').toBe('end');
  });
});

describe('buildWorker: the worker’s record (src/record/)', () => {
  const pushOne = async (queue: { pushRaw(raw: string, name?: string): Promise<unknown> }) =>
    queue.pushRaw(buildPayload(buildJob({ className: 'App\\Jobs\\X', properties: {}, serializesModels: false })).raw);

  it('kept beside a Redis queue, under the app’s prefix, unless record: false', async () => {
    const raw = rawClient();
    try {
      for (const record of [undefined, false] as const) {
        const prefix = uniquePrefix('build-record');
        const own = { ...settings, prefix };
        // The job reads the worker's heartbeat while it runs: the classes its handlers are for, as the dashboard shows them.
        const classesSaid: unknown[] = [];
        const reader = prefixedClient(prefix);
        built = buildWorker({
          settings: own,
          handlers: {
            'App\\Jobs\\X': async () => {
              const deadline = Date.now() + 5_000;
              while (record !== false && classesSaid.length === 0 && Date.now() < deadline) {
                const [beat] = await nodeRecordView({ redis: reader }).workers();
                if (beat) classesSaid.push(beat.classes);
                else await new Promise((resolve) => setTimeout(resolve, 20));
              }
            },
            'App\\Listeners\\Y@handle': async () => undefined,
          },
          options: { stopWhenEmpty: true, sleep: 0, memory: 0 },
          bookkeeping: { cacheStore: 'redis' },
          failer: false,
          ...(record === false ? { record } : {}),
        });
        await pushOne(built.worker.queue);
        expect((await built.worker.run()).reason).toBe('empty');
        const keys = (await raw.keys(`${prefix}lqb:*`)).map((key) => key.slice(prefix.length)).sort();
        expect(keys, `the record’s keys with record: ${String(record)}`).toEqual(
          record === false ? [] : ['lqb:completed', expect.stringMatching(/^lqb:minute:\d+$/)],
        );
        expect(classesSaid, `the classes the heartbeat said with record: ${String(record)}`).toEqual(
          record === false ? [] : [['App\\Jobs\\X', 'App\\Listeners\\Y']],
        );
        reader.disconnect();
        await removePrefix(raw, prefix);
        await built.close();
        built = undefined;
      }
    } finally {
      raw.disconnect();
    }
  });

  it('kept in the jobs table’s database on the database connection', async () => {
    const db = `sqlite://${join(dir, 'app.sqlite')}`;
    const opened = openDatabase(databaseConfig(db));
    await opened.query(
      'create table "jobs" ("id" integer primary key autoincrement not null, "queue" varchar not null, "payload" text not null, "attempts" integer not null, "reserved_at" integer, "available_at" integer not null, "created_at" integer not null)',
    );
    await opened.close();
    built = buildWorker({
      settings: resolveConnection({
        connection: 'database',
        queueDb: db,
        failedDb: db,
        redis: REDIS_URL,
        prefix: uniquePrefix('build-record'),
      }),
      handlers,
      options: { stopWhenEmpty: true, sleep: 0, memory: 0 },
      bookkeeping: { cacheStore: 'redis' },
      failer: false,
    });
    await pushOne(built.worker.queue);
    expect((await built.worker.run()).reason).toBe('empty');
    const view = nodeRecordView({ database: (built.worker.queue as DatabaseQueue).db });
    expect(
      (await view.recent(0, 10)).jobs.map((job) => [job.className, job.queue, job.connection]),
      'the latest jobs, in lqb_completed',
    ).toEqual([['App\\Jobs\\X', 'default', 'database']]);
  });
});

describe('openLockStore: where unique locks live', () => {
  it('the redis store on the lock connection, under the cache prefix', () => {
    const client = prefixedClient(settings.prefix);
    try {
      const store = openLockStore(settings, { cacheStore: 'redis' }, client);
      expect(store, 'the redis cache store').toBeInstanceOf(RedisLockStore);
      expect(store.storeName, 'its name in config/cache.php').toBe('redis');
    } finally {
      client.disconnect();
    }
  });

  it('the database store in the app’s database (the failed-jobs one) unless another is named', async () => {
    const client = prefixedClient(settings.prefix);
    const app = openLockStore(settings, { cacheStore: 'database' }, client) as DatabaseLockStore;
    const other = openLockStore(
      settings,
      { cacheStore: 'database', lockDb: `sqlite://${join(dir, 'locks.sqlite')}` },
      client,
    ) as DatabaseLockStore;
    try {
      expect(app, 'the database cache store').toBeInstanceOf(DatabaseLockStore);
      expect(app.config, 'its database by default').toEqual(databaseConfig(settings.failedDb));
      expect(other.config, 'the database named').toEqual(databaseConfig(`sqlite://${join(dir, 'locks.sqlite')}`));
    } finally {
      await app.close();
      await other.close();
      client.disconnect();
    }
  });
});

describe('buildWorker on the database connection', () => {
  it('opens no Redis with the database store: the jobs table, the cache table; rateLimited() said at start; a missing cache table named', async () => {
    const db = `sqlite://${join(dir, 'app.sqlite')}`;
    const onDb = resolveConnection({ connection: 'database', queueDb: db, failedDb: db, jobsTable: 'lqb_jobs' });
    expect(onDb.redisNamed, 'no Redis given or named').toBe(false);
    const events: WorkerEvent[] = [];
    built = buildWorker({
      settings: onDb,
      handlers: { 'App\\Jobs\\Limited': rateLimited('api', { maxAttempts: 1 }, async () => undefined) },
      options: { stopWhenEmpty: true, sleep: 0, memory: 0 },
      bookkeeping: { cacheStore: 'database' },
      failer: false,
      log: (event) => void events.push(event),
    });
    const worker = built.worker;
    expect(worker.queue, 'the queue: the jobs table').toBeInstanceOf(DatabaseQueue);
    expect(worker.queue.clients ?? [], 'no client to watch: no Redis').toEqual([]);
    expect(worker.startLine(), 'the start line names the table').toContain(`database lqb_jobs in ${db}`);
    await expect(worker.run(), 'a worker whose cache table is not there').rejects.toThrow(
      /^the worker's cache cannot be read, in the database cache store's table .*no such table: cache/,
    );
    expect(
      events.filter((event) => event.event === 'warning' && /rateLimited\(\)/.test(String(event.reason))).length,
      `the line about rateLimited() without Redis, among ${JSON.stringify(events)}`,
    ).toBe(1);
  });
});

describe('appEncrypter: the one check of APP_KEY and the cipher', () => {
  const key = `base64:${Buffer.alloc(32, 7).toString('base64')}`;
  const names = { key: 'APP_KEY', cipher: 'APP_CIPHER' };

  it('an Encrypter for a key, none without one', () => {
    expect(appEncrypter({ appKey: key, cipher: 'AES-256-CBC' }, names), 'with a key').toBeDefined();
    expect(appEncrypter({ cipher: 'AES-256-CBC' }, names), 'without a key').toBeUndefined();
  });

  it('refuses a cipher Laravel does not have, and a key of the wrong length, naming the setting and never the key', () => {
    expect(() => appEncrypter({ cipher: 'AES-512-XTS' }, { key: 'key', cipher: 'cipher' }), 'a cipher').toThrow(
      /^cipher: unsupported cipher "AES-512-XTS"/,
    );
    const short = `base64:${Buffer.alloc(16, 7).toString('base64')}`;
    let error: unknown;
    try {
      appEncrypter({ appKey: short, cipher: 'AES-256-CBC' }, names);
    } catch (caught) {
      error = caught;
    }
    expect(error, 'a key of 16 bytes for AES-256-CBC').toBeInstanceOf(ConnectionSettingsError);
    expect((error as Error).message, 'the refusal').toMatch(/^APP_KEY: AES-256-CBC needs a 32-byte key/);
    expect((error as Error).message.includes(short.slice(7)), 'the key in the message').toBe(false);
  });
});
