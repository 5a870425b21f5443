/**
 * fakeQueue(): what it records is what connect()'s queue pushes on the same inputs, byte for byte
 * but the ids each dispatch makes afresh (checked against a real connect() on real Redis), and
 * its assertions pass and fail as Laravel's Queue::fake()/Bus::fake() do, a failure naming the
 * class and showing what was dispatched instead.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type LaravelQueue } from '../../src/index.js';
import { fakeQueue, type FakeQueue } from '../../src/testing/index.js';
import { REDIS_URL, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';
import { root } from '../helpers/php.js';
import { lqb } from '../helpers/processes.js';

const INVOICE = 'App\\Jobs\\SendInvoice';
const RECEIPT = 'App\\Jobs\\SendReceipt';
const prefix = uniquePrefix('fake-queue');
let real: LaravelQueue;

beforeAll(async () => {
  real = await connect({ redis: REDIS_URL, prefix, logger: false });
});

afterAll(async () => {
  await real.close();
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
});

/** The payloads the real connection pushed onto a queue, taken off it. */
async function pushedOnto(queue: string): Promise<string[]> {
  const raw = rawClient();
  try {
    const key = `${prefix}queues:${queue}`;
    const ready = await raw.lrange(key, 0, -1);
    const delayed = await raw.zrange(`${key}:delayed`, 0, -1);
    await raw.del(key, `${key}:delayed`, `${key}:notify`);
    return [...ready, ...delayed];
  } finally {
    raw.disconnect();
  }
}

/** A payload with what each dispatch makes afresh masked: the uuid, the id, a batch's id. */
function masked(payload: string, batchId?: string): string {
  const text = JSON.stringify({ ...JSON.parse(payload), uuid: 'UUID', id: 'ID' });
  return batchId ? text.replaceAll(batchId, 'BATCH-ID') : text;
}

