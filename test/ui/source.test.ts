/**
 * RedisQueueSource's pages: read whole (a download, a search, lqb record) or cut for a list, where
 * a job past DECODED_UP_TO bytes comes back as its size, head and tail only (page-ends.lua), from
 * the ready list and from a zset alike; each smaller job whole, and in order.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { DECODED_UP_TO, HEAD_READ, TAIL_READ } from '../../src/ui/jobs.js';
import { RedisQueueSource } from '../../src/ui/source.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

let prefix: string;
let client: ReturnType<typeof prefixedClient>;
let source: RedisQueueSource;
const small = buildPayload(buildJob({ className: 'App\\Jobs\\Small', properties: { n: 1 } })).raw;
const large = buildPayload(buildJob({ className: 'App\\Jobs\\Large', properties: { blob: 'é'.repeat(DECODED_UP_TO) } })).raw;

beforeEach(async () => {
  prefix = uniquePrefix('ui-source');
  client = prefixedClient(prefix);
  const queue = new RedisQueue(client);
  await queue.bulkRaw([small, large, small], 'q');
  await queue.laterRaw(600, large, 'q');
  await queue.laterRaw(700, small, 'q');
  source = new RedisQueueSource(queue, prefix);
});

afterEach(async () => {
  client.disconnect();
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
});

describe('RedisQueueSource.page', () => {
  it.each(['ready', 'delayed'] as const)(
    'cut: a %s job past DECODED_UP_TO comes as its size and two ends, the others whole',
    async (state) => {
      const { total, jobs } = await source.page('q', state, 0, 10, { cut: true });
      const expected = state === 'ready' ? [small, large, small] : [large, small];
      expect(total, `${state}: total`).toBe(expected.length);
      jobs.forEach((job, i) => {
        const payload = expected[i]!;
        if (payload === small)
          expect({ payload: job.payload, cut: job.cut }, `${state} job ${i}: whole`).toEqual({ payload, cut: undefined });
        else {
          const bytes = Buffer.from(payload);
          expect(job.cut?.bytes, `${state} job ${i}: its size in bytes`).toBe(bytes.length);
          expect(Buffer.byteLength(job.payload), `${state} job ${i}: its head, in bytes`).toBeLessThanOrEqual(HEAD_READ + 3);
          expect(payload.startsWith(job.payload.replace(/\uFFFD$/, '')), `${state} job ${i}: the head is the payload's start`).toBe(true);
          expect(job.cut?.tail, `${state} job ${i}: its tail`).toBe(bytes.subarray(-TAIL_READ).toString('utf8'));
        }
        if (state === 'delayed') expect(job.until, `${state} job ${i}: its due time`).toBeGreaterThan(Date.now() / 1000);
      });
    },
  );

  it('whole: every job as stored', async () => {
    const { jobs } = await source.page('q', 'ready', 0, 10);
    expect(
      jobs.map((job) => job.payload === large || job.payload === small),
      'each payload whole',
    ).toEqual([true, true, true]);
    expect(jobs[1]!.cut, 'no cut').toBeUndefined();
  });
});
