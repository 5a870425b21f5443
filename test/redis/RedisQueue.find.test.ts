/**
 * RedisQueue.find on a long queue, on a redis-server of the test's own (its SLOWLOG is read and
 * reset): the walk goes in short steps, so Redis answers other clients all along, and a step
 * resumes where the last one stopped even when the jobs around it have moved.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisQueue, connectRedis, type RedisClient } from '../../src/redis/index.js';
import { runStep } from '../../src/redis/scripts.js';
import { bySize } from '../helpers/tier.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis.js';

let server: OwnRedis;
let raw: Redis;
let client: RedisClient;

beforeAll(async () => {
  server = await startOwnRedis([]);
  raw = new Redis(server.port, '127.0.0.1');
  client = connectRedis({ url: `redis://127.0.0.1:${server.port}` });
});
afterAll(() => {
  client?.disconnect();
  raw?.disconnect();
  server?.stop();
});

/** Fills a list with `count` jobs of about 2 KB (uuid u-N, id i-N), in Redis itself, before any timing. */
async function fill(key: string, count: number): Promise<void> {
  const fillScript = `
    local pad = string.rep('x', 2000)
    for first = 1, tonumber(ARGV[1]), 1000 do
      local batch = {}
      for n = first, math.min(first + 999, tonumber(ARGV[1])) do
        batch[#batch + 1] = '{"uuid":"u-' .. n .. '","displayName":"Pad","data":"' .. pad .. '","attempts":0,"id":"i-' .. n .. '"}'
      end
      redis.call('RPUSH', KEYS[1], unpack(batch))
    end
    return redis.call('LLEN', KEYS[1])`;
  expect(await raw.eval(fillScript, 1, key, count), 'the backlog was not filled').toBe(count);
}

/**
 * How long Redis ran the find steps, in ms, as SLOWLOG measured them (wall time: on a busy machine
 * a step may be preempted, so the median and the 99th percentile are what is judged).
 */
async function findSteps(): Promise<{ median: number; p99: number; longest: number; steps: number }> {
  const entries = (await raw.call('SLOWLOG', 'GET', '-1')) as [number, number, number, string[]][];
  const times = entries
    .filter(([, , , args]) => /^(evalsha|eval)$/i.test(args[0]!))
    .map(([, , micros]) => micros / 1000)
    .sort((a, b) => a - b);
  const at = (share: number) => times[Math.min(times.length - 1, Math.floor(times.length * share))] ?? 0;
  return { median: at(0.5), p99: at(0.99), longest: at(1), steps: times.length };
}

const BACKLOG = bySize(300_000, 1_600_000);

describe(`find on a backlog of ${BACKLOG} jobs of 2 KB`, () => {
  it('walks in steps Redis runs in well under 10 ms each, and finds the job in the middle', async () => {
    await fill('queues:long', BACKLOG);
    const queue = new RedisQueue(client, { defaultQueue: 'long' });
    await raw.config('SET', 'slowlog-log-slower-than', '0');
    await raw.config('SET', 'slowlog-max-len', '100000');
    await raw.call('SLOWLOG', 'RESET');
    const middle = Math.floor(BACKLOG / 2);
    const started = performance.now();
    const found = await queue.find(`u-${middle}`);
    const took = performance.now() - started;
    const { median, p99, longest, steps } = await findSteps();
    await raw.config('SET', 'slowlog-log-slower-than', '10000');
    const figures = `${steps} steps: median ${median} ms, 99th percentile ${p99} ms, longest ${longest} ms; ${Math.round(took)} ms in all`;
    expect(found?.state, `u-${middle} was not found ready`).toBe('ready');
    expect(JSON.parse(found!.payload).id, 'find returned another job').toBe(`i-${middle}`);
    expect(steps, 'find ran as one long step').toBeGreaterThan(100);
    expect(median, `the median find step held Redis too long (${figures})`).toBeLessThan(2);
    expect(p99, `find steps held Redis 10 ms or more (${figures})`).toBeLessThan(10);
    process.stdout.write(`find over ${BACKLOG} jobs of 2 KB: ${figures}\n`);
    await raw.del('queues:long');
  });
});

