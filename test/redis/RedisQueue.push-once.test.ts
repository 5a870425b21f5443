/**
 * pushOnce: a push sent again (its reply lost) is made once. Pushes sent in one turn while others
 * await their replies go out together in one step (push-once-many.lua): each under its own
 * marker, the ready ones appended in the order sent with a notify token each, the delayed ones
 * in the delayed zset, exactly as that many single pushes in a row would leave the queue.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RedisQueue } from '../../src/redis/index.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const prefix = uniquePrefix('push-once');
afterEach(async () => {
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
});

const MARKER_MS = 60_000;
const uuid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const payload = (i: number) => JSON.stringify({ uuid: uuid(i), displayName: 'App\\Jobs\\X', n: i });

describe('RedisQueue.pushOnce', () => {
  it('200 pushes in flight at once: each made once, the ready ones in the order sent, the delayed ones due; sent again, none is made', async () => {
    const client = prefixedClient(prefix);
    const queue = new RedisQueue(client);
    const raw = rawClient();
    try {
      const count = 200;
      // Every fifth is delayed: a due time (UNIX seconds) an hour away.
      const due = (i: number) => (i % 5 === 4 ? Math.floor(Date.now() / 1000) + 3600 : undefined);
      const send = () =>
        Promise.all(
          Array.from({ length: count }, (_, i) => queue.pushOnce(payload(i), uuid(i), { queue: 'q', markerMs: MARKER_MS, due: due(i) })),
        );
      const first = await send();
      expect(
        first.flatMap((made, i) => (made ? [] : [i])),
        'pushes the first send did not make',
      ).toEqual([]);

      const ready = Array.from({ length: count }, (_, i) => i).filter((i) => due(i) === undefined);
      const delayed = Array.from({ length: count }, (_, i) => i).filter((i) => due(i) !== undefined);
      const list = await raw.lrange(`${prefix}queues:q`, 0, -1);
      expect(list, 'the list: every ready push once, in the order sent').toEqual(ready.map(payload));
      expect(await raw.llen(`${prefix}queues:q:notify`), 'one notify token per ready push').toBe(ready.length);
      const zset = await raw.zrange(`${prefix}queues:q:delayed`, 0, -1, 'WITHSCORES');
      const scored = new Map<string, number>();
      for (let i = 0; i < zset.length; i += 2) scored.set(zset[i]!, Number(zset[i + 1]));
      expect(
        delayed.filter((i) => scored.get(payload(i)) !== due(i)),
        'delayed pushes missing from :delayed or due at another time',
      ).toEqual([]);
      expect(scored.size, 'entries in :delayed').toBe(delayed.length);

      const again = await send();
      expect(
        again.flatMap((made, i) => (made ? [i] : [])),
        'pushes a second send of the same uuids made again',
      ).toEqual([]);
      expect(await raw.llen(`${prefix}queues:q`), 'the list after the second send').toBe(ready.length);
      expect(await raw.zcard(`${prefix}queues:q:delayed`), ':delayed after the second send').toBe(delayed.length);
      expect(await raw.llen(`${prefix}queues:q:notify`), 'notify tokens after the second send').toBe(ready.length);
    } finally {
      raw.disconnect();
      client.disconnect();
    }
  });

  it('a lone push, then the same push again: made once', async () => {
    const client = prefixedClient(prefix);
    const queue = new RedisQueue(client);
    const raw = rawClient();
    try {
      expect(await queue.pushOnce(payload(1), uuid(1), { queue: 'q', markerMs: MARKER_MS }), 'the first send').toBe(true);
      expect(await queue.pushOnce(payload(1), uuid(1), { queue: 'q', markerMs: MARKER_MS }), 'the second send').toBe(false);
      expect(await raw.lrange(`${prefix}queues:q`, 0, -1), 'the list').toEqual([payload(1)]);
    } finally {
      raw.disconnect();
      client.disconnect();
    }
  });
});
