/**
 * Queue keys as Laravel 13.5+'s RedisQueue names them on a Redis Cluster: `queues:{NAME}` and
 * its `:delayed`, `:reserved` and `:notify` beside it, unless NAME has a (non-empty) hash tag of
 * its own; on a single server, `queues:NAME` as ever. Checked in a real Redis (the cluster run
 * is in test/reliability/cluster.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue, hasHashTag } from '../../src/redis/index.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const prefix = uniquePrefix('hashtags');
afterEach(async () => {
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
});

describe('hash tags in queue keys', () => {
  it('Connection::hasHashTag’s rule: a non-empty {…}', () => {
    expect(['{emails}', 'a{b}c', '{x}{}', 'a{b'].map(hasHashTag)).toEqual([true, true, true, false]);
    expect(['emails', '{}', '}{', 'a}b{'].map(hasHashTag)).toEqual([false, false, false, false]);
  });

  it('with hashTags every step uses queues:{NAME}…; a tagged name and a plain server keep theirs', async () => {
    const client = prefixedClient(prefix);
    const tagged = new RedisQueue(client, { hashTags: true, retryAfter: 2 });
    expect([tagged.key('emails'), tagged.key('{emails}'), tagged.key('a{}')]).toEqual([
      'queues:{emails}',
      'queues:{emails}',
      'queues:{a{}}',
    ]);
    expect(new RedisQueue(client).key('emails')).toBe('queues:emails');

    const payload = buildPayload(buildJob({ className: 'App\\Jobs\\X' })).raw;
    await tagged.pushRaw(payload, 'emails');
    await tagged.laterRaw(60, payload, 'emails');
    const [job] = await tagged.popMany('emails', 1);
    const raw = rawClient();
    const keys = (await raw.keys(`${prefix}*`)).map((k) => k.slice(prefix.length)).sort();
    raw.disconnect();
    expect(keys).toEqual(['queues:{emails}:delayed', 'queues:{emails}:reserved']);
    await job!.delete();
    expect(await tagged.size('emails')).toBe(1);
    client.disconnect();
  });
});
