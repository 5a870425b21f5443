/**
 * The record's layout in Redis (src/record/RedisRecord.ts, as NodeRecord.ts documents it), read
 * with a client without the prefix: a flush leaves a hash per minute of `[queue, class, outcome,
 * measure]` fields expiring `keepSeconds` after the minute's end, the list of the latest jobs
 * trimmed to `recent`, and the worker's heartbeat in `lqb:workers`, removed at the run's end.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { RECORD_DEFAULTS, type WorkerHeartbeat } from '../../src/record/NodeRecord.js';
import { RedisRecord } from '../../src/record/RedisRecord.js';
import type { RecordBatch } from '../../src/record/store.js';
import type { RedisClient } from '../../src/redis/index.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const MINUTE = Math.floor(Date.now() / 60_000) * 60;
const NOW = MINUTE + 30;

const heartbeat: WorkerHeartbeat = {
  id: 'host-a:101:aa11',
  host: 'host-a',
  pid: 101,
  connection: 'redis',
  queues: ['default'],
  concurrency: 1,
  inHand: 0,
  since: NOW - 10,
  lastPoll: NOW,
  every: 5,
};

const batch = (overrides: Partial<RecordBatch>): RecordBatch => ({
  minutes: [],
  completed: [],
  heartbeat,
  ended: false,
  now: NOW,
  options: RECORD_DEFAULTS,
  ...overrides,
});

let prefix: string;
let client: RedisClient;
let raw: Redis;
beforeEach(() => {
  prefix = uniquePrefix('record-redis');
  client = prefixedClient(prefix);
  raw = rawClient();
});
afterEach(async () => {
  client.disconnect();
  await removePrefix(raw, prefix);
  raw.disconnect();
});

describe('a flush in Redis', () => {
  it('writes the minute hash, the list and the heartbeat under the prefix, each with its expiry', async () => {
    const store = new RedisRecord(client);
    const options = { keepSeconds: 3_600, recent: 2, flushEvery: 5 };
    await store.write(
      batch({
        minutes: [
          { minute: MINUTE, queue: 'default', className: 'App\\Jobs\\A', outcome: 'completed', jobs: 2, ms: 10.6 },
          { minute: MINUTE, queue: 'default', className: 'App\\Jobs\\A', outcome: 'failed', jobs: 1, ms: 0.2 },
        ],
        completed: [1, 2, 3].map((n) => ({
          uuid: `u${n}`,
          name: 'A',
          className: 'App\\Jobs\\A',
          queue: 'default',
          connection: 'redis',
          runtimeMs: n,
          finishedAt: NOW + n / 1000,
        })),
        options,
      }),
    );
    const keys = (await raw.keys(`${prefix}*`)).map((key) => key.slice(prefix.length)).sort();
    expect(keys, 'the keys a flush leaves').toEqual(['lqb:completed', `lqb:minute:${MINUTE}`, 'lqb:workers']);
    expect(await raw.hgetall(`${prefix}lqb:minute:${MINUTE}`), 'the minute’s fields (a runtime under 0.5 ms is no field)').toEqual({
      '["default","App\\\\Jobs\\\\A","completed","jobs"]': '2',
      '["default","App\\\\Jobs\\\\A","completed","ms"]': '11',
      '["default","App\\\\Jobs\\\\A","failed","jobs"]': '1',
    });
    expect(await raw.expiretime(`${prefix}lqb:minute:${MINUTE}`), 'the minute expires keepSeconds after its end').toBe(MINUTE + 60 + 3_600);
    const list = await raw.lrange(`${prefix}lqb:completed`, 0, -1);
    expect(
      list.map((text) => JSON.parse(text).uuid),
      'the latest jobs, newest first, trimmed to recent',
    ).toEqual(['u3', 'u2']);
    expect(JSON.parse(list[0]!), 'a job as kept').toEqual({
      uuid: 'u3',
      name: 'A',
      className: 'App\\Jobs\\A',
      queue: 'default',
      connection: 'redis',
      runtimeMs: 3,
      finishedAt: NOW + 0.003,
    });
    const ttl = await raw.ttl(`${prefix}lqb:completed`);
    expect(ttl > 3_590 && ttl <= 3_600, `the list expires in keepSeconds: ttl ${ttl}`).toBe(true);
    expect(JSON.parse((await raw.hget(`${prefix}lqb:workers`, heartbeat.id))!), 'the heartbeat').toEqual(heartbeat);

    await store.write(batch({ ended: true, options }));
    expect(await raw.exists(`${prefix}lqb:workers`), 'the heartbeat removed at the run’s end (the hash with it)').toBe(0);
  });
});
