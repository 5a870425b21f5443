/** A benchmark's Redis keys live under a prefix of its own; this removes them all at the end. */
import { Redis } from 'ioredis';

export async function dropPrefix(prefix: string): Promise<void> {
  const raw = new Redis();
  try {
    const keys = await raw.keys(`${prefix}*`);
    if (keys.length) await raw.del(...keys);
  } finally {
    raw.disconnect();
  }
}
