/**
 * What a payload and the shapes say of a running job's unique lock (src/worker/locks/uniqueness.ts),
 * without Laravel running: the uniqueId as PHP concatenates it, the shapes, the hidden context
 * (11.39+) and owner (13.24+); and what Laravel 12.67 and 13.26 write, run by a Worker on real Redis.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildPayload, decodePayload } from '../../../src/laravel/index.js';
import { PhpObject, serialize } from '../../../src/php/index.js';
import type { ShapesFile } from '../../../src/shapes/shape.js';
import type { RedisClient } from '../../../src/redis/index.js';
import {
  RedisLockStore,
  Worker,
  SHOULD_BE_UNIQUE,
  SHOULD_BE_UNIQUE_UNTIL_PROCESSING,
  hiddenContextKey,
  uniquenessOf,
} from '../../../src/worker/index.js';
import { prefixedClient } from '../../helpers/redis.js';
import { workerSetup, type WorkerSetup } from '../../helpers/worker.js';
import { uniqueRecords, type UniqueRecord } from '../../helpers/unique-fixtures.js';

const CLASS = 'App\\Jobs\\SyncUser';

function command(props: Record<string, unknown>): PhpObject {
  const object = new PhpObject(CLASS);
  for (const [name, value] of Object.entries(props)) object.props.set(name, value as never);
  return object;
}

function shapes(laravel: string | null, interfaces: string[], methods: string[] = [], declared: Record<string, unknown> = {}): ShapesFile {
  return {
    version: 1,
    laravel,
    php: '8.2',
    classes: {
      [CLASS]: {
        name: CLASS,
        kind: 'job',
        parent: null,
        interfaces,
        traits: [],
        serializer: 'SerializesModels',
        properties: [],
        declared,
        methods,
      },
    },
  };
}

describe('what a payload and the shapes say of a job', () => {
  const payloadOf = (object: PhpObject, extra: Record<string, unknown> = {}) => {
    const built = JSON.parse(buildPayload(object).raw) as Record<string, unknown>;
    return decodePayload(JSON.stringify({ ...built, ...extra }));
  };

  it('the uniqueId property as PHP concatenates it: ints, floats by precision 14, null as nothing', async () => {
    const payload = payloadOf(command({ uniqueId: 0.1 + 0.2 }));
    expect((await uniquenessOf(payload, payload.command, shapes('8.83.26', [SHOULD_BE_UNIQUE])))?.keys).toEqual([
      `laravel_unique_job:${CLASS}0.3`,
    ]);
    const asInt = payloadOf(command({ uniqueId: 12 }));
    expect((await uniquenessOf(asInt, asInt.command, shapes('8.83.26', [SHOULD_BE_UNIQUE])))?.keys).toEqual([
      `laravel_unique_job:${CLASS}12`,
    ]);
    const none = payloadOf(command({ uniqueId: null }));
    expect((await uniquenessOf(none, none.command, shapes('8.83.26', [SHOULD_BE_UNIQUE])))?.keys).toEqual([`laravel_unique_job:${CLASS}`]);
  });

  it('the shapes: not unique, UntilProcessing, a declared uniqueId, a uniqueId() method refused by name', async () => {
    const payload = payloadOf(command({ n: 1 }));
    expect(await uniquenessOf(payload, payload.command, shapes('8.83.26', []))).toBeUndefined();
    expect(
      await uniquenessOf(payload, payload.command, shapes('8.83.26', [SHOULD_BE_UNIQUE, SHOULD_BE_UNIQUE_UNTIL_PROCESSING])),
    ).toMatchObject({ untilProcessing: true, known: true });
    expect((await uniquenessOf(payload, payload.command, shapes('9.52.0', [SHOULD_BE_UNIQUE], [], { uniqueId: 'fixed' })))?.keys).toEqual([
      `laravel_unique_job:${CLASS}fixed`,
    ]);
    await expect(uniquenessOf(payload, payload.command, shapes('10.1.0', [SHOULD_BE_UNIQUE], ['uniqueId']))).rejects.toThrow(
      `${CLASS} defines uniqueId()`,
    );
    expect(await uniquenessOf(payload, payload.command, undefined), 'without shapes: treated as unique, not UntilProcessing').toMatchObject(
      { untilProcessing: false, known: false },
    );
  });

  it('11.39+: the key in the hidden context wins, even over a uniqueId() method; 13.24+: the owner', async () => {
    const key = 'laravel_unique_job:App\\Jobs\\SyncUser:by-method';
    const context = {
      data: [],
      hidden: { laravel_unique_job_cache_store: serialize('redis').toString(), laravel_unique_job_key: serialize(key).toString() },
    };
    const payload = payloadOf(command({ uniqueLockOwner: 'owner-1' }), { 'illuminate:log:context': context });
    expect(hiddenContextKey(payload)).toBe(key);
    expect(await uniquenessOf(payload, payload.command, shapes('13.26.1', [SHOULD_BE_UNIQUE], ['uniqueId']))).toEqual({
      untilProcessing: false,
      known: true,
      keys: [key],
      owner: 'owner-1',
      store: 'redis',
    });
  });
});

describe('the worker reads what Laravel 12.67 and 13.26 write (fixtures/laravel/unique-12-13.jsonl)', () => {
  const records = uniqueRecords();
  /** The key as UniqueLock::getKey names it: the fixture's raw key without the connection's and the cache's prefixes. */
  const keyOf = (record: UniqueRecord) => record.lock!.key.replace(/^live-bridge-database-live-bridge-cache-/, '');

  for (const record of records) {
    it(`${record.laravel} ${record.kind}: ${record.lock ? 'the store, key and owner the payload names, without shapes' : 'no lock, so nothing to release'}`, async () => {
      const payload = decodePayload(record.payload);
      const expected = record.lock && {
        untilProcessing: false,
        known: false,
        keys: [keyOf(record)],
        store: 'redis',
        ...(record.laravel.startsWith('13.') ? { owner: record.lock.value } : {}),
      };
      expect(await uniquenessOf(payload, payload.command, undefined), `what ${record.class}'s payload says of its lock`).toEqual(
        expected ?? undefined,
      );
    });
  }

  it('a job that is not unique, carrying the context of the unique job that dispatched it (Laravel hydrates it while that job runs): not its lock', async () => {
    const parent = JSON.parse(records.find((r) => r.laravel.startsWith('13.') && r.kind === 'unique')!.payload);
    for (const laravel of ['12.', '13.']) {
      const child = JSON.parse(records.find((r) => r.laravel.startsWith(laravel) && r.kind === 'plain')!.payload);
      // As createPayloadUsing adds it: after createdAt, before id.
      const { id, attempts, delay, ...head } = child;
      const payload = decodePayload(
        JSON.stringify({ ...head, 'illuminate:log:context': parent['illuminate:log:context'], id, attempts, delay }),
      );
      expect(await uniquenessOf(payload, payload.command, undefined), `${laravel} PlainJob under UniqueJob's context`).toBeUndefined();
    }
  });

  describe('on real Redis: Laravel’s lock in the lock store, the fixture payload run by a Worker', () => {
    let env: WorkerSetup;
    let lockClient: RedisClient;
    let dels: string[][];
    let errors: string[];
    beforeEach(() => {
      env = workerSetup('unique-ctx');
      lockClient = prefixedClient(env.prefix);
      dels = [];
      errors = [];
      // The DELs the lock store sends (each still run by Redis), to see that none goes out for a job that is not unique.
      const del = lockClient.del.bind(lockClient) as (...keys: string[]) => Promise<number>;
      (lockClient as unknown as { del: (...keys: string[]) => Promise<number> }).del = (...keys) => {
        dels.push(keys);
        return del(...keys);
      };
    });
    afterEach(async () => {
      lockClient.disconnect();
      await env.cleanup();
    });

    const find = (laravel: string, kind: string) => records.find((r) => r.laravel.startsWith(laravel) && r.kind === kind)!;
    /** Runs the record's payload once with a handler that does nothing; the lock as the run left it. */
    const run = async (record: UniqueRecord, lockOwner: string | null, storeName = 'redis') => {
      const store = new RedisLockStore(lockClient, 'live-bridge-cache-', '', storeName);
      const key = `live-bridge-cache-${record.lock ? keyOf(record) : 'laravel_unique_job:none'}`;
      if (lockOwner !== null) await lockClient.set(key, lockOwner);
      await env.queue.pushRaw(record.payload, 'default');
      const worker = new Worker(
        env.queue,
        { [record.class]: async () => undefined },
        { once: true, sleep: 0.05, memory: 0 },
        { failer: false, cache: env.cache, locks: store, log: (e) => e.event === 'error' && errors.push(String(e.error)) },
      );
      await worker.run();
      return lockClient.get(key);
    };

    it('13.26: released by owner: Laravel’s own lock goes, another owner’s stays', async () => {
      const record = find('13.', 'unique');
      expect(await run(record, record.lock!.value), 'the lock with the payload’s owner after the run').toBeNull();
      expect(await run(record, 'someoneElse12345'), 'a lock another owner took meanwhile').toBe('someoneElse12345');
      expect(errors).toEqual([]);
    });

    it('12.67: the key the context names is force-released', async () => {
      const record = find('12.', 'unique-named');
      expect(await run(record, record.lock!.value)).toBeNull();
      expect(dels.flat(), 'the DEL sent').toEqual([`live-bridge-cache-${keyOf(record)}`]);
    });

    it('a job Laravel 12 or 13 pushed without the context is not unique: no DEL is sent', async () => {
      await run(find('12.', 'plain'), null);
      await run(find('13.', 'plain'), null);
      expect(dels, 'DELs sent for jobs that took no lock').toEqual([]);
    });

    it('a lock the payload places in another cache store stays, and the log says where', async () => {
      const record = find('12.', 'unique');
      expect(await run(record, record.lock!.value, 'database')).toBe(record.lock!.value);
      expect(errors).toEqual([
        `its unique lock ${keyOf(record)} is in the cache store "redis", as its payload says, and this worker keeps locks in "database" (--cache-store): the lock was not released`,
      ]);
    });
  });
});
