/**
 * Horizon's scheduled work for a Node-only fleet, on the records the fixtures end with (Horizon
 * 5.22.1's own, after the whole scenario): the metrics snapshot, each point checked against
 * PHP's json_encode of the counters, and the trimming of the job lists by their trim settings.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { horizonSnapshot, trimHorizon } from '../../src/horizon/index.js';
import { REDIS_URL, rawClient, removePrefix } from '../helpers/redis.js';
import { connectRedis } from '../../src/redis/index.js';
import { runPhpScript } from '../helpers/php.js';
import { loadState, readHorizonFixtures } from './fixtures.js';

const base = `lqb-horizon-maint-${randomBytes(4).toString('hex')}-`;
const prefix = `${base}horizon:`;
const raw = rawClient();
const client = connectRedis({ url: REDIS_URL });
const final = readHorizonFixtures()
  .at(-1)!
  .after.filter((k) => k.key.startsWith('laravel_horizon:'));
/** The fixtures' clock: the last job was pushed at about this UNIX second. */
const fixtureNow = 1795636689;

beforeEach(async () => {
  await removePrefix(raw, base);
  await loadState(raw, final, `${base}database_`, prefix);
});

afterAll(async () => {
  await removePrefix(raw, base);
  raw.disconnect();
  client.disconnect();
});

const counters = (key: string) => final.find((k) => k.key === `laravel_horizon:${key}`)!.value as { throughput: string; runtime: string };

describe('horizonSnapshot', () => {
  it("stores each job's and queue's counters as a point, as Horizon's snapshot writes it, and starts them again", async () => {
    const now = fixtureNow + 300;
    expect(await horizonSnapshot(client, { prefix, now }), 'the lock was free').toBe(true);
    const jobs = ['App\\Jobs\\ChargeCustomer', 'App\\Jobs\\GenerateReport', 'App\\Jobs\\PruneCache', 'App\\Jobs\\SyncUser'];
    const points = [
      ...jobs.map((job) => ({
        key: `job:${job}`,
        point: { throughput: counters(`job:${job}`).throughput, runtime: counters(`job:${job}`).runtime, time: now },
      })),
      {
        key: 'queue:default',
        point: { throughput: counters('queue:default').throughput, runtime: counters('queue:default').runtime, wait: 0, time: now },
      },
    ];
    const expected = JSON.parse(runPhpScript('horizon-values.php', JSON.stringify(points.map((p) => p.point)), ['json'])) as string[];
    for (const [i, { key }] of points.entries()) {
      expect(await raw.zrange(`${prefix}snapshot:${key}`, 0, -1, 'WITHSCORES'), `snapshot:${key}`).toEqual([expected[i], String(now)]);
      expect(await raw.exists(`${prefix}${key}`), `${key} starts again`).toBe(0);
    }
    expect(await raw.get(`${prefix}last_snapshot_at`)).toBe(String(now));
    expect(await raw.smembers(`${prefix}measured_queues`), 'the measured sets stay').toEqual([`${prefix}queue:default`]);
    const lock = await raw.ttl(`${prefix}metrics:snapshot`);
    expect(lock > 260 && lock <= 270, `the lock held snapshot_lock − 30 s (${lock})`).toBe(true);
    expect(await horizonSnapshot(client, { prefix, now: now + 60 }), 'a second snapshot within the lock').toBe(false);
  });

  it('keeps the newest trim_snapshots points of each series', async () => {
    for (let i = 0; i < 5; i++) {
      await raw.del(`${prefix}metrics:snapshot`);
      await raw.hset(`${prefix}queue:default`, { throughput: String(i), runtime: '1' });
      await horizonSnapshot(client, { prefix, now: fixtureNow + i * 300, trimSnapshots: { queue: 2 } });
    }
    const times = (await raw.zrange(`${prefix}snapshot:queue:default`, 0, -1)).map((p) => (JSON.parse(p) as { time: number }).time);
    expect(times, 'the two newest points').toEqual([fixtureNow + 3 * 300, fixtureNow + 4 * 300]);
  });
});

describe('trimHorizon', () => {
  const members = async (list: string) => raw.zrange(`${prefix}${list}`, 0, -1);

  it('drops from each list the jobs older than its trim setting', async () => {
    expect(await trimHorizon(client, { prefix, now: fixtureNow + 30 }), 'nothing is old yet').toBe(0);
    await trimHorizon(client, { prefix, now: fixtureNow + 61 * 60 });
    for (const list of ['recent_jobs', 'pending_jobs', 'completed_jobs', 'silenced_jobs'])
      expect(await members(list), `${list} after 61 minutes`).toEqual([]);
    expect(await members('failed_jobs'), 'failed jobs stay a week').toEqual(['00000000-0000-4000-8000-000000000003']);
    expect(await members('monitored_jobs'), 'monitored jobs stay a week').toEqual(['00000000-0000-4000-8000-000000000002']);
    await trimHorizon(client, { prefix, now: fixtureNow + 10081 * 60 });
    for (const list of ['failed_jobs', 'recent_failed_jobs', 'monitored_jobs'])
      expect(await members(list), `${list} after a week`).toEqual([]);
  });

  it('takes the trim settings it is given', async () => {
    await trimHorizon(client, { prefix, now: fixtureNow + 10 * 60, trim: { recent: 5, pending: 120 } });
    expect(await members('recent_jobs'), 'recent: 5 minutes').toEqual([]);
    expect(await members('pending_jobs'), 'pending: 120 minutes').toEqual(['00000000-0000-4000-8000-000000000006']);
  });
});
