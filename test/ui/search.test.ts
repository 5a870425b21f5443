/**
 * Search (api/search) over Redis queues and failed_jobs: by uuid, by class, by text in the
 * command, a window at a time with a cursor ("searched N of M"); an encrypted command's text
 * never matches, though the dashboard has the key. Payloads are Laravel 8.83's own
 * (fixtures/laravel) and the library's builder's for the bulk of a long queue.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { SEARCH_WINDOW, needlesOf } from '../../src/ui/search.js';
import { serveDashboard } from '../helpers/ui.js';
import { debianPayloads } from '../helpers/laravel.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix, REDIS_URL } from '../helpers/redis.js';

let prefix: string;
let dir: string;
let served: { base: string; close: () => Promise<void> } | undefined;
let base: string;
const fixtures = debianPayloads();
const encrypted = fixtures.find((record) => record.name === 'encrypted/cbc')!;
const podcast = fixtures.find((record) => JSON.parse(record.payload).displayName === 'App\\Jobs\\ProcessPodcast' && !record.appKey)!;
const failedOne = fixtures.find((record) => JSON.parse(record.payload).displayName === 'App\\Jobs\\ChargeCustomer')!;
/** The job the long queue hides past the first window. */
const needle = buildPayload(buildJob({ className: 'App\\Jobs\\Needle', properties: { note: 'café/au "lait"' } })).raw;

const search = async (query: string): Promise<any> => {
  const response = await fetch(`${base}/api/search?${query}`);
  expect(response.status, `search ${query}`).toBe(200);
  return response.json();
};

beforeAll(async () => {
  prefix = uniquePrefix('ui-search');
  dir = mkdtempSync(join(tmpdir(), 'lqb-ui-search-'));
  const client = prefixedClient(prefix);
  const queue = new RedisQueue(client);
  await queue.bulkRaw([encrypted.payload, podcast.payload], 'a-small');
  const filler = Array.from(
    { length: SEARCH_WINDOW + 500 },
    (_, n) => buildPayload(buildJob({ className: 'App\\Jobs\\Filler', properties: { n } })).raw,
  );
  await queue.bulkRaw([...filler, needle], 'b-long');
  client.disconnect();
  const failer = DatabaseUuidFailedJobProvider.fromUrl(join(dir, 'failed.sqlite'));
  await failer.log('redis', 'a-small', failedOne.payload, 'RuntimeException: declined');
  await failer.close();
  served = await serveDashboard({
    settings: { redis: REDIS_URL, prefix, failedDb: join(dir, 'failed.sqlite'), key: encrypted.appKey },
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

describe('search', () => {
  it('finds a class as its payload spells it, in the queue and place it is', async () => {
    const found = await search(`q=${encodeURIComponent('App\\Jobs\\ProcessPodcast')}`);
    expect(
      found.hits.map((hit: { where: string; queue: string; offset: number; name: string }) => [hit.where, hit.queue, hit.offset, hit.name]),
      'hits for App\\Jobs\\ProcessPodcast',
    ).toEqual([['ready', 'a-small', 1, 'App\\Jobs\\ProcessPodcast']]);
  });

  it('never matches an encrypted command’s text, and finds the job by its class', async () => {
    const token = String(encrypted.expect.props.cardToken);
    const first = await search(`q=${encodeURIComponent(token)}`);
    let next = first.next;
    let hits = first.hits.length;
    while (next) {
      const more = await search(`q=${encodeURIComponent(token)}&cursor=${next}`);
      hits += more.hits.length;
      next = more.next;
    }
    expect(hits, `hits for the encrypted job's card token ${token}`).toBe(0);
    const byClass = await search(`q=${encodeURIComponent('App\\Jobs\\ChargeCard')}`);
    expect(byClass.hits[0]?.encrypted, 'ChargeCard found by class, shown encrypted').toBe(true);
    expect(byClass.hits[0]?.properties, 'ChargeCard: no properties shown').toBeNull();
  });

  it('finds a failed job by its uuid in failed_jobs', async () => {
    const uuid = (JSON.parse(failedOne.payload) as { uuid: string }).uuid;
    let answer = await search(`q=${uuid}`);
    const hits = [...answer.hits];
    while (answer.next) {
      answer = await search(`q=${uuid}&cursor=${answer.next}`);
      hits.push(...answer.hits);
    }
    expect(
      hits.map((hit: { where: string; uuid: string }) => [hit.where, hit.uuid]),
      `hits for ${uuid}`,
    ).toEqual([['failed', uuid]]);
  });

  it('reads a window at a time, says how much it has searched, and goes on from its cursor', async () => {
    const q = `q=${encodeURIComponent('café/au "lait"')}`;
    expect(needlesOf('café/au "lait"'), 'the JSON spellings looked for').toContain('caf\\u00e9\\/au \\"lait\\"');
    const first = await search(q);
    expect(first.total, 'jobs there are: 2 + the long queue + 1 failed').toBe(2 + SEARCH_WINDOW + 501 + 1);
    expect(first.hits, 'the first window: the needle is past it').toEqual([]);
    expect(first.searched, 'searched in the first window').toBe(SEARCH_WINDOW);
    const second = await search(`${q}&cursor=${first.next}`);
    expect(
      second.hits.map((hit: { queue: string; offset: number; name: string }) => [hit.queue, hit.offset, hit.name]),
      'the needle, found in the second window',
    ).toEqual([['b-long', SEARCH_WINDOW + 500, 'App\\Jobs\\Needle']]);
  });
});
