/**
 * A canary share (`take: { CLASS: 0.1 }`, `--take 'CLASS=10%'`): over 10,000 jobs of a class with no
 * PHP worker running, a Node worker runs P% of them (± 2 points) and leaves every other job where
 * it is, untouched; and the jobs it runs are exactly those whose bucket (src/queue/take.ts) is
 * below P, so the Redis step's Lua, the database reserve and take.ts decide alike. Jobs with a
 * uuid (Laravel 7+) and without (5.8 and 6: the id decides) are both in the run. On real Redis and
 * each database.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { RedisQueue, type RedisClient } from '../../src/redis/index.js';
import { DatabaseQueue } from '../../src/database/index.js';
import { buildJob, buildPayload, type LaravelProfile } from '../../src/laravel/index.js';
import { Worker, WorkerUsageError, type HandlerMap } from '../../src/worker/index.js';
import type { Queue } from '../../src/queue/index.js';
import { parseTake, percentShares, takeBucket } from '../../src/queue/take.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';
import { QUEUE_DATABASES, withJobsTable } from '../helpers/jobs-table.js';

const CANARY = 'App\\Jobs\\SendInvoice';
const WHOLE = 'App\\Jobs\\Moved';
const JOBS = 10_000;
const SHARE = 10;

/** Payloads of the canary class, one in ten as Laravel 6 writes them (no uuid), and a few of a class taken whole. */
function payloads(driver: 'redis' | 'database'): string[] {
  return Array.from({ length: JOBS }, (_, n) => {
    const profile: LaravelProfile = n % 10 === 0 && driver === 'redis' ? '6' : '8';
    return buildPayload(buildJob({ className: n % 100 === 1 ? WHOLE : CANARY, properties: { n }, serializesModels: false }), {
      profile,
      driver,
    }).raw;
  });
}

/** The bucket of a payload as take.ts reckons it (the database's row id where a payload has no uuid). */
const bucketOf = (payload: string, rowId?: number) => {
  const envelope = JSON.parse(payload) as { uuid?: string; id?: string };
  return takeBucket(envelope.uuid, rowId ?? envelope.id);
};
const nOf = (payload: string) => Number(/"n";i:(\d+);/.exec(JSON.parse(payload).data.command)![1]);
const isCanary = (payload: string) => JSON.parse(payload).displayName === CANARY;

/** A job a handler ran: its n, its class, and whether it had a uuid. */
interface Ran {
  n: number;
  name: string;
  uuid: string | undefined;
}

/** Runs a worker with the canary share until no job of its is left; the jobs it ran. */
async function runCanary(queue: Queue): Promise<Ran[]> {
  const ran: Ran[] = [];
  const record: HandlerMap[string] = async (job) => void ran.push({ n: Number(job.command.n), name: job.name, uuid: job.uuid });
  await new Worker(
    queue,
    { [CANARY]: record, [WHOLE]: record },
    { stopWhenEmpty: true, sleep: 0, concurrency: 8, take: { [CANARY]: SHARE / 100 } },
    { failer: false },
  ).run();
  return ran;
}

