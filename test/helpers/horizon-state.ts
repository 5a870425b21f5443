/**
 * Horizon's records as Horizon 5.22.1 itself left them on Laravel 8.83: the last state of
 * fixtures/horizon/events.jsonl (A and B completed, C failed and retried as C′, D silenced, E
 * delayed and pending), written to Redis under a test's own prefixes.
 */
import { FIXTURE_APP_PREFIX, FIXTURE_HORIZON_PREFIX, readHorizonFixtures } from '../horizon/fixtures.js';
import { rawClient } from './redis.js';

/** The fixture's job ids: `00000000-0000-4000-8000-00000000000N`, N in creation order. */
export const horizonFixtureId = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;

/** Writes the fixture's last state, its app and Horizon prefixes replaced by these (in set members too). */
export async function loadHorizonLastState(appPrefix: string, horizonPrefix: string): Promise<void> {
  const raw = rawClient();
  const rename = (name: string) =>
    name.startsWith(FIXTURE_APP_PREFIX)
      ? appPrefix + name.slice(FIXTURE_APP_PREFIX.length)
      : name.replaceAll(FIXTURE_HORIZON_PREFIX, horizonPrefix);
  try {
    const last = readHorizonFixtures().at(-1)!;
    for (const { key, type, value } of last.after) {
      const name = rename(key);
      if (type === 'hash') await raw.hset(name, value as Record<string, string>);
      else if (type === 'zset') for (const [member, score] of value as [string, number][]) await raw.zadd(name, score, member);
      else if (type === 'set') await raw.sadd(name, ...(value as string[]).map(rename));
      else if (type === 'list') await raw.rpush(name, ...(value as string[]));
      else await raw.set(name, value as string);
    }
  } finally {
    raw.disconnect();
  }
}
