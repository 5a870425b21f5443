/**
 * A job's own page (api/jobs/UUID): a queued job read from where a list saw it, a failed job
 * from failed_jobs with its whole trace and side, and, under Horizon 5.22.1's own records
 * (fixtures/horizon), a failed job with the retry Horizon made of it and that retry with the job
 * it retries. Payloads and traces are what Laravel wrote (fixtures/laravel, fixtures/horizon).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisQueue } from '../../src/redis/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { HorizonView } from '../../src/ui/horizon.js';
import { serveDashboard } from '../helpers/ui.js';
import { debianPayloads } from '../helpers/laravel.js';
import { horizonFixtureId as ID, loadHorizonLastState } from '../helpers/horizon-state.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix, REDIS_URL } from '../helpers/redis.js';

/** Horizon's fixture: C failed and was retried from Horizon's Failed tab as C′, which completed. */
const [C, C2] = [ID(3), ID(5)];

let prefix: string;
let dir: string;
let served: { base: string; close: () => Promise<void> } | undefined;
let base: string;
let trace: string;
const queued = debianPayloads()
  .filter((record) => !record.appKey && record.payload.length < 4000)
  .slice(0, 3);
const uuidOf = (payload: string) => (JSON.parse(payload) as { uuid: string }).uuid;

const get = async (path: string): Promise<any> => {
  const response = await fetch(`${base}/${path}`);
  expect(response.status, `GET ${path}: ${response.status}`).toBe(200);
  return response.json();
};

beforeAll(async () => {
  prefix = uniquePrefix('ui-job-page');
  dir = mkdtempSync(join(tmpdir(), 'lqb-ui-job-'));
  await loadHorizonLastState(prefix, `${prefix}horizon:`);
  const client = prefixedClient(prefix);
  await new RedisQueue(client).bulkRaw(
    queued.map((record) => record.payload),
    'pages',
  );
  client.disconnect();
  // PHP's own trace of C's failure, as Horizon kept it, in failed_jobs beside a queued job's payload.
  const raw = rawClient();
  trace = (await new HorizonView(raw as never, `${prefix}horizon:`).details(C))!.exception!;
  raw.disconnect();
  const failer = DatabaseUuidFailedJobProvider.fromUrl(join(dir, 'failed.sqlite'));
  await failer.log('redis', 'pages', queued[0]!.payload, trace);
  await failer.close();
  served = await serveDashboard({
    settings: { redis: REDIS_URL, prefix, failedDb: join(dir, 'failed.sqlite') },
    horizonPrefix: `${prefix}horizon:`,
  });
  base = served.base;
});

afterAll(async () => {
  await served?.close();
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe('a job’s own page', () => {
  it('reads a queued job from where its list saw it: the envelope’s fields, the command, the download', async () => {
    const record = queued[1]!;
    const uuid = uuidOf(record.payload);
    const page = await get(`api/jobs/${uuid}?queue=pages&state=ready&offset=1`);
    const envelope = JSON.parse(record.payload) as Record<string, unknown>;
    expect(page.foundIn, `${record.name}: where it was found`).toBe('ready');
    expect(page.summary.uuid, `${record.name}: uuid`).toBe(uuid);
    for (const key of ['maxTries', 'timeout', 'retryUntil', 'backoff', 'job', 'displayName'])
      expect(page.envelope[key], `${record.name}: the envelope's ${key}`).toEqual(envelope[key]);
    expect(page.envelope.commandName, `${record.name}: data.commandName`).toBe((envelope.data as { commandName: string }).commandName);
    expect(page.envelope.data, `${record.name}: data is shown decoded, not raw`).toBeUndefined();
    expect(page.download, `${record.name}: the download`).toBe(`api/queues/pages/payload?state=ready&offset=1&uuid=${uuid}`);
    const downloaded = await fetch(`${base}/${page.download}`);
    expect(await downloaded.text(), `${record.name}: the download is the payload as stored`).toBe(record.payload);
  });

  it('finds a queued job by its uuid alone along the queues, when the place a list saw moved', async () => {
    const record = queued[2]!;
    const uuid = uuidOf(record.payload);
    for (const query of ['?queue=pages&state=ready&offset=0', '']) {
      const page = await get(`api/jobs/${uuid}${query}`);
      expect([page.foundIn, page.queue], `${record.name} (${query || 'its uuid alone'}): where it was found`).toEqual(['ready', 'pages']);
      expect(page.download, `${record.name}: the download by uuid`).toBe(`api/jobs/${uuid}/payload`);
      const downloaded = await fetch(`${base}/${page.download}`);
      expect(await downloaded.text(), `${record.name}: the download is the payload as stored`).toBe(record.payload);
    }
  });

  it('shows a failed job from failed_jobs with its whole trace, and the side its frames name', async () => {
    const uuid = uuidOf(queued[0]!.payload);
    const page = await get(`api/jobs/${uuid}`);
    expect(page.foundIn, 'found in').toBe('failed');
    expect(page.queue, 'its queue').toBe('pages');
    expect(page.exception, 'the whole trace, as failed_jobs holds it').toBe(trace);
    expect(page.side, 'C’s trace is PHP’s').toBe('php');
    expect(page.download).toBe(`api/failed/${uuid}/payload`);
  });

  it('under Horizon, gives a failed job its retries and the retry the job it retries', async () => {
    const failed = await get(`api/jobs/${C}`);
    expect(failed.foundIn, 'C: only Horizon holds it here').toBe('horizon');
    expect(failed.horizon.status, 'C: status').toBe('failed');
    expect(
      failed.horizon.retriedBy.map((retry: { id: string; status: string }) => [retry.id, retry.status]),
      'C: retried_by as Horizon wrote it',
    ).toEqual([[C2, 'completed']]);
    expect(failed.exception, 'C: the exception Horizon kept').toMatch(/^RuntimeException: CRM rejected user 42/);
    expect(failed.side, 'C: failed on PHP').toBe('php');
    const retry = await get(`api/jobs/${C2}`);
    expect(retry.horizon.retryOf, 'C′: retry_of').toBe(C);
    expect(retry.horizon.status, 'C′: status').toBe('completed');
    expect(retry.envelope.retry_of, 'C′: the envelope’s retry_of').toBe(C);
  });

  it('answers 404 for a uuid no record holds', async () => {
    const response = await fetch(`${base}/api/jobs/00000000-0000-4000-8000-00000000ffff`);
    expect(response.status).toBe(404);
  });
});