describe('a canary share on Redis', () => {
  let prefix: string;
  let client: RedisClient;
  let raw: Redis;
  beforeEach(() => {
    prefix = uniquePrefix('take');
    client = prefixedClient(prefix);
    raw = rawClient();
  });
  afterEach(async () => {
    await removePrefix(raw, prefix);
    client.disconnect();
    raw.disconnect();
  });

  it(`runs ${SHARE}% of ${JOBS} jobs, exactly those whose bucket is below ${SHARE}, and leaves the rest in place, untouched`, async () => {
    const queue = new RedisQueue(client, { retryAfter: 90 });
    const pushed = payloads('redis');
    await queue.bulkRaw(pushed);
    const ran = await runCanary(queue);
    const ranN = new Set(ran.map((r) => r.n));
    const expected = pushed.filter((p) => !isCanary(p) || bucketOf(p)! < SHARE);
    expect(
      [...ranN].sort((a, b) => a - b),
      'the jobs Node ran: every one of the class taken whole, and of the canary class those with a bucket below the share',
    ).toEqual(expected.map(nOf).sort((a, b) => a - b));
    const canaries = pushed.filter(isCanary).length;
    const share = (100 * ran.filter((r) => r.name === CANARY).length) / canaries;
    expect(Math.abs(share - SHARE), `the canary share Node ran: ${share.toFixed(2)}% of ${canaries}`).toBeLessThanOrEqual(2);
    expect(
      ran.filter((r) => r.uuid === undefined).length,
      'jobs without a uuid (Laravel 6) among those run: the id decides them',
    ).toBeGreaterThan(0);
    expect(await raw.lrange(`${prefix}queues:default`, 0, -1), 'the jobs left: in order, byte for byte as pushed').toEqual(
      pushed.filter((p) => !ranN.has(nOf(p))),
    );
    expect(await raw.zcard(`${prefix}queues:default:reserved`), 'jobs left reserved').toBe(0);
  }, 120_000);

  it('a share of a class with no handler, or beside share: false, is refused when the worker is made', () => {
    const queue = new RedisQueue(client, { retryAfter: 90 });
    const handlers: HandlerMap = { [WHOLE]: async () => undefined };
    expect(() => new Worker(queue, handlers, { take: { [CANARY]: 0.1 } }, { failer: false }), 'a share of an unhandled class').toThrow(
      new WorkerUsageError(
        `take names ${JSON.stringify(CANARY)}, which has no handler: a share is of a class the worker handles (handler keys: ${WHOLE})`,
      ),
    );
    expect(() => new Worker(queue, handlers, { share: false, take: { [WHOLE]: 0.1 } }, { failer: false }), 'a share without share').toThrow(
      WorkerUsageError,
    );
    expect(
      () => new Worker(queue, handlers, { take: { [WHOLE]: 0.125 } }, { failer: false }),
      'a share that is not a whole percent',
    ).toThrow(/must be a share from 0 to 1 in whole percents/);
    expect(
      () => new Worker(queue, handlers, { take: { [WHOLE]: 10 } }, { failer: false }),
      'a share given as a percent (10 for 10%)',
    ).toThrow(/must be a share from 0 to 1 in whole percents \(0\.1 for 10%/);
    // Fractions that are whole percents, though not exact in binary, are taken as those percents.
    expect(() => new Worker(queue, handlers, { take: { [WHOLE]: 0.07 } }, { failer: false }), 'a share of 0.07').not.toThrow();
    expect(percentShares({ a: 0.07, b: 0.29, c: 1, d: 0 }), 'the percents the reserve steps compare with').toEqual({
      a: 7,
      b: 29,
      c: 100,
      d: 0,
    });
  });
});

describe.each(QUEUE_DATABASES)('a canary share on %s', (_, url) => {
  it(
    `runs ${SHARE}% of the jobs, exactly those whose bucket is below ${SHARE}, and leaves the other rows untouched`,
    () =>
      withJobsTable(url, async (t) => {
        const queue = DatabaseQueue.open(t.url, { table: t.table, retryAfter: 90 });
        try {
          const pushed = payloads('database');
          await queue.bulkRaw(pushed);
          const before = await queue.db.query<{ id: unknown; payload: unknown; attempts: unknown }>(
            `select id, payload, attempts from ${t.table} order by id`,
          );
          const ran = await runCanary(queue);
          const ranN = new Set(ran.map((r) => r.n));
          const expected = before.rows.filter((r) => !isCanary(String(r.payload)) || bucketOf(String(r.payload), Number(r.id))! < SHARE);
          expect(
            [...ranN].sort((a, b) => a - b),
            'the jobs Node ran: the class taken whole, and of the canary class those with a bucket below the share',
          ).toEqual(expected.map((r) => nOf(String(r.payload))).sort((a, b) => a - b));
          const canaries = pushed.filter(isCanary).length;
          const share = (100 * ran.filter((r) => r.name === CANARY).length) / canaries;
          expect(Math.abs(share - SHARE), `the canary share Node ran: ${share.toFixed(2)}% of ${canaries}`).toBeLessThanOrEqual(2);
          const after = await queue.db.query<{ id: unknown; payload: unknown; attempts: unknown; reserved_at: unknown }>(
            `select id, payload, attempts, reserved_at from ${t.table} order by id`,
          );
          expect(
            after.rows.map((r) => [String(r.id), String(r.payload), Number(r.attempts), r.reserved_at]),
            'the rows left: those Node did not run, as pushed, unreserved, no attempt spent',
          ).toEqual(before.rows.filter((r) => !ranN.has(nOf(String(r.payload)))).map((r) => [String(r.id), String(r.payload), 0, null]));
        } finally {
          await queue.close();
        }
      }),
    180_000,
  );
});

describe('--take as written', () => {
  it.each([
    ['App\\Jobs\\SendInvoice=10%', ['App\\Jobs\\SendInvoice', 10]],
    ['App\\Jobs\\SendInvoice=0', ['App\\Jobs\\SendInvoice', 0]],
    [' App\\Jobs\\X = 100% ', ['App\\Jobs\\X', 100]],
    ['App\\Jobs\\X=12.5%', '"App\\\\Jobs\\\\X=12.5%": the share is a whole percent from 0 to 100'],
    ['App\\Jobs\\X=101%', '"App\\\\Jobs\\\\X=101%": the share is a whole percent from 0 to 100'],
    ['App\\Jobs\\X', '"App\\\\Jobs\\\\X" is not CLASS=PERCENT%, e.g. \'App\\Jobs\\SendInvoice=10%\''],
  ])('%s', (text, expected) => {
    expect(parseTake(text), `parseTake(${JSON.stringify(text)})`).toEqual(expected);
  });
  it('a bucket: the uuid’s last four hex digits mod 100, else the id’s last two base-62 letters, else a row id', () => {
    expect(
      [
        takeBucket('f47ac10b-58cc-4372-a567-0e02b2c3d479', undefined),
        takeBucket(undefined, 'abcdefghijklmnopqrstuvwxyzABCDz9'),
        takeBucket(undefined, 1234),
        takeBucket(undefined, undefined),
      ],
      'buckets',
    ).toEqual([0xd479 % 100, (61 * 62 + 9) % 100, 34, undefined]);
  });
});
