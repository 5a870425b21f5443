/**
 * The worker given the app's shapes (read from php-fixture-gen/shapes-app by PHP's reflection):
 * the next link of a chain keeps its class's declared tries and encryption, a worker without the
 * APP_KEY never pushes a ShouldBeEncrypted link in clear text, and a PHP method whose result
 * Laravel would write is said once in the log. Real Redis and a real SQLite failed_jobs table.
 */
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Encrypter, buildJob, buildPayload, decodePayload } from '../../src/laravel/index.js';
import { serialize } from '../../src/php/index.js';
import { reflectShapes, shapedCommand, type ShapesFile } from '../../src/shapes/index.js';
import { Worker } from '../../src/worker/index.js';
import { root } from '../helpers/php.js';
import { workerSetup, type WorkerSetup } from '../helpers/worker.js';

const KEY = 'base64:' + Buffer.alloc(32, 3).toString('base64');
let shapes: ShapesFile;
let env: WorkerSetup;

beforeAll(async () => {
  shapes = await reflectShapes({ app: join(root, 'php-fixture-gen/shapes-app') });
});
beforeEach(() => {
  env = workerSetup('shapes-worker');
});
afterEach(() => env.cleanup());

/** A first link whose chain holds `next`, serialized as Laravel keeps chained jobs. */
function chainTo(className: string, values: Record<string, unknown>): string {
  const next = shapedCommand(shapes, className, values).command;
  const first = buildJob({
    className: 'App\\Jobs\\First',
    properties: {},
    queueable: { chained: [Buffer.from(serialize(next)).toString('utf8')] },
  });
  return buildPayload(first).raw;
}

function worker(deps: { encrypter?: Encrypter; shapes?: ShapesFile }): Worker {
  return new Worker(
    env.queue,
    { 'App\\Jobs\\First': async () => undefined },
    { stopWhenEmpty: true, sleep: 0.05, memory: 0, queues: ['first'] },
    { failer: env.failer, log: (e) => env.events.push(e), ...deps },
  );
}

describe('a chain’s next link, pushed by the worker with the shapes', () => {
  it('a ShouldBeEncrypted link is encrypted with the APP_KEY, its declared tries kept', async () => {
    await env.queue.pushRaw(chainTo('App\\Jobs\\ChargeCard', { cardToken: 'tok_live', amount: 5 }), 'first');
    await worker({ encrypter: new Encrypter(KEY), shapes }).run();
    const [raw] = await env.client.lrange('queues:default', 0, -1);
    expect(raw, 'the next link in Redis').toBeDefined();
    expect(raw).not.toContain('tok_live');
    const pushed = decodePayload(raw!);
    expect([pushed.encrypted, pushed.envelope.maxTries]).toEqual([true, 2]);
    const command = new Encrypter(KEY).decryptCommand(String((pushed.envelope.data as { command: string }).command));
    expect(Buffer.from(serialize(command)).toString('utf8')).toContain('tok_live');
  });

  it('without an APP_KEY the finished job fails with the reason, and nothing goes out in clear text', async () => {
    await env.queue.pushRaw(chainTo('App\\Jobs\\ChargeCard', { cardToken: 'tok_live', amount: 5 }), 'first');
    await worker({ shapes }).run();
    expect(await env.client.llen('queues:default')).toBe(0);
    const [record] = await env.failer.all();
    expect(record?.exception).toMatch(
      /the next job in the chain, App\\Jobs\\ChargeCard, is ShouldBeEncrypted and this worker has no APP_KEY/,
    );
  });

  it('without the shapes, the link goes as before: its declared tries from its properties, not encrypted', async () => {
    await env.queue.pushRaw(chainTo('App\\Jobs\\ChargeCard', { cardToken: 'tok_live', amount: 5 }), 'first');
    await worker({}).run();
    const [raw] = await env.client.lrange('queues:default', 0, -1);
    expect([decodePayload(raw!).encrypted, decodePayload(raw!).envelope.maxTries]).toEqual([false, 2]);
  });

  it('backoff() and retryUntil() methods with no properties are said once per class, not silently dropped', async () => {
    await env.queue.bulkRaw([chainTo('App\\Jobs\\RetryLater', { n: 1 }), chainTo('App\\Jobs\\RetryLater', { n: 2 })], 'first');
    await worker({ shapes }).run();
    const warnings = env.events.filter((e) => e.event === 'warning').map((e) => e.reason);
    expect(warnings).toEqual([
      expect.stringMatching(/^App\\Jobs\\RetryLater defines backoff\(\) and retryUntil\(\), PHP that Node cannot run/),
    ]);
    expect(await env.client.llen('queues:default')).toBe(2);
  });
});