describe('a find step resumes after the member it stopped at, by score and bytes', () => {
  it('misses no member that stayed, when the members around the cursor go between steps', async () => {
    const key = 'queues:ties:delayed';
    // 200 members, most of one score (a bulk of jobs delayed to the same second), some before and after.
    const members = Array.from({ length: 200 }, (_, n) => `{"uuid":"m-${String(n).padStart(3, '0')}","id":"${n}"}`);
    const scoreOf = (n: number) => (n < 20 ? 100 : n >= 180 ? 300 : 200);
    await raw.zadd(key, ...members.flatMap((member, n) => [scoreOf(n), member]));
    const seen = new Set<string>();
    let after = ['', ''];
    let steps = 0;
    do {
      const [score, member, ...found] = await runStep<string[]>(
        client,
        'lqbFindZset',
        [key],
        [...after, '"uuid":"m-', '"uuid":"m-', 7, 1 << 20],
      );
      for (let i = 1; i < found.length; i += 2) seen.add(found[i]!);
      after = [score!, member!];
      steps++;
      // Between steps the cursor's own member goes, and the one after it, and one long seen.
      if (member) await raw.zrem(key, member, members[members.indexOf(member) + 1] ?? '', members[steps] ?? '');
    } while (after[0] !== '' && steps < 1000);
    const left = await raw.zrange(key, 0, -1);
    const missed = left.filter((member) => !seen.has(member));
    expect(missed, 'members that stayed in the set and no step saw').toEqual([]);
    expect(steps, 'the walk did not end').toBeLessThan(1000);
    await raw.del(key);
  });

  it('walks a list from its tail and sees every job that stayed, while jobs are popped and pushed between steps', async () => {
    const key = 'queues:moving';
    await raw.rpush(key, ...Array.from({ length: 300 }, (_, n) => `{"uuid":"l-${n}"}`));
    const seen = new Set<string>();
    for (let looked = 0, n = 300; looked >= 0; n++) {
      const [next, , , ...found] = await runStep<[number, number, string, ...string[]]>(
        client,
        'lqbFindList',
        [key],
        [looked, '"uuid":"l-', '"uuid":"l-', 11],
      );
      for (const payload of found) seen.add(payload);
      looked = next;
      await raw.lpop(key, 3);
      await raw.rpush(key, `{"uuid":"l-${n}"}`);
    }
    const left = await raw.lrange(key, 0, -1);
    const before = left.filter((payload) => Number(JSON.parse(payload).uuid.slice(2)) < 300);
    expect(
      before.filter((payload) => !seen.has(payload)),
      'jobs on the list from the start that no step saw',
    ).toEqual([]);
    await raw.del(key);
  });
});

describe('find while an expired reservation is given back to the list during the walk', () => {
  it('finds the job on the list, where it arrived after the list walk had passed the tail (and left the reserved zset it walks next)', async () => {
    const name = 'given-back';
    const key = `queues:${name}`;
    await raw.rpush(key, ...Array.from({ length: 2000 }, (_, n) => `{"uuid":"r-${n}","id":"r-${n}","data":"${'x'.repeat(200)}"}`));
    const expired = '{"uuid":"gone-1","displayName":"Expired","id":"gone-1","attempts":1}';
    await raw.zadd(`${key}:reserved`, Math.floor(Date.now() / 1000) - 5, expired);
    const own = connectRedis({ url: `redis://127.0.0.1:${server.port}` });
    try {
      const queue = new RedisQueue(own, { defaultQueue: name });
      // After the first list step, a worker's reserve gives the expired reservation back to the
      // tail of the list, as Laravel's migration of expired jobs does.
      const steps = own as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const walk = steps.lqbFindList!;
      let listSteps = 0;
      steps.lqbFindList = async (...args: unknown[]) => {
        const reply = await walk.apply(own, args);
        if (++listSteps === 1) await raw.multi().zrem(`${key}:reserved`, expired).rpush(key, expired).rpush(`${key}:notify`, 1).exec();
        return reply;
      };
      const found = await queue.find('gone-1');
      expect(listSteps, 'the list was walked in one step: the move came after the walk').toBeGreaterThan(2);
      expect(found?.state, 'gone-1, on the ready list from the first step on, was not found').toBe('ready');
    } finally {
      own.disconnect();
      await raw.del(key, `${key}:reserved`, `${key}:notify`);
    }
  });
});
