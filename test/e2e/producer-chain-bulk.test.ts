/**
 * A Node producer's chain and bulk, against Debian's real Laravel 8.83. Producer: Node
 * (connect().chain, connect().bulk). Consumer: Laravel's own worker. What Node pushes for a
 * chain is what Laravel's Bus::chain()->onQueue()->dispatch() pushes for the same jobs, byte for
 * byte but the uuid and id; Laravel's worker runs every link, in order, and every bulk job.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, type LaravelQueue } from '../../src/index.js';
import { REDIS_URL, rawClient } from '../helpers/redis.js';
import { php, scratchPerTest, type Scratch } from '../helpers/processes.js';

const QUEUE = 'produced';
const CHAIN_JOB = 'App\\Jobs\\Bookkeeping\\ChainJob';
const current = scratchPerTest('e2e-producer', QUEUE);
let s: Scratch;
let queue: LaravelQueue;
beforeEach(async () => {
  s = current.s;
  queue = await connect({ redis: REDIS_URL, prefix: current.prefix, logger: false });
});
afterEach(() => queue.close());

/** Every payload on the queue's list, taken off it, in order. */
async function takeAll(): Promise<string[]> {
  const raw = rawClient();
  try {
    const key = `${current.prefix}queues:${QUEUE}`;
    const payloads = await raw.lrange(key, 0, -1);
    await raw.del(key, `${key}:notify`);
    return payloads;
  } finally {
    raw.disconnect();
  }
}

/** A payload with its uuid and id (made afresh by each dispatch) masked. */
function masked(payload: string): string {
  const envelope = JSON.parse(payload) as Record<string, unknown>;
  return JSON.stringify({ ...envelope, uuid: 'UUID', id: 'ID' });
}

const laravelWork = () => php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env);
const chainLinks = (labels: string[]) => labels.map((label, i) => ({ job: CHAIN_JOB, props: { n: i + 1, label } }));

describe('connect().chain', () => {
  it('pushes what Laravel’s Bus::chain()->onQueue()->dispatch() pushes for the same jobs', async () => {
    const labels = ['ok', 'second', 'third'];
    const laravel = await php('laravel-bookkeeping.php', ['chain', JSON.stringify({ labels })], s.env);
    expect([laravel.status, laravel.stderr], 'Laravel’s Bus::chain did not dispatch').toEqual([0, '']);
    const [laravelPayload] = await takeAll();
    const dispatched = await queue.chain(chainLinks(labels), { queue: QUEUE });
    const [nodePayload] = await takeAll();
    expect(dispatched, 'what chain() answers').toMatchObject({ queue: QUEUE, uuid: JSON.parse(nodePayload!).uuid });
    expect(masked(nodePayload!), 'Node’s chain payload (uuid and id masked) against Laravel’s').toBe(masked(laravelPayload!));
    expect(JSON.parse(nodePayload!).data.command, 'the chain’s two later links, in chained').toMatch(
      /s:7:"chained";a:2:\{i:0;s:\d+:"O:29:"App\\Jobs\\Bookkeeping\\ChainJob"/,
    );
  });

  it('is run to its end by Laravel’s worker, link after link, in order', async () => {
    await queue.chain(chainLinks(['ok', 'ok', 'ok', 'ok']), { queue: QUEUE });
    const worker = await laravelWork();
    expect([worker.status, worker.stderr], 'Laravel’s worker did not end cleanly').toEqual([0, '']);
    expect(
      s.phpRuns().map((run) => run.props.n),
      'the links Laravel’s worker ran, in order',
    ).toEqual([1, 2, 3, 4]);
  });

  it('refuses what a later link cannot carry, naming the link', async () => {
    await expect(
      queue.chain([
        { job: CHAIN_JOB, props: { n: 1 } },
        { job: CHAIN_JOB, props: { n: 2 }, tries: 3 },
      ]),
    ).rejects.toThrow(/^chain: jobs\[1\]: a later link of a chain carries only its properties, queue and delay .*not tries$/);
    await expect(queue.chain([])).rejects.toThrow(/^chain: jobs must be a list of one or more/);
  });
});

describe('connect().bulk', () => {
  it('pushes each job as dispatch() does, in order; Laravel’s worker runs every one', async () => {
    const dispatched = await queue.bulk([1, 2, 3].map((n) => ({ job: CHAIN_JOB, props: { n, label: 'ok' }, queue: QUEUE })));
    expect(
      dispatched.map((d) => d.queue),
      'the queue bulk() answers for each job',
    ).toEqual([QUEUE, QUEUE, QUEUE]);
    const worker = await laravelWork();
    expect([worker.status, worker.stderr], 'Laravel’s worker did not end cleanly').toEqual([0, '']);
    const runs = s.phpRuns();
    expect(
      runs.map((run) => [run.props.n, run.uuid]),
      'the jobs Laravel’s worker ran (n, uuid), in order',
    ).toEqual(dispatched.map((d, i) => [i + 1, d.uuid]));
  });

  it('names the job it refuses', async () => {
    await expect(
      queue.bulk([
        { job: CHAIN_JOB, props: { n: 1 } },
        { job: '', props: {} },
      ]),
    ).rejects.toThrow(/^dispatch: the job class must be named/);
    await expect(queue.bulk([{ job: CHAIN_JOB }, null as never])).rejects.toThrow(/^bulk: jobs\[1\] must be/);
  });
});
