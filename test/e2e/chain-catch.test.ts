/**
 * A chain's catch callbacks (PHP closures) when a link fails in Node, against Debian's real
 * Laravel 8.83: Laravel's Bus::chain()->catch() dispatches; `lqb work` runs the links. Alone,
 * Node fails the link and says the callbacks did not run; with --share beside Laravel's
 * worker, the link out of attempts is left to PHP, which fails it and runs them.
 */
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { aloneUnlessShared, lqb, php, scratchPerTest, type Scratch } from '../helpers/processes.js';
import { root } from '../helpers/php.js';

const QUEUE = 'chains';
const HANDLERS = join(root, 'test/e2e/fixtures/bookkeeping-handlers.mjs');
// A Redis prefix and scratch directory of each test's own, removed after it.
const current = scratchPerTest('e2e-chain', QUEUE);
let s: Scratch;
beforeEach(() => ({ s } = current));

const chain = async (labels: string[]) => {
  const result = await php('laravel-bookkeeping.php', ['chain', JSON.stringify({ labels, catch: true })], s.env);
  expect(result.stderr).toBe('');
};
const nodeWork = (...flags: string[]) =>
  lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', ...aloneUnlessShared(flags)], s.env);
const laravelWork = () => php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env);
const catches = () => s.phpRuns().filter((r) => r.callback === 'chain-catch');
const failedRecords = async () => {
  const failer = DatabaseUuidFailedJobProvider.fromUrl(s.env.LQB_FAILED_DB!);
  try {
    return await failer.all();
  } finally {
    await failer.close();
  }
};

describe('a chain with a catch callback whose link fails', () => {
  it('Laravel’s worker runs the catch callback; lqb work alone fails the link the same way and says the callback did not run', async () => {
    await chain(['fail', 'ok']);
    expect((await laravelWork()).status).toBe(0);
    expect(catches()).toMatchObject([{ message: 'fail 1' }]);
    await chain(['fail', 'ok']);
    const node = await nodeWork();
    expect(node.status).toBe(0);
    expect(node.stdout).toMatch(/Failed: +App\\Jobs\\Bookkeeping\\ChainJob/);
    expect(node.stdout).toMatch(
      /Warning: +App\\Jobs\\Bookkeeping\\ChainJob: the chain's catch callbacks \(1\) are PHP closures Node cannot run: they did not run/,
    );
    // As with Laravel's worker: the failed link is recorded, the rest of the chain never runs.
    expect(s.nodeRuns().map((r) => r.props.n)).toEqual([1]);
    expect(await failedRecords()).toHaveLength(2);
    expect(catches()).toHaveLength(1);
  });

  it('--share: the link out of attempts is left to Laravel’s worker, which fails it and runs the catch callback, also for a link Node pushed', async () => {
    await chain(['ok', 'fail', 'ok']);
    const node = await nodeWork('--share');
    expect(node.status).toBe(0);
    // Node ran link 1, pushed link 2 (with the chain's callbacks), ran it, and left its failure to PHP.
    expect(s.nodeRuns().map((r) => r.props.n)).toEqual([1, 2]);
    expect(node.stdout).toMatch(
      /Given back: +App\\Jobs\\Bookkeeping\\ChainJob: out of attempts, left for a PHP worker to fail: its chain has catch callbacks/,
    );
    expect(await failedRecords()).toEqual([]);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await laravelWork()).status).toBe(0);
    expect(catches()).toMatchObject([{ message: expect.stringMatching(/has been attempted too many times/) }]);
    const [record] = await failedRecords();
    expect(record).toMatchObject({ queue: QUEUE });
    expect(record!.exception).toMatch(/MaxAttemptsExceededException/);
    // PHP failed the link without running it again; link 3 never ran.
    expect(s.phpRuns().filter((r) => r.class)).toEqual([]);
  });
});
