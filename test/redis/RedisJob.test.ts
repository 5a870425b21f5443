/**
 * A reserved job's views of its payload: a retried job is judged by its envelope before its
 * command is read, and the payload is then decoded from that envelope, not from the text again.
 * Jobs pushed and reserved on real Redis, the payloads built as Laravel 8 writes them.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { PayloadError, buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const prefix = uniquePrefix('redis-job');
const client = prefixedClient(prefix);
const queue = new RedisQueue(client, { defaultQueue: 'jobs' });

afterEach(async () => {
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
});

const pushed = (attempts: number) =>
  buildPayload(buildJob({ className: 'App\\Jobs\\Retried', properties: [{ name: 'n', value: 1 }] })).raw.replace(
    /"attempts":0}$/,
    `"attempts":${attempts}}`,
  );

describe('RedisJob', () => {
  it('a retried job: its envelope as pushed, then the payload decoded from that same envelope', async () => {
    const text = pushed(2);
    await queue.pushRaw(text);
    const job = (await queue.pop())!;
    expect(job.firstAttempt, 'attempts 2 in the envelope').toBe(false);
    const envelope = job.envelope!;
    expect(envelope.attempts, 'the envelope as pushed').toBe(2);
    expect(job.attempts(), 'this attempt, from the envelope').toBe(3);
    expect(job.id, 'id from the envelope').toBe(JSON.parse(text).id);
    expect(job.payload.envelope, 'the payload’s envelope is the one read before').toBe(envelope);
    expect(job.payload.raw, 'the payload as pushed').toBe(text);
    expect(job.payload.name).toBe('App\\Jobs\\Retried');
  });

  it('a payload that is not a JSON object: no envelope, and its payload says why', async () => {
    await queue.pushRaw('["not", "an", "envelope", {"attempts": 1}]');
    const job = (await queue.pop())!;
    expect(job.envelope, 'a JSON array is no envelope').toBeUndefined();
    expect(() => job.payload).toThrow(PayloadError);
    expect(() => job.payload).toThrow('payload is not a JSON object');
  });
  it('leadingUuid: the uuid a payload opens with, and none for one that opens otherwise', async () => {
    const cases: [string, string | undefined][] = [
      ['{"uuid":"2b0c1f6e-7d1a-4c3b-9a57-0f2d5e8c9b10","displayName":"X","attempts":0}', '2b0c1f6e-7d1a-4c3b-9a57-0f2d5e8c9b10'],
      ['{"uuid":"","displayName":"X","attempts":0}', undefined],
      ['{"uuid":"has space","attempts":0}', undefined],
      ['{"uuid":"' + 'a'.repeat(64) + '","attempts":0}', 'a'.repeat(64)],
      ['{"uuid":"' + 'a'.repeat(65) + '","attempts":0}', undefined],
      ['{"displayName":"X","uuid":"abc","attempts":0}', undefined],
      ['{"uuid":"abc', undefined],
    ];
    for (const [text] of cases) await queue.pushRaw(text);
    for (const [text, uuid] of cases) {
      const job = (await queue.pop())!;
      expect(job.raw, 'reserved in push order').toBe(text);
      expect(job.leadingUuid, `leadingUuid of ${text.slice(0, 40)}…`).toBe(uuid);
      await job.delete();
    }
  });
});

afterAll(() => client.disconnect());
