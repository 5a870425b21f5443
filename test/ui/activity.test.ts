/**
 * Who runs what (api/activity), the workers (api/workers), Node's completed jobs (api/completed)
 * and the overview's summary, from what a real Node worker recorded while it ran jobs Laravel
 * 8.83 made (fixtures/laravel): one class completed on Node, one failed on Node (its trace
 * Node's), and a failure PHP recorded (a trace Horizon kept of PHP's worker, fixtures/horizon).
 * No Horizon runs here: PHP's finished jobs are said to be unknown, never zero.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type LaravelQueue } from '../../src/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { HorizonView } from '../../src/ui/horizon.js';
import { serveDashboard } from '../helpers/ui.js';
import { debianPayloads } from '../helpers/laravel.js';
import { horizonFixtureId, loadHorizonLastState } from '../helpers/horizon-state.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix, REDIS_URL } from '../helpers/redis.js';
import { RedisQueue } from '../../src/redis/index.js';

const PODCAST = 'App\\Jobs\\ProcessPodcast';
const CHARGE = 'App\\Jobs\\ChargeCustomer';
const nameOf = (payload: string) => (JSON.parse(payload) as { displayName: string }).displayName;
const plain = debianPayloads().filter((record) => !record.appKey);
const podcasts = plain.filter((record) => nameOf(record.payload) === PODCAST).slice(0, 4);
const charge = plain.find((record) => nameOf(record.payload) === CHARGE)!;

let prefix: string;
let dir: string;
let queue: LaravelQueue;
let running: Promise<unknown>;
let stop: () => void;
let served: { base: string; close: () => Promise<void> } | undefined;
let base: string;

const get = async (path: string): Promise<any> => {
  const response = await fetch(`${base}/${path}`);
  expect(response.status, `GET ${path}`).toBe(200);
  return response.json();
};

beforeAll(async () => {
  prefix = uniquePrefix('ui-activity');
  dir = mkdtempSync(join(tmpdir(), 'lqb-ui-activity-'));
  const failedDb = join(dir, 'failed.sqlite');
  // A failure PHP's worker recorded: the trace Horizon kept of it, in failed_jobs.
  await loadHorizonLastState(`${prefix}fixture:`, `${prefix}fixture-horizon:`);
  const raw = rawClient();
  const phpTrace = (await new HorizonView(raw as never, `${prefix}fixture-horizon:`).details(horizonFixtureId(3)))!;
  raw.disconnect();
  const failer = DatabaseUuidFailedJobProvider.fromUrl(failedDb);
  await failer.log('redis', 'work', phpTrace.payload!, phpTrace.exception!);
  await failer.close();

  queue = await connect({ redis: REDIS_URL, prefix, failedDb, logger: false });
  const pusher = prefixedClient(prefix);
  await new RedisQueue(pusher).bulkRaw(
    [...podcasts, charge].map((record) => record.payload),
    'work',
  );
  pusher.disconnect();
  const worker = queue.worker(
    {
      [PODCAST]: async () => undefined,
      // Its payload allows 5 tries: the handler fails it for good, as $this->fail() does.
      [CHARGE]: async (job: { fail: (error: Error) => Promise<void> }) => job.fail(new Error('card declined')),
    },
    { queues: ['work'], sleep: 0.05, tries: 1, memory: 0, record: { flushEvery: 1 } },
  );
  running = worker.run();
  stop = () => void worker.stop();
  const deadline = Date.now() + 15_000;
  while ((await queue.size('work')) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  served = await serveDashboard({ settings: { redis: REDIS_URL, prefix, failedDb }, horizonPrefix: false });
  base = served.base;
  // The record is written every second: wait until the last job is in it.
  const flushed = Date.now() + 5_000;
  while (Date.now() < flushed) {
    const activity = await get('api/activity');
    if (activity.classes.some((row: { name: string; node: { failed: number } }) => row.name === CHARGE && row.node.failed === 1)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

afterAll(async () => {
  stop?.();
  await running;
  await queue?.close();
  await served?.close();
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe('who runs what, from Node’s record and failed_jobs', () => {
  it('counts per class what Node ran and failed, the failures by side, which classes Node takes, and PHP’s runs as unknown', async () => {
    const activity = await get('api/activity');
    const row = (name: string) => activity.classes.find((r: { name: string }) => r.name === name);
    expect(activity.horizon, 'no Horizon here').toBeNull();
    expect(row(PODCAST)?.node, `${PODCAST}: on Node`).toMatchObject({ completed: podcasts.length, failed: 0 });
    expect(row(PODCAST)?.horizon, `${PODCAST}: PHP's runs unknown without Horizon`).toBeNull();
    expect(row(PODCAST)?.nodeHandles, `${PODCAST}: a running Node worker has its handler`).toBe(true);
    expect(row(CHARGE)?.node, `${CHARGE}: failed on Node`).toMatchObject({ completed: 0, failed: 1 });
    expect(row(CHARGE)?.failed, `${CHARGE}: its failure's side`).toEqual({ php: 0, node: 1, unknown: 0 });
    expect(row('App\\Jobs\\SyncUser')?.failed, 'SyncUser: PHP’s failure').toEqual({ php: 1, node: 0, unknown: 0 });
    expect(row('App\\Jobs\\SyncUser')?.nodeHandles, 'SyncUser: no Node handler').toBe(false);
    const minutes = row(PODCAST)?.runtimePerMinute.filter((ms: number | null) => ms !== null) ?? [];
    expect(minutes.length, `${PODCAST}: the minutes with a runtime`).toBeGreaterThan(0);
    for (const ms of minutes) expect(ms, `${PODCAST}: a minute's mean runtime (ms)`).toBeGreaterThanOrEqual(0);
    const work = activity.queues.find((r: { name: string }) => r.name === 'work');
    expect(work?.node, 'queue work: on Node').toMatchObject({ completed: podcasts.length, failed: 1 });
    expect(
      work?.perMinute.reduce((a: number, b: number) => a + b, 0),
      'queue work: per minute, Node’s finished jobs',
    ).toBe(podcasts.length + 1);
  });

  it('lists the Node worker from its heartbeat, and the jobs it completed', async () => {
    const workers = await get('api/workers');
    expect(workers.horizon, 'no Horizon here').toBeNull();
    expect(
      workers.node.map((w: { pid: number; queues: string[]; concurrency: number }) => [w.pid, w.queues, w.concurrency]),
      'Node workers',
    ).toEqual([[process.pid, ['work'], 1]]);
    const completed = await get('api/completed');
    expect(
      completed.jobs.map((job: { uuid: string; className: string }) => [job.uuid, job.className]).sort(),
      'the jobs Node completed',
    ).toEqual(podcasts.map((record) => [(JSON.parse(record.payload) as { uuid: string }).uuid, PODCAST]).sort());
  });

  it('sums the overview: jobs past hour as Node’s record counts them, failures past 7 days, workers and processes', async () => {
    const overview = await get('api/overview');
    expect(overview.summary, `the summary: ${JSON.stringify(overview.summary)}`).toMatchObject({
      finishedPastHour: podcasts.length,
      failedPastWeek: 2,
      nodeWorkers: 1,
      processes: 1,
      horizon: null,
    });
    const work = overview.queues.find((q: { name: string }) => q.name === 'work');
    expect(work.history.finishedFrom, 'queue work: who counted its finished jobs').toEqual(['node']);
  });
});
