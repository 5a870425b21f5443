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

  it('firstAttempt: read from the tail Laravel, Laravel 12 and Horizon write; false where the tail says otherwise or is not read', async () => {
    const head = '{"uuid":"u1","displayName":"App\\\\Jobs\\\\X","data":{"command":"O:1:\\"X\\":0:{}"},';
    const horizon = (tags: string, attempts = 0) =>
      `${head}"attempts":${attempts},"type":"job","tags":[${tags}],"silenced":false,"pushedAt":"1795636688.6775"}`;
    const cases: [string, string, boolean][] = [
      ['Laravel 8', `${head}"attempts":0}`, true],
      ['Laravel 12 (delay after attempts)', `${head}"attempts":0,"delay":null}`, true],
      ['retried', `${head}"attempts":2}`, false],
      ['Horizon, no tags', horizon(''), true],
      ['Horizon, tags with escapes', horizon('"App\\\\Models\\\\User:42","say \\"hi\\""'), true],
      ['Horizon, silenced', horizon('').replace('"silenced":false', '"silenced":true'), true],
      ["Horizon's retry", `${head}"attempts":0,"retry_of":"00000000-0000-4000-8000-000000000003"}`, true],
      ['Horizon, released once', horizon('"a"', 1), false],
      ['Horizon, tags past the tail read', horizon(Array.from({ length: 80 }, (_, i) => `"tag-number-${i}"`).join(',')), false],
      ['Horizon, a tag naming attempts', horizon('"\\"attempts\\":0"'), true],
      ['Horizon, retried, attempts 0 nested before', horizon('', 2).replace('"data":{', '"data":{"attempts":0,'), false],
    ];
    for (const [, text] of cases) expect(() => JSON.parse(text), 'each case is JSON').not.toThrow();
    for (const [, text] of cases) await queue.pushRaw(text);
    for (const [what, text, first] of cases) {
      const job = (await queue.pop())!;
      expect(job.raw, `${what}: reserved in push order`).toBe(text);
      expect(job.firstAttempt, `${what}: firstAttempt`).toBe(first);
      await job.delete();
    }
  });
});

afterAll(() => client.disconnect());