describe('what fakeQueue records', () => {
  it('is what connect()’s queue pushes on the same inputs: dispatch, delayed dispatch, bulk, chain', async () => {
    const fake = await fakeQueue();
    const inputs = async (queue: Pick<LaravelQueue, 'dispatch' | 'bulk' | 'chain'>) => {
      await queue.dispatch(
        INVOICE,
        { invoice: 7, total: 12.5, lines: ['a', 'b'], at: new Date('2026-01-02T03:04:05Z') },
        { queue: 'q', tries: 3 },
      );
      await queue.dispatch(RECEIPT, { n: 1 }, { queue: 'q', delay: 30, backoff: [1, 5] });
      await queue.bulk([1, 2].map((n) => ({ job: RECEIPT, props: { n }, queue: 'q' })));
      await queue.chain(
        [
          { job: INVOICE, props: { invoice: 1 } },
          { job: RECEIPT, props: { n: 2 } },
        ],
        { queue: 'q' },
      );
    };
    await inputs(real);
    await inputs(fake);
    const realPayloads = (await pushedOnto('q')).map((p) => masked(p));
    expect(realPayloads, 'what the real connection pushed').toHaveLength(5);
    expect(
      fake
        .dispatched()
        .map((record) => masked(record.payload))
        .sort(),
      'what the fake recorded (uuid and id masked), against what Redis holds',
    ).toEqual(realPayloads.sort());
  });

  it('with make (uuid, id, clock, IV), records byte for byte what connect() pushed, nothing masked', async () => {
    // Laravel 12.67's layout (createdAt) and an encrypted class (ChargeCard is ShouldBeEncrypted).
    const dir = mkdtempSync(join(tmpdir(), 'lqb-fake-make-'));
    try {
      const shapes = join(dir, 'shapes.json');
      const made = await lqb(['shapes', `--app=${join(root, 'php-fixture-gen/shapes-app')}`, `--out=${shapes}`], process.env);
      expect(made.status, made.stderr).toBe(0);
      const key = `base64:${Buffer.alloc(32, 3).toString('base64')}`;
      const options = { laravel: '12.67.0', key, shapes };
      const realQueue = await connect({ redis: REDIS_URL, prefix, logger: false, ...options });
      const inputs = async (queue: Pick<LaravelQueue, 'dispatch'>) => {
        await queue.dispatch('App\\Jobs\\ChargeCard', { cardToken: 'tok_1', amount: 5 }, { queue: 'exact' });
        await queue.dispatch('App\\Jobs\\ImportFeed', { feed: 'news' }, { queue: 'exact', delay: 30 });
      };
      await inputs(realQueue);
      await realQueue.close();
      const pushed = await pushedOnto('exact');
      expect(pushed.length, 'what the real connection pushed').toBe(2);
      const envelopes = pushed.map(
        (payload) => JSON.parse(payload) as { uuid: string; id: string; createdAt: number; data: { command: string } },
      );
      const iv = Buffer.from(
        (JSON.parse(Buffer.from(envelopes[0]!.data.command, 'base64').toString('utf8')) as { iv: string }).iv,
        'base64',
      );
      const uuids = envelopes.map((e) => e.uuid);
      const ids = envelopes.map((e) => e.id);
      const fake = await fakeQueue({
        ...options,
        make: { uuid: () => uuids.shift()!, id: () => ids.shift()!, now: () => envelopes[0]!.createdAt, iv: () => iv },
      });
      await inputs(fake);
      expect(
        fake.dispatched().map((record) => record.payload),
        'the fake’s payloads, whole, against what Redis holds',
      ).toEqual(pushed);
      // Checked against the shapes as a real dispatch is: a property PHP would not read fails the dispatch.
      await expect(fake.dispatch('App\\Jobs\\ImportFeed', { feed: 'news', nope: 1 }), 'a property the class does not have').rejects.toThrow(
        /App\\Jobs\\ImportFeed has no property \$nope/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps a batch as the real connection writes it: the jobs with its id, its row in memory', async () => {
    const fake = await fakeQueue();
    const batch = await fake.batch(
      [1, 2, 3].map((n) => ({ job: RECEIPT, props: { n } })),
      { name: 'receipts', queue: 'billing', allowFailures: true },
    );
    expect(
      fake.dispatched().map((record) => [record.name, record.queue, record.batchId, record.command?.n]),
      'the batch’s jobs, recorded',
    ).toEqual([1, 2, 3].map((n) => [RECEIPT, 'billing', batch.id, n]));
    expect(fake.batches(), 'the batch the fake keeps').toMatchObject([
      { id: batch.id, name: 'receipts', totalJobs: 3, options: { queue: 'billing', allowFailures: true } },
    ]);
    fake.assertBatched((b) => b.name === 'receipts' && b.jobs.length === 3);
    expect(() => fake.assertBatched((b) => b.name === 'invoices')).toThrow(
      /^no batch matching the predicate was dispatched; batches dispatched: "receipts" of App\\Jobs\\SendReceipt, App\\Jobs\\SendReceipt, App\\Jobs\\SendReceipt$/,
    );
  });
});

describe('fakeQueue’s assertions', () => {
  let fake: FakeQueue;
  beforeAll(async () => {
    fake = await fakeQueue({ defaultQueue: 'default' });
    await fake.dispatch(INVOICE, { invoice: 7 }, { queue: 'billing' });
    await fake.dispatch(INVOICE, { invoice: 8 });
    await fake.chain([
      { job: RECEIPT, props: { n: 1 } },
      { job: INVOICE, props: { invoice: 9 } },
      { job: RECEIPT, props: { n: 2 } },
    ]);
  });

  it('pass on what was dispatched', () => {
    fake.assertDispatched(INVOICE);
    fake.assertDispatched(INVOICE, (command) => command.invoice === 8);
    fake.assertDispatchedTimes(INVOICE, 2);
    fake.assertDispatchedOn('billing', INVOICE, (command) => command.invoice === 7);
    fake.assertNotDispatched(INVOICE, (command) => command.invoice === 9);
    fake.assertNotDispatched('App\\Jobs\\Other');
    fake.assertChained([RECEIPT, INVOICE, RECEIPT]);
  });

  it('fail naming the class, showing what was dispatched instead', () => {
    expect(() => fake.assertDispatched(INVOICE, (command) => command.invoice === 1)).toThrow(
      'App\\Jobs\\SendInvoice was not dispatched matching the predicate.\nDispatched instead:\n  App\\Jobs\\SendInvoice on billing: {"invoice":7,',
    );
    expect(() => fake.assertDispatchedTimes(RECEIPT, 2)).toThrow(/^App\\Jobs\\SendReceipt was dispatched 1 time, not 2\./);
    expect(() => fake.assertDispatchedOn('default', INVOICE, (command) => command.invoice === 7)).toThrow(
      /^App\\Jobs\\SendInvoice was not dispatched onto queue "default" matching the predicate\./,
    );
    expect(() => fake.assertNotDispatched(INVOICE)).toThrow(/^App\\Jobs\\SendInvoice was dispatched, 2 time\(s\)\./);
    expect(() => fake.assertNothingDispatched()).toThrow(/^3 job\(s\) were dispatched, none expected\./);
    expect(() => fake.assertChained([RECEIPT, RECEIPT])).toThrow(
      'no chain App\\Jobs\\SendReceipt → App\\Jobs\\SendReceipt was dispatched; chains dispatched: App\\Jobs\\SendReceipt → App\\Jobs\\SendInvoice → App\\Jobs\\SendReceipt',
    );
  });

  it('start again from nothing after reset()', async () => {
    const fresh = await fakeQueue();
    await fresh.dispatch(INVOICE, {});
    fresh.reset();
    fresh.assertNothingDispatched();
    expect(fresh.dispatched(), 'what the fake holds after reset()').toEqual([]);
  });

  it('refuse a dispatch connect() refuses, with the same line', async () => {
    const fresh = await fakeQueue();
    await expect(fresh.dispatch('', {})).rejects.toThrow(/^dispatch: the job class must be named/);
    fresh.assertNothingDispatched();
  });
});
