/**
 * dispatch() of classes whose backoff(), retryUntil(), displayName() and uniqueId() are methods
 * (php-fixture-gen/methods-app, read by `lqb shapes`): a translated method's result goes where
 * Laravel 8.83's dispatch puts it, as PHP computes it for the same job; a method it could not
 * translate is answered by a function of the job given to dispatch, or refused (uniqueId). Real
 * Redis; the expected values from Debian's PHP and Laravel.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type LaravelQueue } from '../../src/connect/index.js';
import { decodePayload } from '../../src/laravel/index.js';
import { METHODS_APP, RESERVE, laravelWritesReserve } from '../helpers/methods-app.js';
import { lqb, scratch, type Scratch } from '../helpers/processes.js';
import { REDIS_URL, rawClient, uniquePrefix, dropQueue } from '../helpers/redis.js';

const APP = METHODS_APP;
const prefix = uniquePrefix('dispatch-methods');
const s: Scratch = scratch(prefix, 'q');
let queue: LaravelQueue;
let shapesFile: string;

beforeAll(async () => {
  shapesFile = join(s.dir, 'lqb-shapes.json');
  const made = await lqb(['shapes', `--app=${APP}`, `--out=${shapesFile}`], s.env);
  expect(made.status, made.stderr).toBe(0);
  queue = await connect({ redis: REDIS_URL, prefix, failedDb: join(s.dir, 'failed.sqlite') });
});

afterAll(() => dropQueue(queue, prefix, s));

async function envelopeOf(queueName: string): Promise<Record<string, unknown>> {
  const raw = rawClient();
  const [payload] = await raw.lrange(`${prefix}queues:${queueName}`, 0, -1);
  raw.disconnect();
  expect(payload, `a job on ${queueName}`).toBeDefined();
  return decodePayload(payload!).envelope;
}

describe('dispatch of classes whose methods Laravel calls', () => {
  it('translated methods: backoff, retryUntil and displayName in the envelope and the lock key, as Laravel 8.83 writes them', async () => {
    const before = Math.floor(Date.now() / 1000);
    const pushed = await queue.dispatch('App\\Jobs\\ReserveProduct', RESERVE, { queue: 'translated', shapes: shapesFile });
    const envelope = await envelopeOf('translated');
    const expected = laravelWritesReserve(Number(envelope.retryUntil) - 300);
    expect(Number(envelope.retryUntil) - 300, 'retryUntil is now()->addMinutes(5)').toBeGreaterThanOrEqual(before);
    expect({ backoff: envelope.backoff, retryUntil: envelope.retryUntil, displayName: envelope.displayName }).toEqual({
      backoff: expected.backoff,
      retryUntil: expected.retryUntil,
      displayName: expected.displayName,
    });
    expect(pushed.uuid).toEqual(expect.any(String));
    const again = await queue.dispatch('App\\Jobs\\ReserveProduct', RESERVE, { queue: 'translated', shapes: shapesFile });
    expect(again, 'the second dispatch, refused under the lock Laravel names').toEqual({
      uuid: null,
      id: null,
      queue: 'translated',
      duplicate: true,
      lockKey: expected.lockKey,
    });
  });

  it('untranslated methods answered by functions of the job: their results in the envelope and the lock key, and no notice', async () => {
    const heard: unknown[] = [];
    const until = new Date(Date.UTC(2031, 0, 2, 3, 4, 5, 600));
    await queue.dispatch(
      'App\\Jobs\\Untranslatable',
      { product: { class: 'App\\Models\\Product', id: 7 }, sku: 'B2' },
      {
        queue: 'given',
        shapes: shapesFile,
        uniqueId: (job) => `${String(job.command.sku)}-${(job.command.product as { id: number }).id}`,
        backoff: (job) => (job.command.sku === '' ? 1 : 5),
        retryUntil: () => until,
        displayName: (job) => `${String(job.command.sku)}x`,
        onNotRun: (...args) => heard.push(args),
      },
    );
    const envelope = await envelopeOf('given');
    expect({ backoff: envelope.backoff, retryUntil: envelope.retryUntil, displayName: envelope.displayName }).toEqual({
      backoff: '5',
      retryUntil: Math.floor(until.getTime() / 1000),
      displayName: 'B2x',
    });
    expect(heard, 'onNotRun was told of methods the options answered').toEqual([]);
    const raw = rawClient();
    expect(
      await raw.exists(`${prefix}laravel_cache:laravel_unique_job:App\\Jobs\\UntranslatableB2-7`),
      'the lock under the given uniqueId',
    ).toBe(1);
    raw.disconnect();
  });

  it('untranslated and unanswered: uniqueId() refuses the dispatch, naming the class and why; the others are noticed', async () => {
    await expect(
      queue.dispatch(
        'App\\Jobs\\Untranslatable',
        { product: { class: 'App\\Models\\Product', id: 8 }, sku: 'C3' },
        { queue: 'refused', shapes: shapesFile, onNotRun: () => undefined },
      ),
    ).rejects.toThrow(
      /^App\\Jobs\\Untranslatable defines uniqueId\(\), which lqb shapes could not translate \(it calls or names md5, which is not translated\)/,
    );
    const heard: unknown[][] = [];
    await queue.dispatch(
      'App\\Jobs\\Untranslatable',
      { product: { class: 'App\\Models\\Product', id: 9 }, sku: 'D4' },
      { queue: 'refused', shapes: shapesFile, uniqueId: 'd4', onNotRun: (...args) => heard.push(args) },
    );
    expect(heard.map((args) => args[1])).toEqual([['backoff()', 'retryUntil()', 'displayName()']]);
  });
});
