/**
 * RedisLockStore (src/worker/locks/RedisLockStore.ts) as Laravel's RedisStore keeps locks, on
 * real Redis: forceRelease, Laravel's compare-and-delete release by owner (13.24+), and the
 * force releases of jobs finishing together sent as one DEL.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockStore } from '../../../src/worker/index.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../../helpers/redis.js';

describe('RedisLockStore, as Laravel’s RedisStore keeps locks', () => {
  const prefix = uniquePrefix('unique-lock');
  afterEach(async () => {
    const raw = rawClient();
    await removePrefix(raw, prefix);
    raw.disconnect();
  });

  it('forceRelease deletes whoever holds it; release by owner deletes only the owner’s (LuaScripts::releaseLock)', async () => {
    const client = prefixedClient(prefix);
    const store = new RedisLockStore(client, 'app_cache');
    await client.set('app_cache:laravel_unique_job:A1', 'owner-a');
    expect(await store.owner('laravel_unique_job:A1')).toBe('owner-a');
    expect(await store.release('laravel_unique_job:A1', 'someone-else')).toBe(false);
    expect(await store.owner('laravel_unique_job:A1')).toBe('owner-a');
    expect(await store.release('laravel_unique_job:A1', 'owner-a')).toBe(true);
    expect(await store.owner('laravel_unique_job:A1')).toBeNull();
    await client.set('app_cache:laravel_unique_job:A1', 'owner-b');
    await store.forceRelease('laravel_unique_job:A1');
    expect(await client.exists('app_cache:laravel_unique_job:A1')).toBe(0);
    client.disconnect();
  });
});

describe('RedisLockStore.forceReleaseAll, asked by many jobs at once', () => {
  const prefix = uniquePrefix('unique-lock-batch');
  afterEach(async () => {
    const raw = rawClient();
    await removePrefix(raw, prefix);
    raw.disconnect();
  });

  it('the keys of the calls made in one turn go in one DEL, each call settling with its keys gone; a later call has its own', async () => {
    const client = prefixedClient(prefix);
    const store = new RedisLockStore(client, 'app_cache');
    const names = ['A1', 'A:1', 'B2'].map((key) => `app_cache:laravel_unique_job:${key}`);
    for (const name of names) await client.set(name, 'owner');
    // The DELs the store sends, each still run by Redis. (MONITOR would say the same, but its
    // stream breaks ioredis's reply order on a Redis that other clients keep busy.)
    const dels: string[][] = [];
    const del = client.del.bind(client) as (...keys: string[]) => Promise<number>;
    (client as unknown as { del: (...keys: string[]) => Promise<number> }).del = (...keys) => {
      dels.push(keys);
      return del(...keys);
    };
    const first = store.forceReleaseAll(['laravel_unique_job:A1', 'laravel_unique_job:A:1']);
    const second = store.forceReleaseAll(['laravel_unique_job:B2']);
    await first;
    expect(await client.exists(names[0]!, names[1]!), 'the first job’s spellings, once its call settled').toBe(0);
    await second;
    expect(await client.exists(names[2]!), 'the second job’s key, once its call settled').toBe(0);
    await client.set(names[2]!, 'owner');
    await store.forceReleaseAll(['laravel_unique_job:B2']);
    expect(await client.exists(names[2]!), 'a call in a later turn').toBe(0);
    expect(dels, 'one DEL for the two calls made together, then one for the later call').toEqual([names, [names[2]]]);
    client.disconnect();
  });
});
