/**
 * readyAgain under a producer whose connections are killed: every dispatch in flight when its
 * connection drops waits for the same reconnect. One listener serves them all, so many
 * dispatches at once raise no MaxListenersExceededWarning (they used to: a 'ready' listener
 * each), and every dispatch acknowledged is in Redis. On a redis-server of the test's own, since
 * CLIENT KILL drops every normal connection of the server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '../../src/connect/index.js';
import { ownRedisWithAdmin } from '../helpers/redis.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many dispatches are in flight at once: well past EventEmitter's ten listeners. */
const LANES = 40;
const KILLS = 30;

describe('a producer with many dispatches in flight while CLIENT KILL drops its connection, again and again', () => {
  it('raises no MaxListenersExceededWarning, and every acknowledged dispatch is queued', async () => {
    const { url, admin } = await ownRedisWithAdmin(cleanups);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    cleanups.push(() => void process.off('warning', onWarning));
    const queue = await connect({
      redis: url,
      prefix: 'p:',
      defaultQueue: 'kills',
      commandTimeout: 60_000,
      telemetry: false,
    });
    cleanups.push(() => queue.close());

    let killing = true;
    let kills = 0;
    const killer = (async () => {
      while (killing && kills < KILLS) {
        await pause(100);
        const dropped = await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes').catch(() => 0);
        if (Number(dropped) > 0) kills++;
      }
    })();
    const acknowledged: string[] = [];
    const reported: string[] = [];
    const lane = async (n: number) => {
      for (let k = 0; killing; k++) {
        try {
          acknowledged.push((await queue.dispatch('App\\Jobs\\Tick', { n, k })).uuid!);
        } catch (error) {
          reported.push((error as Error).message);
        }
      }
    };
    const lanes = Array.from({ length: LANES }, (_, n) => lane(n));
    await killer;
    killing = false;
    await Promise.all(lanes);

    const queued = new Set((await admin.lrange('p:queues:kills', 0, -1)).map((payload) => JSON.parse(payload).uuid as string));
    expect(kills, 'times CLIENT KILL dropped the producer’s connection').toBe(KILLS);
    expect(
      warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning')),
      'MaxListenersExceededWarnings raised',
    ).toEqual([]);
    expect(
      acknowledged.filter((uuid) => !queued.has(uuid)),
      'acknowledged dispatches not in the queue',
    ).toEqual([]);
    expect(
      reported.filter((message) => !/pushed/.test(message)),
      'failed dispatches whose error does not say whether the job was pushed',
    ).toEqual([]);
    expect(acknowledged.length, 'dispatches acknowledged').toBeGreaterThan(LANES);
  }, 120_000);
});
