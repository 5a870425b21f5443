/** A benchmark's Redis keys live under a prefix of its own; this removes them all at the end. */
import { Redis } from 'ioredis';
import { REDIS_URL } from './redis-target.js';

/** Keys per DEL: one DEL of a whole run's (Horizon's records of 100,000 jobs) would overflow the call's argument list. */
const DEL_CHUNK = 10_000;

export async function dropPrefix(prefix: string): Promise<void> {
  const raw = new Redis(REDIS_URL);
  try {
    const keys = await raw.keys(`${prefix}*`);
    for (let at = 0; at < keys.length; at += DEL_CHUNK) await raw.del(...keys.slice(at, at + DEL_CHUNK));
  } finally {
    raw.disconnect();
  }
}
