/**
 * LaravelQueue.dispatch on real Redis: the envelope's tries, backoff and timeout, a delay in
 * seconds scored in the delayed set, a built command; with the class shapes `lqb shapes` reads
 * from php-fixture-gen/shapes-app, a ShouldBeUnique job's lock taken as PendingDispatch takes it
 * (in Redis, or in a database store's table on SQLite), the notice of PHP methods Node cannot
 * run, and one Laravel layout for a shaped payload and its lock.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { openDatabase } from '../../src/database/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type LaravelQueue } from '../../src/connect/index.js';
import { buildJob, decodePayload } from '../../src/laravel/index.js';
import { toJS } from '../../src/php/index.js';
import type { ShapesFile } from '../../src/shapes/shape.js';
import { root } from '../helpers/php.js';
import { lqb, scratch, type Scratch } from '../helpers/processes.js';
import { REDIS_URL, rawClient, removePrefix, uniquePrefix, dropQueue } from '../helpers/redis.js';
import { uniqueRecords } from '../helpers/unique-fixtures.js';

const prefix = uniquePrefix('connect-dispatch');
const s: Scratch = scratch(prefix, 'q');
let queue: LaravelQueue;
let shapesFile: string;

beforeAll(async () => {
  shapesFile = join(s.dir, 'lqb-shapes.json');
  const made = await lqb(['shapes', `--app=${join(root, 'php-fixture-gen/shapes-app')}`, `--out=${shapesFile}`], s.env);
  expect(made.status, made.stderr).toBe(0);
  queue = await connect({ redis: REDIS_URL, prefix, failedDb: join(s.dir, 'failed.sqlite') });
});

afterAll(() => dropQueue(queue, prefix, s));

describe('dispatch', () => {
  it('writes tries, backoff and timeout into the envelope; a delay in seconds is scored in the delayed set', async () => {
    const before = Math.floor(Date.now() / 1000);
    const pushed = await queue.dispatch('App\\Jobs\\Later', { n: 1 }, { queue: 'q', delay: 30, tries: 3, backoff: [1, 5], timeout: 20 });
    const raw = rawClient();
    const [member, score] = await raw.zrange(`${prefix}queues:q:delayed`, 0, -1, 'WITHSCORES');
    raw.disconnect();
    expect(score !== undefined && Number(score) - before, 'the job is not scored 30 s from now').toBeGreaterThanOrEqual(30);
    const decoded = decodePayload(member!);
    expect(decoded.envelope, 'the envelope does not carry what dispatch was given').toMatchObject({
      uuid: pushed.uuid,
      id: pushed.id,
      maxTries: 3,
      backoff: '1,5',
      timeout: 20,
    });
    expect(await queue.size('q'), 'size() does not count the delayed job').toBe(1);
  });

  it('refuses, naming it, what Laravel’s worker would misread; an empty queue name is the connection’s own, as in Laravel', async () => {
    const refused = async (what: string, props: unknown, options: object) => {
      const error = await queue.dispatch('App\\Jobs\\X', props as Record<string, unknown>, options as never).then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
      expect(error, `${what} was pushed`).toBeInstanceOf(TypeError);
      return error!.message;
    };
    expect(await refused('tries: -1', {}, { tries: -1 })).toBe('dispatch: tries must be a whole number, 0 (no limit) or more, not -1');
    expect(await refused('tries: 1.5', {}, { tries: 1.5 })).toMatch(/^dispatch: tries must be a whole number/);
    expect(await refused('timeout: "5"', {}, { timeout: '5' })).toMatch(/^dispatch: timeout must be whole seconds/);
    expect(await refused('backoff: [-1]', {}, { backoff: [10, -1] })).toMatch(/^dispatch: backoff must be seconds/);
    expect(await refused('delays (for delay)', {}, { delays: 5 })).toMatch(
      /^dispatch: unknown option "delays"; the options are queue, delay,/,
    );
    expect(await refused('props as a list', [1, 2], {})).toBe("dispatch: props must be an object of the command's properties, not a list");
    await expect(queue.dispatch('', {}), 'a job of class "" was pushed').rejects.toThrow(/^dispatch: the job class must be named/);
    const looped: Record<string, unknown> = {};
    looped.self = { back: looped };
    await expect(
      queue.dispatch('App\\Jobs\\X', { tree: looped }),
      'a cycle of plain objects was not refused with its path',
    ).rejects.toThrow(/at \$\.tree/);

    const unlimited = await queue.dispatch('App\\Jobs\\X', {}, { queue: '', tries: 0 });
    expect(unlimited.queue, 'queue: "" did not go to the connection’s own queue').toBe('default');
    const raw = rawClient();
    const [payload] = await raw.lrange(`${prefix}queues:default`, -1, -1);
    expect(await raw.exists(`${prefix}queues:`), 'queue: "" made a key named queues:').toBe(0);
    expect(await raw.llen(`${prefix}queues:default`), 'a refused dispatch pushed something').toBe(1);
    await raw.del(`${prefix}queues:default`);
    raw.disconnect();
    expect(decodePayload(payload!).envelope, 'tries: 0 (no limit) is not maxTries 0').toMatchObject({ uuid: unlimited.uuid, maxTries: 0 });
  });

  it('takes a command built with buildJob, onto the connection’s default queue', async () => {
    const command = buildJob({ className: 'App\\Jobs\\Built', properties: { id: 7 } });
    const pushed = await queue.dispatch(command);
    expect(pushed.queue, 'a built command went elsewhere than the default queue').toBe('default');
    expect(await queue.size(), 'the built command is not in the default queue').toBe(1);
    // Refused when compiled too; here, JavaScript's way in, at run time.
    // @ts-expect-error a built command carries its own properties
    await expect(queue.dispatch(command, { id: 8 }), 'props beside a built command were taken').rejects.toThrow(/built command/);
  });

  it('with shapes, a ShouldBeUnique job takes its lock: a duplicate is not pushed and says which lock is held', async () => {
    const first = await queue.dispatch('App\\Jobs\\ImportFeed', { feed: 'news' }, { queue: 'unique', shapes: shapesFile });
    expect(first.uuid, 'the first dispatch was not pushed').toEqual(expect.any(String));
    const second = await queue.dispatch('App\\Jobs\\ImportFeed', { feed: 'news' }, { queue: 'unique', shapes: shapesFile });
    expect(second, 'the duplicate was not refused').toEqual({
      uuid: null,
      id: null,
      queue: 'unique',
      duplicate: true,
      lockKey: 'laravel_unique_job:App\\Jobs\\ImportFeed',
    });
    expect(await queue.size('unique'), 'the duplicate was pushed').toBe(1);
  });
});

describe('dispatch options the CLI maps its flags onto', () => {
  it('onNotRun hears the PHP methods whose results the payload goes without, instead of the logger', async () => {
    const heard: unknown[][] = [];
    const warned: unknown[] = [];
    const logged = await connect({
      redis: REDIS_URL,
      prefix,
      failedDb: join(s.dir, 'failed.sqlite'),
      logger: { warn: (...args) => warned.push(args), error: () => undefined, info: () => undefined, debug: () => undefined },
    });
    try {
      const pushed = await logged.dispatch(
        'App\\Jobs\\RetryLater',
        { n: 1 },
        { queue: 'not-run', shapes: shapesFile, onNotRun: (...args) => heard.push(args) },
      );
      expect(pushed.uuid, 'the job was not pushed').toEqual(expect.any(String));
      expect(heard, 'onNotRun was not told of backoff() and retryUntil()').toEqual([
        [
          'App\\Jobs\\RetryLater',
          ['backoff()', 'retryUntil()'],
          'App\\Jobs\\RetryLater defines backoff() and retryUntil(), PHP that Node cannot run: the payload goes without their results',
        ],
      ]);
      expect(warned, 'the logger warned although onNotRun was given').toEqual([]);
      await logged.dispatch('App\\Jobs\\RetryLater', { n: 2 }, { queue: 'not-run', shapes: shapesFile });
      expect(
        warned.map((args) => (args as unknown[])[1]),
        'without onNotRun the logger does not warn',
      ).toEqual([expect.stringMatching(/^App\\Jobs\\RetryLater defines backoff\(\) and retryUntil\(\)/)]);
    } finally {
      await logged.close();
    }
  });

  it('a stock Laravel 8 .env (CACHE_DRIVER=file): connect({ env }) connects and dispatches; only a unique job’s lock is refused, naming the store and the .env', async () => {
    const url = new URL(REDIS_URL);
    const env = join(s.dir, 'file-cache.env');
    writeFileSync(
      env,
      `APP_NAME=Laravel\nCACHE_DRIVER=file\nQUEUE_CONNECTION=redis\nREDIS_HOST=${url.hostname}\nREDIS_PASSWORD=null\nREDIS_PORT=${url.port || 6379}\n`,
    );
    const app = await connect({ env, prefix, failedDb: join(s.dir, 'failed.sqlite') });
    try {
      const plain = await app.dispatch('App\\Jobs\\RetryLater', { n: 1 }, { queue: 'file-cache', shapes: shapesFile });
      expect(plain.uuid, 'a job that is not unique was not pushed').toEqual(expect.any(String));
      await expect(
        app.dispatch('App\\Jobs\\ImportFeed', { feed: 'file' }, { queue: 'file-cache', shapes: shapesFile }),
        'the unique job’s dispatch',
      ).rejects.toThrow(`the app's cache store is "file" (CACHE_DRIVER in ${env}), whose locks Node cannot reach`);
      const events: { event: string; reason?: string }[] = [];
      await app.worker({}, { queues: ['file-cache-empty'], once: true, sleep: 0, log: (event) => void events.push(event) }).run();
      expect(
        events.filter((e) => e.event === 'warning').map((e) => e.reason),
        'the worker’s warnings at start',
      ).toContainEqual(expect.stringMatching(/cache store is "file" .*this worker releases no unique job's lock$/));
    } finally {
      await app.close();
    }
  });

  it('lockDb and lockTable: a database store keeps ShouldBeUnique locks in that table of that database', async () => {
    const lockDb = join(s.dir, 'locks.sqlite');
    const db = openDatabase({ dialect: 'sqlite', filename: lockDb });
    // Laravel's cache_locks migration, under another name, as its SQLite grammar writes it.
    await db.query(
      'create table "app_locks" ("key" varchar not null, "owner" varchar not null, "expiration" integer not null, primary key ("key"))',
    );
    const locked = await connect({
      redis: REDIS_URL,
      prefix,
      failedDb: join(s.dir, 'failed.sqlite'),
      cacheStore: 'database',
      lockDb,
      lockTable: 'app_locks',
    });
    try {
      const first = await locked.dispatch('App\\Jobs\\ImportFeed', { feed: 'db' }, { queue: 'db-unique', shapes: shapesFile });
      expect(first.uuid, 'the first dispatch was not pushed').toEqual(expect.any(String));
      const second = await locked.dispatch('App\\Jobs\\ImportFeed', { feed: 'db' }, { queue: 'db-unique', shapes: shapesFile });
      expect(second.duplicate, 'the duplicate was not refused by the database lock').toBe(true);
      // DatabaseStore puts the cache prefix straight before the key, no colon between.
      const { rows } = await db.query<{ key: string; owner: string }>('select "key", "owner" from "app_locks"');
      expect(rows, 'the lock row is not in app_locks of lockDb').toEqual([
        { key: 'laravel_cachelaravel_unique_job:App\\Jobs\\ImportFeed', owner: expect.stringMatching(/^[A-Za-z0-9]{16}$/) },
      ]);
      expect(await locked.size('db-unique'), 'the duplicate was pushed').toBe(1);
    } finally {
      await locked.close();
      await db.close();
    }
  });

  it('a shaped payload and its lock take one layout: laravel, else the shapes’ version, else the connection’s', async () => {
    // Shapes that say no Laravel version: the connection's (12 here) is the payload's layout too.
    const unversioned = join(s.dir, 'unversioned-shapes.json');
    writeFileSync(unversioned, JSON.stringify({ ...(JSON.parse(readFileSync(shapesFile, 'utf8')) as ShapesFile), laravel: null }));
    const twelve = await connect({ redis: REDIS_URL, prefix, failedDb: join(s.dir, 'failed.sqlite'), laravel: '12' });
    try {
      await twelve.dispatch('App\\Jobs\\ShipOrder', { orderId: 1, secret: 's' }, { queue: 'layout', shapes: unversioned });
      await twelve.dispatch('App\\Jobs\\ShipOrder', { orderId: 2, secret: 's' }, { queue: 'layout', shapes: unversioned, laravel: '8' });
      const raw = rawClient();
      const payloads = (await raw.lrange(`${prefix}queues:layout`, 0, -1)).map((p) => JSON.parse(p) as Record<string, unknown>);
      raw.disconnect();
      expect(
        payloads.map((p) => 'createdAt' in p),
        'the envelopes are not 12’s (createdAt) then 8’s',
      ).toEqual([true, false]);
    } finally {
      await twelve.close();
    }
  });
});

describe('unique payloads as Laravel 12.67 and 13.26’s own dispatch() writes them (fixtures/laravel/unique-12-13.jsonl)', () => {
  const records = uniqueRecords();
  const SHOULD_BE_UNIQUE = 'Illuminate\\Contracts\\Queue\\ShouldBeUnique';
  const UNTIL_PROCESSING = 'Illuminate\\Contracts\\Queue\\ShouldBeUniqueUntilProcessing';
  const uniquePrefixOf = uniquePrefix('unique-1213');

  /**
   * The fixture classes (tools/laravel-live/app/Jobs) as `lqb shapes` describes a class: own
   * properties, InteractsWithQueue's $job and the version's Queueable properties in that order,
   * under SerializesModels, with the uniqueFor each declares.
   */
  const shapesFor = (laravel: string): ShapesFile => {
    const untyped = (name: string, serializedDefault: string) => ({
      name,
      visibility: 'public' as const,
      class: 'X',
      type: null,
      nullable: true,
      serialized: true,
      default: serializedDefault,
    });
    const queueable = [
      untyped('job', 'N;'),
      untyped('connection', 'N;'),
      untyped('queue', 'N;'),
      untyped('messageGroup', 'N;'),
      untyped('deduplicator', 'N;'),
      ...(laravel.startsWith('13.') ? [untyped('debounceOwner', 's:0:"";'), untyped('uniqueLockOwner', 's:0:"";')] : []),
      untyped('delay', 'N;'),
      untyped('afterCommit', 'N;'),
      untyped('middleware', 'a:0:{}'),
      untyped('chained', 'a:0:{}'),
      untyped('chainConnection', 'N;'),
      untyped('chainQueue', 'N;'),
      untyped('chainCatchCallbacks', 'N;'),
    ];
    const own = (name: string, type: string) => ({
      name,
      visibility: 'public' as const,
      class: 'X',
      type,
      nullable: false,
      serialized: true,
      promoted: true as const,
    });
    const job = (
      name: string,
      props: ReturnType<typeof own>[],
      interfaces: string[],
      uniqueFor: number | undefined,
      methods: string[],
    ) => ({
      name,
      kind: 'job' as const,
      parent: null,
      interfaces: ['Illuminate\\Contracts\\Queue\\ShouldQueue', ...interfaces],
      traits: [],
      serializer: 'SerializesModels' as const,
      properties: [...props, ...(uniqueFor !== undefined ? [untyped('uniqueFor', `i:${uniqueFor};`)] : []), ...queueable].map((p) => ({
        ...p,
        class: name,
      })),
      declared: uniqueFor !== undefined ? { uniqueFor } : {},
      methods,
      constructorParams: props.map((p) => ({ name: p.name })),
    });
    const classes = [
      job('App\\Jobs\\UniqueJob', [own('productId', 'int'), own('label', 'string')], [SHOULD_BE_UNIQUE], 3600, ['uniqueId']),
      job('App\\Jobs\\UniquePropJob', [own('uniqueId', 'string'), own('orderId', 'int')], [SHOULD_BE_UNIQUE], undefined, []),
      job('App\\Jobs\\UntilProcessingJob', [own('productId', 'int'), own('label', 'string')], [SHOULD_BE_UNIQUE, UNTIL_PROCESSING], 3600, [
        'uniqueId',
      ]),
      job('App\\Jobs\\UniqueShortJob', [own('productId', 'int')], [SHOULD_BE_UNIQUE], 30, ['uniqueId']),
      job('App\\Jobs\\UniqueNamedJob', [own('uniqueId', 'string')], [SHOULD_BE_UNIQUE], 3600, ['displayName']),
    ];
    return { version: 1, laravel, php: '8.2.0', classes: Object.fromEntries(classes.map((c) => [c.name, c])) };
  };

  /** uuid, id, createdAt and the lock's owner are Laravel's random values: masked on both sides. */
  const masked = (payload: string, owner: string) =>
    payload
      .replace(/"uuid":"[0-9a-f-]{36}"/, '"uuid":"UUID"')
      .replace(/"id":"[A-Za-z0-9]{32}"/, '"id":"ID"')
      .replace(/"createdAt":\d+/, '"createdAt":0')
      .replaceAll(owner, 'OWNER');

  let app: string;
  let queue13: LaravelQueue | undefined;
  beforeAll(() => {
    app = join(s.dir, 'live-bridge');
    mkdirSync(join(app, 'config'), { recursive: true });
    const url = new URL(REDIS_URL);
    // The stock .env and config/cache.php's prefix line (skeleton 12.2+): `{slug}-cache-`, values on db 1, locks on db 0.
    writeFileSync(
      join(app, '.env'),
      `APP_NAME="Live Bridge"\nCACHE_STORE=redis\nREDIS_HOST=${url.hostname}\nREDIS_PORT=${url.port || 6379}\nREDIS_PASSWORD=null\n`,
    );
    writeFileSync(
      join(app, 'config/cache.php'),
      "<?php\nreturn ['default' => env('CACHE_STORE', 'database'), 'prefix' => env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel')).'-cache-')];\n",
    );
  });
  afterAll(async () => {
    await queue13?.close();
    for (const db of [0, 1]) {
      const raw = new Redis(`${REDIS_URL}/${db}`);
      await removePrefix(raw, uniquePrefixOf);
      raw.disconnect();
    }
  });

  /** Where dispatch took the lock (the key in the lock database, its prefix Laravel's) and the key its payload's hidden context names; the lock and the job are removed. */
  const lockTaken = async (pushedQueue: string) => {
    const locks = new Redis(`${REDIS_URL}/0`);
    try {
      const [key] = await locks.keys(`${uniquePrefixOf}*laravel_unique_job:*`);
      const payload = JSON.parse((await locks.lpop(`${uniquePrefixOf}queues:${pushedQueue}`))!) as {
        'illuminate:log:context'?: { hidden: Record<string, string> };
      };
      if (key) await locks.del(key);
      return {
        key: key?.replace(uniquePrefixOf, 'live-bridge-database-'),
        context: payload['illuminate:log:context']?.hidden.laravel_unique_job_key,
      };
    } finally {
      locks.disconnect();
    }
  };

  for (const record of records.filter((r) => r.kind === 'unique-named')) {
    it(`${record.laravel} unique-named: a displayName() class, its name given, takes the lock under the xxh128 key Laravel took`, async () => {
      queue13 ??= await connect({ env: join(app, '.env'), prefix: uniquePrefixOf, failedDb: join(s.dir, 'failed.sqlite') });
      const pushed = await queue13.dispatch(
        record.class,
        { uniqueId: 'sku-7' },
        { shapes: shapesFor(record.laravel), laravel: record.laravel, displayName: 'Reindex product' },
      );
      expect(pushed.uuid, `${record.class} was not pushed: ${JSON.stringify(pushed)}`).toEqual(expect.any(String));
      const laravelContext = (JSON.parse(record.payload) as { 'illuminate:log:context': { hidden: Record<string, string> } })[
        'illuminate:log:context'
      ].hidden.laravel_unique_job_key;
      expect(await lockTaken(pushed.queue), `${record.class}'s lock as ${record.laravel} takes it`).toEqual({
        key: record.lock!.key,
        context: laravelContext,
      });
    });
  }

  it('shapes read from an 8.83 app, dispatched as 12.67: the lock is named as 12.67 names it, as the payload is written', async () => {
    const record = records.find((r) => r.laravel.startsWith('12.') && r.kind === 'unique')!;
    queue13 ??= await connect({ env: join(app, '.env'), prefix: uniquePrefixOf, failedDb: join(s.dir, 'failed.sqlite') });
    const props = Object.fromEntries(
      Object.entries(toJS(decodePayload(record.payload).command!) as Record<string, unknown>).filter(
        ([name]) => name !== 'uniqueLockOwner',
      ),
    );
    const pushed = await queue13.dispatch(record.class, props, {
      shapes: { ...shapesFor(record.laravel), laravel: '8.83.27' },
      laravel: record.laravel,
      uniqueId: '42',
    });
    const laravelContext = (JSON.parse(record.payload) as { 'illuminate:log:context': { hidden: Record<string, string> } })[
      'illuminate:log:context'
    ].hidden.laravel_unique_job_key;
    expect(await lockTaken(pushed.queue), `${record.class}'s lock as ${record.laravel} takes it`).toEqual({
      key: record.lock!.key,
      context: laravelContext,
    });
  });

  const writable = records.filter((r) => r.lock !== null && r.kind !== 'unique-named');
  for (const record of writable) {
    it(`${record.laravel} ${record.kind}: the payload byte for byte (masked), its lock in the lock database with the payload's owner and the TTL`, async () => {
      queue13 ??= await connect({ env: join(app, '.env'), prefix: uniquePrefixOf, failedDb: join(s.dir, 'failed.sqlite') });
      const uniqueId = record.kind === 'unique-prop' ? {} : { uniqueId: '42' };
      // The values Laravel's job held, read from its payload; the owner is the lock's, not a value given.
      const props = Object.fromEntries(
        Object.entries(toJS(decodePayload(record.payload).command!) as Record<string, unknown>).filter(
          ([name]) => name !== 'uniqueLockOwner',
        ),
      );
      const pushed = await queue13.dispatch(record.class, props, {
        shapes: shapesFor(record.laravel),
        laravel: record.laravel,
        ...uniqueId,
      });
      expect(pushed.uuid, `${record.class} was not pushed: ${JSON.stringify(pushed)}`).toEqual(expect.any(String));
      const [locks, values] = [new Redis(`${REDIS_URL}/0`), new Redis(`${REDIS_URL}/1`)];
      try {
        const key = record.lock!.key.replace(/^live-bridge-database-/, uniquePrefixOf);
        const [owner, ttl, inValues] = [await locks.get(key), await locks.ttl(key), await values.exists(key)];
        const payload = (await locks.lpop(`${uniquePrefixOf}queues:default`))!;
        await locks.del(key);
        expect(
          { owner: /^[A-Za-z0-9]{16}$/.test(owner ?? ''), inValues },
          `the lock ${key}: in database ${record.lock!.db}, not with the cache’s values`,
        ).toEqual({ owner: true, inValues: 0 });
        expect(record.lock!.ttl === -1 ? ttl : Math.abs(ttl - record.lock!.ttl) <= 5, 'the lock’s TTL, as Laravel’s').toBe(
          record.lock!.ttl === -1 ? -1 : true,
        );
        expect(masked(payload, owner!), `${record.class}'s payload as ${record.laravel} writes it`).toBe(
          masked(record.payload, record.lock!.value),
        );
      } finally {
        locks.disconnect();
        values.disconnect();
      }
    });
  }
});
