/**
 * One round trip a job in steady state (issue 45): a worker at concurrency 1 that finishes a job
 * and asks for the next sends the delete and the reserve as one step (delete.lua then
 * reserve.lua, composed). Counted on a Redis of the test's own by the server's own command
 * statistics, not by timing: every command Redis ran while the worker emptied the queue, per job.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisQueue } from '../../src/redis/index.js';
import { Worker, buildJob, buildPayload } from '../../src/index.js';
import { startRedisServer } from '../../src/testing/redis-server.js';

const JOBS = 300;
/** What delete.lua and reserve.lua call inside Redis. */
const SCRIPT_CALLS = new Set([
  'time',
  'zrangebyscore',
  'zremrangebyrank',
  'rpush',
  'lpop',
  'rpop',
  'zadd',
  'zrem',
  'lrange',
  'llen',
  'lindex',
  'lpos',
  'lset',
  'lrem',
]);
const CLASS = 'App\\Jobs\\Count';

let server: { port: number; stop: () => void };
let client: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  client = new Redis({ port: server.port, host: '127.0.0.1', lazyConnect: false });
});

afterAll(() => {
  client.disconnect();
  server.stop();
});

/**
 * Calls of each command since the statistics were reset. A script's own calls are counted too,
 * under their names, so the steps a client sent are the EVAL and EVALSHA calls.
 */
async function commandCalls(): Promise<Record<string, number>> {
  const info = await client.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_(\S+?):calls=(\d+)/gm)) calls[match[1]!] = Number(match[2]);
  return calls;
}

describe('a worker at concurrency 1, in steady state', () => {
  it('sends one step a job: the finished job’s delete goes with the next reserve', async () => {
    const queue = new RedisQueue(client, { defaultQueue: 'trips', retryAfter: 90 });
    for (let i = 0; i < JOBS; i++) await queue.pushRaw(buildPayload(buildJob({ className: CLASS, properties: { n: i } })).raw);
    const ran: number[] = [];
    const worker = new Worker(
      queue,
      { [CLASS]: (job) => void ran.push(Number((job.command as { n: number }).n)) },
      { queues: ['trips'], sleep: 0.05, memory: 0, stopWhenEmpty: true, concurrency: 1 },
      { failer: false, onFailed: () => undefined },
    );
    await client.config('RESETSTAT');
    await worker.run();
    const calls = await commandCalls();
    const steps = (calls.eval ?? 0) + (calls.evalsha ?? 0);
    expect(ran.length, 'jobs the handler ran').toBe(JOBS);
    expect(new Set(ran).size, 'distinct jobs the handler ran').toBe(JOBS);
    expect(await client.zcard('queues:trips:reserved'), 'jobs left reserved (a delete that did not go out)').toBe(0);
    expect(await client.llen('queues:trips'), 'jobs left on the queue').toBe(0);
    expect(calls.zrem, 'ZREMs (a finished job leaving :reserved)').toBe(JOBS);
    // The first reserve goes alone, and so may the last delete.
    expect(
      steps,
      `steps (EVAL, EVALSHA) sent to Redis for ${JOBS} jobs; every command counted: ${JSON.stringify(calls)}`,
    ).toBeLessThanOrEqual(JOBS + 2);
    const others = Object.keys(calls).filter(
      (name) => !SCRIPT_CALLS.has(name) && !['eval', 'evalsha', 'info', 'config|resetstat'].includes(name),
    );
    expect(others, 'commands sent outside a step').toEqual([]);
  });
});
