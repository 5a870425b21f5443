/**
 * The dashboard over Horizon's records as Horizon 5.22.1 itself wrote them on Laravel 8.83: the
 * last state of fixtures/horizon/events.jsonl (jobs completed, one failed and retried, one
 * silenced, one delayed and pending) loaded under this test's prefixes. The handler's JSON says
 * each job's Horizon status, the queue's throughput and runtime as Horizon measured them, and
 * Horizon's lists; under a prefix with no records, it says nothing of Horizon.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboard, type Dashboard } from '../../src/ui/index.js';
import { HorizonView } from '../../src/ui/horizon.js';
import { HorizonSupervisor } from '../../src/horizon/HorizonSupervisor.js';
import { rawClient, removePrefix, uniquePrefix, REDIS_URL } from '../helpers/redis.js';
import { horizonFixtureId as ID, loadHorizonLastState } from '../helpers/horizon-state.js';

/** The fixture's jobs: A done, B done (monitored), C failed, D silenced, C′ (C's retry) done, E delayed. */
const [A, C, D, E] = [ID(1), ID(3), ID(4), ID(6)];

let prefix: string;
let horizonPrefix: string;
let dir: string;
const running: { dashboard: Dashboard; server: Server; base: string }[] = [];

async function serve(horizon: string): Promise<string> {
  const dashboard = createDashboard({
    settings: { redis: REDIS_URL, prefix, failedDb: join(dir, 'failed.sqlite') },
    horizonPrefix: horizon,
  });
  const server = createServer(dashboard.handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  running.push({ dashboard, server, base });
  return base;
}

const get = async (url: string): Promise<any> => {
  const response = await fetch(url);
  expect(response.status, `GET ${url}`).toBe(200);
  return response.json();
};

beforeAll(async () => {
  prefix = uniquePrefix('ui-horizon');
  horizonPrefix = `${prefix}horizon:`;
  dir = mkdtempSync(join(tmpdir(), 'lqb-ui-horizon-'));
  await loadHorizonLastState(prefix, horizonPrefix);
});

afterAll(async () => {
  for (const { dashboard, server } of running) {
    await new Promise((resolve) => server.close(resolve));
    await dashboard.close();
  }
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe('the dashboard over Horizon 5.22.1’s own records', () => {
  it('reads each job’s record, the queue’s metrics and the lists as Horizon left them', async () => {
    const raw = rawClient();
    const view = new HorizonView(raw as never, horizonPrefix);
    try {
      expect(await view.present(), 'records under the prefix').toBe(true);
      expect(await new HorizonView(raw as never, `${prefix}elsewhere:`).present(), 'no records under another prefix').toBe(false);
      const records = await view.jobs([A, C, E, ID(9)]);
      expect([...records.keys()], 'the jobs that have a record').toEqual([A, C, E]);
      expect(records.get(A), 'A: completed').toMatchObject({ status: 'completed', queue: 'default', name: 'App\\Jobs\\GenerateReport' });
      expect(records.get(A)!.reservedAt, 'A: reserved_at as Horizon wrote it').toBe(1795636688.4972);
      expect(records.get(A)!.completedAt).toBe(1795636688.4982);
      expect(records.get(C), 'C: failed, its completion kept').toMatchObject({ status: 'failed', failedAt: 1795636688.7571 });
      expect(records.get(E), 'E: pending').toMatchObject({ status: 'pending', reservedAt: null });

      const metrics = await view.metrics('default');
      expect(metrics?.throughput, 'queue:default throughput').toBe(4);
      expect(metrics?.runtime, 'queue:default runtime (ms)').toBeCloseTo(4.985, 6);
      expect(await view.metrics('mail'), 'a queue Horizon does not measure').toBeUndefined();

      const recent = await view.list('recent', 0, 2);
      expect(recent.total, 'recent_jobs').toBe(6);
      expect(
        recent.jobs.map((job) => job.id),
        'newest first',
      ).toEqual([E, ID(5)]);
      const failed = await view.list('failed', 0, 10);
      expect(
        failed.jobs.map((job) => [job.id, job.status]),
        'failed_jobs',
      ).toEqual([[C, 'failed']]);
      expect(failed.jobs[0]!.exception, 'C: the exception Horizon kept').toMatch(/^RuntimeException: CRM rejected user 42/);
    } finally {
      raw.disconnect();
    }
  });

  it('says per job what Horizon’s record says, and takes the queue’s throughput from Horizon', async () => {
    const base = await serve(horizonPrefix);
    const overview = await get(`${base}/api/overview`);
    expect(overview.horizon, 'Horizon named in the overview').toEqual({ prefix: horizonPrefix });
    const queue = overview.queues.find((q: { name: string }) => q.name === 'default');
    expect(queue, 'default: counts').toMatchObject({ ready: 0, delayed: 1, reserved: 0 });
    expect(queue.horizon.throughput, 'default: Horizon’s throughput').toBe(4);
    expect(queue.horizon.runtime).toBeCloseTo(4.985, 6);
    expect(queue.history.finishedFrom, 'the chart’s finished jobs').toEqual(['horizon']);
    expect(
      queue.history.finished.reduce((a: number, b: number) => a + b, 0),
      'finished in the chart: Horizon’s count',
    ).toBe(4);

    const delayed = await get(`${base}/api/queues/default/jobs?state=delayed`);
    expect(
      delayed.jobs.map((job: { uuid: string; horizon?: { status: string } }) => [job.uuid, job.horizon?.status]),
      'E on :delayed, pending for Horizon',
    ).toEqual([[E, 'pending']]);
    expect(delayed.jobs[0].side, 'a queued job: no record says which side will run it').toBeNull();

    const silenced = await get(`${base}/api/horizon/completed`);
    expect(
      silenced.jobs.map((job: { uuid: string }) => job.uuid),
      'completed_jobs (D is silenced: not there)',
    ).toEqual([ID(5), ID(2), A]);
    expect(silenced.jobs.some((job: { uuid: string }) => job.uuid === D)).toBe(false);
    // Horizon's record of a completed job is the same bytes whichever side ran it: no side.
    expect(
      silenced.jobs.map((job: { side: unknown }) => job.side),
      'completed jobs: no side',
    ).toEqual([null, null, null]);

    const failed = await get(`${base}/api/horizon/failed`);
    const c = failed.jobs[0];
    expect(c, 'C in Horizon’s failed list').toMatchObject({
      uuid: C,
      name: 'App\\Jobs\\SyncUser',
      queue: 'default',
      horizon: { status: 'failed' },
    });
    expect(c.exception).toMatch(/^RuntimeException: CRM rejected user 42/);
    expect(c.side, 'C failed in Laravel’s worker: its trace’s frames are PHP’s').toBe('php');
    expect(c.properties.user, 'the model SerializesModels left, as Class#id').toBe('App\\Models\\User#42');
    expect((await fetch(`${base}/api/horizon/nothing`)).status, 'a list Horizon has not').toBe(404);
  });

  it('lists the tags Horizon monitors with their jobs, a tag’s jobs and failed jobs, and Horizon’s silenced list', async () => {
    const base = await serve(horizonPrefix);
    expect((await get(`${base}/api/horizon/tags`)).tags, 'the monitored tags, as Horizon’s Monitoring page counts them').toEqual([
      { tag: 'billing', jobs: 1, failed: 0 },
    ]);
    const billing = await get(`${base}/api/horizon/tags/billing`);
    expect(
      billing.jobs.map((job: { uuid: string; horizon: { status: string } }) => [job.uuid, job.horizon.status]),
      'billing’s jobs: B, completed',
    ).toEqual([[ID(2), 'completed']]);
    const failed = await get(`${base}/api/horizon/tags/${encodeURIComponent('App\\Models\\User:42')}?failed=1`);
    expect(
      failed.jobs.map((job: { uuid: string; side: string }) => [job.uuid, job.side]),
      'the failed jobs tagged App\\Models\\User:42: C, failed on PHP',
    ).toEqual([[C, 'php']]);
    const silenced = await get(`${base}/api/horizon/silenced`);
    expect(
      silenced.jobs.map((job: { uuid: string }) => job.uuid),
      'Horizon’s silenced list: D',
    ).toEqual([D]);
  });

  it('counts who runs what per class as Horizon measured each (job:NAME), over the hour', async () => {
    const base = await serve(horizonPrefix);
    const activity = await get(`${base}/api/activity`);
    expect(activity.horizon, 'Horizon named').toEqual({ prefix: horizonPrefix });
    const raw = rawClient();
    try {
      const measured = (await raw.smembers(`${horizonPrefix}measured_jobs`)).map((key) => key.slice(`${horizonPrefix}job:`.length)).sort();
      expect(measured.length, 'classes Horizon measured').toBeGreaterThan(0);
      for (const name of measured) {
        const throughput = Number(await raw.hget(`${horizonPrefix}job:${name}`, 'throughput'));
        const row = activity.classes.find((r: { name: string }) => r.name === name);
        expect(row?.horizon?.throughput, `${name}: Horizon's throughput`).toBe(throughput);
        expect(
          row?.horizon?.perMinute.reduce((a: number, b: number) => a + b, 0),
          `${name}: Horizon's counts over the hour`,
        ).toBe(throughput);
        const runtime = Number(await raw.hget(`${horizonPrefix}job:${name}`, 'runtime'));
        const runtimes = row?.horizon?.runtimePerMinute.filter((ms: number | null) => ms !== null);
        expect(runtimes, `${name}: Horizon's mean runtime over the hour`).toEqual([Math.round(runtime * 100) / 100]);
      }
    } finally {
      raw.disconnect();
    }
  });

  it('lists Horizon’s masters and their supervisors seen in the last 14 s, with their processes per queue', async () => {
    const raw = rawClient();
    const supervisor = new HorizonSupervisor(raw as never, {
      prefix: horizonPrefix,
      connection: 'redis',
      queues: ['default', 'mail'],
      processes: 4,
      masterName: 'web-1-ab12',
    });
    try {
      await supervisor.beat();
      const workers = await get(`${await serve(horizonPrefix)}/api/workers`);
      expect(
        workers.horizon.map((master: { name: string; status: string; supervisors: { name: string; processes: object }[] }) => [
          master.name,
          master.status,
          master.supervisors.map((s) => [s.name, s.processes]),
        ]),
        `the masters Horizon’s dashboard lists: ${JSON.stringify(workers.horizon)}`,
      ).toEqual([['web-1-ab12', 'running', [['web-1-ab12:node', { 'redis:default,mail': 4 }]]]]);
      await raw.zadd(`${horizonPrefix}masters`, Math.floor(Date.now() / 1000) - 60, 'gone-1-zz99');
      await raw.hset(`${horizonPrefix}master:gone-1-zz99`, { name: 'gone-1-zz99', pid: '1', status: 'running' });
      const again = await get(`${await serve(horizonPrefix)}/api/workers`);
      expect(
        again.horizon.map((master: { name: string }) => master.name),
        'a master not seen for a minute is not listed',
      ).toEqual(['web-1-ab12']);
    } finally {
      await supervisor.stop();
      raw.disconnect();
    }
  });

  it('under a prefix with no records, says nothing of Horizon', async () => {
    const base = await serve(`${prefix}elsewhere:`);
    const overview = await get(`${base}/api/overview`);
    expect(overview.horizon, 'Horizon in the overview').toBeNull();
    const queue = overview.queues.find((q: { name: string }) => q.name === 'default');
    expect(queue.horizon, 'default: no Horizon metrics').toBeUndefined();
    expect(queue.history.finishedFrom, 'no record counts finished jobs').toEqual([]);
    expect(queue.history.finished, 'no finished series without a record').toBeNull();
    const delayed = await get(`${base}/api/queues/default/jobs?state=delayed`);
    expect(delayed.jobs[0].horizon, 'E without Horizon').toBeUndefined();
    expect((await fetch(`${base}/api/horizon/recent`)).status).toBe(404);
  });
});
