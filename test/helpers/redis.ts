/**
 * Real Redis for tests: a unique key prefix per test, a dump of everything under it, and
 * cleanup. REDIS_URL picks the server (default 127.0.0.1:6379, which .ci/run starts).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { connectRedis, type RedisClient } from '../../src/redis/index.js';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function uniquePrefix(label = 'test'): string {
  return `lqb-${label}-${randomBytes(4).toString('hex')}:`;
}

/** A client whose keys all live under `prefix`, as Laravel's connection prefix puts them. */
export function prefixedClient(prefix: string): RedisClient {
  return connectRedis({ url: REDIS_URL, prefix });
}

/** A client without a prefix, to look at and clean up raw keys. */
export function rawClient(): Redis {
  return new Redis(REDIS_URL);
}

export type Dump = Record<string, string[] | [string, number][] | string>;

/** Every key under a prefix (the prefix cut off) with its contents: lists in order, zsets with scores. */
export async function dump(raw: Redis, prefix: string): Promise<Dump> {
  const keys = (await raw.keys(`${prefix}*`)).sort();
  const out: Dump = {};
  for (const key of keys) {
    const type = await raw.type(key);
    const name = key.slice(prefix.length);
    if (type === 'list') out[name] = await raw.lrange(key, 0, -1);
    else if (type === 'zset') {
      const flat = await raw.zrange(key, 0, -1, 'WITHSCORES');
      const pairs: [string, number][] = [];
      for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i]!, Number(flat[i + 1])]);
      out[name] = pairs;
    } else out[name] = (await raw.get(key)) ?? '';
  }
  return out;
}

export async function removePrefix(raw: Redis, prefix: string): Promise<void> {
  const keys = await raw.keys(`${prefix}*`);
  if (keys.length) await raw.del(...keys);
}
