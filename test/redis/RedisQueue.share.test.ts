/**
 * RedisQueue's reserve with share on (`popMany(queue, count, { classes })`): it takes only jobs of
 * the classes named, reserved as Laravel's pop reserves one, and leaves every other job where it
 * is, byte for byte, in its place, attempts unspent. A job behind more of PHP's than one step may
 * look at is found by the steps after it, while PHP's pops shift the list under them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { RedisQueue, type RedisClient } from '../../src/redis/index.js';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const NODE = 'App\\Jobs\\Moved';
const PHP = 'App\\Jobs\\StillPhp';
const TAKE = { classes: [NODE] };

let prefix: string;
let client: RedisClient;
let raw: Redis;

beforeEach(() => {
  prefix = uniquePrefix('share');
  client = prefixedClient(prefix);
  raw = rawClient();
});
afterEach(async () => {
  await removePrefix(raw, prefix);
  client.disconnect();
  raw.disconnect();
});

/** A job's payload as Laravel 8 pushes it, its class `className`, labelled by a property `n`. */
function job(className: string, n: number, displayName?: string): string {
  return buildPayload(buildJob({ className, properties: { n }, serializesModels: false }), displayName ? { displayName } : {}).raw;
}

const list = () => raw.lrange(`${prefix}queues:default`, 0, -1);
const notify = () => raw.llen(`${prefix}queues:default:notify`);
const reserved = () => raw.zrange(`${prefix}queues:default:reserved`, 0, -1, 'WITHSCORES');
const labelOf = (payload: string) => `${JSON.parse(payload).displayName}#${/i:(\d+);/.exec(JSON.parse(payload).data.command)?.[1]}`;

describe('a reserve with share on', () => {
  it('takes only the classes named, reserved as Laravel pops (attempts + 1, :reserved score, one notify token), and leaves the others in place', async () => {
    const queue = new RedisQueue(client, { retryAfter: 90, now: () => 1_000_000 });
    const pushed = [job(PHP, 1), job(NODE, 2), job(PHP, 3), job(NODE, 4), job(PHP, 5)];
    await queue.bulkRaw(pushed);
    const first = await queue.popMany('default', 1, TAKE);
    expect(
      first.map((j) => labelOf(j.raw)),
      'the first reserve did not take the first Node job, and it alone',
    ).toEqual([`${NODE}#2`]);
    expect(first[0]!.attempts(), 'the Node job taken is not at attempt 1').toBe(1);
    expect(await list(), 'the PHP jobs were not left byte for byte in their places').toEqual([pushed[0], pushed[2], pushed[3], pushed[4]]);
    expect(await notify(), 'the notify list is not one token per job left').toBe(4);
    const [member, score] = await reserved();
    expect(JSON.parse(member!), 'the reserved copy is not the job with attempts + 1').toEqual({ ...JSON.parse(pushed[1]!), attempts: 1 });
    expect(Number(score), 'the reservation is not scored now + retry_after').toBe(1_000_090);

    const rest = await queue.popMany('default', 5, TAKE);
    expect(
      rest.map((j) => labelOf(j.raw)),
      'the second reserve did not take the other Node job, and it alone',
    ).toEqual([`${NODE}#4`]);
    expect(await list(), 'the PHP jobs were touched').toEqual([pushed[0], pushed[2], pushed[4]]);
    expect(await queue.popMany('default', 5, TAKE), 'a reserve took a PHP job').toEqual([]);
    expect(await list(), 'an empty reserve touched the PHP jobs').toEqual([pushed[0], pushed[2], pushed[4]]);
    expect(await notify(), 'the notify list is not one token per job left').toBe(3);
  });

  it('takes the one entry it looked at when the list holds copies of the same bytes', async () => {
    const queue = new RedisQueue(client);
    const php = job(PHP, 1);
    const node = job(NODE, 2);
    await queue.bulkRaw([php, node, php, node, php]);
    const taken = await queue.popMany('default', 1, TAKE);
    expect(
      taken.map((j) => j.raw),
      'the Node job was not taken once',
    ).toEqual([node]);
    expect(await list(), 'not exactly the first copy of the Node job was taken out').toEqual([php, php, node, php]);
  });

  it('takes jobs at the head and at the tail as it takes them between', async () => {
    const queue = new RedisQueue(client);
    const pushed = [job(NODE, 1), job(PHP, 2), job(NODE, 3)];
    await queue.bulkRaw(pushed);
    expect(
      (await queue.popMany('default', 5, TAKE)).map((j) => j.raw),
      'the Node jobs at the head and the tail were not both taken, in order',
    ).toEqual([pushed[0], pushed[2]]);
    expect(await list(), 'the PHP job between them was touched').toEqual([pushed[1]]);
    expect(await notify(), 'the notify list is not one token per job left').toBe(1);
  });

  it('matches a job by its commandName when its displayName is its own, and a listener by its class (its displayName)', async () => {
    const queue = new RedisQueue(client);
    const named = job(NODE, 1, 'Send the invoice');
    const listener = job('Illuminate\\Events\\CallQueuedListener', 2, 'App\\Listeners\\Ship');
    const unicode = job('App\\Jobs\\Café', 3);
    const php = job(PHP, 0);
    await queue.bulkRaw([php, named, listener, unicode]);
    const taken = await queue.popMany('default', 5, { classes: [NODE, 'App\\Listeners\\Ship', 'App\\Jobs\\Café'] });
    expect(
      taken.map((j) => j.raw),
      'the job with a displayName of its own, the listener or the class with a non-ASCII name was not taken',
    ).toEqual([named, listener, unicode]);
    expect(await list(), 'the PHP job was touched').toEqual([php]);
  });

  it('without classes named, takes the head whatever it holds (--no-share), as Laravel pops', async () => {
    const queue = new RedisQueue(client);
    const pushed = [job(PHP, 1), job(NODE, 2)];
    await queue.bulkRaw(pushed);
    const taken = await queue.popMany('default', 1);
    expect(
      taken.map((j) => j.raw),
      'the head was not taken',
    ).toEqual([pushed[0]]);
  });

  it('finds a Node job behind more PHP jobs than one step looks at in one reserve, step after step in Redis', async () => {
    const php = Array.from({ length: 2500 }, (_, n) => job(PHP, n));
    const node = job(NODE, 9999);
    await new RedisQueue(client).bulkRaw([...php, node]);
    // 25 steps of 100 look past the 2,500 PHP jobs; the 26th reaches the Node job.
    const short = new RedisQueue(client, { shareLook: { entries: 100, window: 25, steps: 25 } });
    expect(await short.popMany('default', 1, TAKE), 'a reserve of 25 steps of 100 looked past more than 2,500 jobs').toEqual([]);
    expect(
      (await short.popMany('default', 1, TAKE)).map((j) => j.raw),
      'the next reserve did not go on where the last one stopped',
    ).toEqual([node]);
    await short.bulkRaw([node]);
    const queue = new RedisQueue(client, { shareLook: { entries: 100, window: 25 } });
    expect(
      (await queue.popMany('default', 1, TAKE)).map((j) => j.raw),
      'one reserve (its default steps) did not find the Node job behind 2,500 PHP jobs',
    ).toEqual([node]);
    expect(await list(), 'the PHP jobs were touched').toEqual(php);
  });

  it('stops a step at its byte bound: about that many bytes of entries looked at, whatever the entries bound', async () => {
    const php = Array.from({ length: 60 }, (_, n) => job(PHP, n));
    const node = job(NODE, 9999);
    const size = php[0]!.length;
    // 8 entries' worth of bytes a step, one step a reserve: the 60 PHP jobs take 7 or 8 reserves.
    const queue = new RedisQueue(client, { shareLook: { entries: 1000, bytes: size * 8, window: 100, steps: 1 } });
    await queue.bulkRaw([...php, node]);
    let reserves = 0;
    let found: string | undefined;
    while (found === undefined && reserves < 20) {
      reserves++;
      found = (await queue.popMany('default', 1, TAKE))[0]?.raw;
    }
    expect(found, 'the Node job was not found').toBe(node);
    expect(reserves, `steps of ${size * 8} bytes (8 jobs of ${size}) looked past 60 jobs in ${reserves} reserves`).toBeGreaterThanOrEqual(
      7,
    );
    expect(reserves, `steps of ${size * 8} bytes (8 jobs of ${size}) looked past 60 jobs in ${reserves} reserves`).toBeLessThanOrEqual(9);
    expect(await list(), 'the PHP jobs were touched').toEqual(php);
  });

  it('finds a Node job behind more PHP jobs than one step looks at, reserve after reserve, while PHP pops the head', async () => {
    const look = { entries: 100, bytes: 1024 * 1024, window: 25, steps: 1 };
    const queue = new RedisQueue(client, { shareLook: look });
    const php = Array.from({ length: 450 }, (_, n) => job(PHP, n));
    const node = job(NODE, 9999);
    const last = job(PHP, 10_000);
    await queue.bulkRaw([...php, node, last]);
    const steps: number[] = [];
    let found: string | undefined;
    for (let step = 1; step <= 10 && found === undefined; step++) {
      const taken = await queue.popMany('default', 1, TAKE);
      steps.push(taken.length);
      found = taken[0]?.raw;
      // PHP's worker takes 30 from the head between two of Node's steps.
      for (let i = 0; i < 30; i++) await raw.lpop(`${prefix}queues:default`);
    }
    expect(found, `the Node job behind 450 PHP jobs was not found within 10 steps of 100 (${steps.join(',')})`).toBe(node);
    expect(steps.length, `the steps did not go on where the last stopped: found at step ${steps.length}`).toBeLessThanOrEqual(5);
    const left = await list();
    expect(left.length, 'jobs went missing or were added').toBe(451 - 30 * steps.length);
    expect(
      left.every((payload) => JSON.parse(payload).attempts === 0),
      'a PHP job left had its attempts changed',
    ).toBe(true);
    expect(left, 'the PHP jobs left are not in their order, untouched').toEqual([...php, last].slice(30 * steps.length));
  });

  it('starts over from the head when the entry it stopped at was popped', async () => {
    const queue = new RedisQueue(client, { shareLook: { entries: 10, bytes: 1024 * 1024, window: 10, steps: 1 } });
    const php = Array.from({ length: 15 }, (_, n) => job(PHP, n));
    await queue.bulkRaw(php);
    expect(await queue.popMany('default', 1, TAKE), 'a PHP job was taken').toEqual([]);
    // PHP takes past where the step stopped; a Node job then arrives.
    for (let i = 0; i < 12; i++) await raw.lpop(`${prefix}queues:default`);
    const node = job(NODE, 1);
    await queue.pushRaw(node);
    expect(
      (await queue.popMany('default', 1, TAKE)).map((j) => j.raw),
      'the Node job was not found',
    ).toEqual([node]);
  });

  it('writes Horizon’s reserved record of the job it takes, in the same step, and none of the jobs it leaves', async () => {
    const horizonPrefix = `${prefix}horizon:`;
    const queue = new RedisQueue(client, {
      horizon: {
        prefix: horizonPrefix,
        now: () => '1700000000.25',
        keyOf: (j) => `${horizonPrefix}${j.uuid}`,
        deleteReserved: async () => undefined,
      },
    });
    const php = job(PHP, 1);
    const node = job(NODE, 2);
    await queue.bulkRaw([php, node]);
    const [taken] = await queue.popMany('default', 1, TAKE);
    expect(taken?.raw, 'the Node job was not taken').toBe(node);
    expect(await raw.hgetall(`${horizonPrefix}${JSON.parse(node).uuid}`), 'the Node job has no reserved record').toEqual({
      status: 'reserved',
      payload: taken!.reservedBytes.toString(),
      updated_at: '1700000000.25',
      reserved_at: '1700000000.25',
    });
    expect(await raw.exists(`${horizonPrefix}${JSON.parse(php).uuid}`), 'the PHP job left has a Horizon record').toBe(0);
  });

  it('with block_for, a wake for a PHP job’s token gives the token back: notify stays one per job', async () => {
    const queue = new RedisQueue(client, { blockFor: 1 });
    await queue.bulkRaw([job(PHP, 1), job(PHP, 2)]);
    expect(await queue.popMany('default', 1, TAKE), 'a PHP job was taken').toEqual([]);
    expect(await notify(), 'the notify list is not one token per job on the list').toBe(2);
    await queue.close();
  });
});
