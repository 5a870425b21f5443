/**
 * A team moving one class at a time: Laravel 8.83 pushes a job Node has no handler for onto a
 * queue a Node worker reads with its default options (library and `lqb work` alike). The Node
 * worker never takes it: it stays on the list as pushed, in its place, and no line is said of it;
 * Laravel's own worker then runs it; nothing lands in failed_jobs. `share: false` / `--no-share`
 * take it and fail it instead, with the reason.
 * Producer: Laravel (laravel-dispatch.php). Consumers: the Node worker, then Laravel's.
 */
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/connect/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { lqb, php, scratchPerTest } from '../helpers/processes.js';
import { REDIS_URL, rawClient } from '../helpers/redis.js';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';

const QUEUE = 'shared';
const current = scratchPerTest('share', QUEUE);
const RECORD_JOB = 'App\\Jobs\\Bridge\\RecordJob';
/** Node handles another class only: RecordJob is still PHP's. */
const NODE_ONLY = { 'App\\Jobs\\Bridge\\NotYetMoved': async () => undefined };

async function pushRecordJob(n: number): Promise<{ uuid: string }> {
  const pushed = await php('laravel-dispatch.php', ['record', JSON.stringify({ n, label: 'php-only', queue: QUEUE })], current.s.env);
  expect(pushed.status, `laravel-dispatch.php failed: ${pushed.stderr}`).toBe(0);
  return JSON.parse(pushed.stdout.trim().split('\n')[0]!);
}

async function failedRecords(): Promise<{ uuid: string | null; exception: string }[]> {
  const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
  try {
    return await failer.all();
  } finally {
    await failer.close();
  }
}

/** Where the queue's jobs are now: the ready list (each job's uuid and attempts), and how many are delayed or reserved. */
async function queueState(): Promise<{ ready: { attempts: number; uuid: string }[]; delayed: number; reserved: number }> {
  const raw = rawClient();
  try {
    const key = `${current.prefix}queues:${QUEUE}`;
    const ready = (await raw.lrange(key, 0, -1)).map((payload) => {
      const { uuid, attempts } = JSON.parse(payload) as { uuid: string; attempts: number };
      return { uuid, attempts };
    });
    return { ready, delayed: await raw.zcard(`${key}:delayed`), reserved: await raw.zcard(`${key}:reserved`) };
  } finally {
    raw.disconnect();
  }
}

describe('a job Node has no handler for, on a queue shared with PHP', () => {
  it('the library worker with default options never takes it, and Laravel’s worker runs it', async () => {
    const { uuid } = await pushRecordJob(1);
    const queue = await connect({ redis: REDIS_URL, prefix: current.prefix, failedDb: current.s.env.LQB_FAILED_DB! });
    const said: string[] = [];
    try {
      const worker = queue.worker(NODE_ONLY, { queues: [QUEUE], stopWhenEmpty: true, sleep: 0.05 });
      worker.on('processing', (e) => void said.push(`processing ${e.job}`));
      worker.on('given-back', (e) => void said.push(`given-back ${e.job}`));
      worker.on('failed', (e) => void said.push(`failed ${e.job}`));
      expect((await worker.run()).reason, 'the Node worker did not stop when the queue held none of its jobs').toBe('empty');
    } finally {
      await queue.close();
    }
    expect(said, 'the Node worker took the PHP job (and said so)').toEqual([]);
    expect(await failedRecords(), 'the PHP job was failed by the Node worker').toEqual([]);
    expect(await queueState(), 'the PHP job is not waiting on the list as pushed (attempts 0), never given back').toEqual({
      ready: [{ uuid, attempts: 0 }],
      delayed: 0,
      reserved: 0,
    });
    const laravel = await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], current.s.env, {
      timeoutMs: 30_000,
    });
    expect(laravel.status, `Laravel's worker failed: ${laravel.stderr}`).toBe(0);
    expect(
      current.s
        .phpRuns()
        .filter((r) => r.uuid === uuid)
        .map((r) => r.class),
      'Laravel’s worker did not run the job Node gave back',
    ).toEqual([RECORD_JOB]);
    expect(await failedRecords(), 'a job landed in failed_jobs').toEqual([]);
  });

  it('lqb work without flags leaves it too, and says so in its start line; --no-share fails it with the reason', async () => {
    const handlers = join(current.s.dir, 'node-only.mjs');
    writeFileSync(handlers, `export default { 'App\\\\Jobs\\\\Bridge\\\\NotYetMoved': async () => {} };\n`);
    const { uuid } = await pushRecordJob(2);
    const shared = await lqb(['work', `--handlers=${handlers}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], current.s.env);
    expect(shared.status, shared.stderr).toBe(0);
    expect(shared.stderr, 'the start line does not say what happens to jobs with no Node handler').toMatch(
      /^lqb work: worker starting: .*a job with no Node handler is left on the queue for a PHP worker/m,
    );
    expect(shared.stdout, 'lqb work said a line of the PHP job it must not take').not.toMatch(/RecordJob/);
    expect(await queueState(), 'the PHP job is not waiting on the list as pushed (attempts 0), never given back').toEqual({
      ready: [{ uuid, attempts: 0 }],
      delayed: 0,
      reserved: 0,
    });
    const alone = await lqb(
      ['work', `--handlers=${handlers}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', '--no-share'],
      current.s.env,
    );
    expect(alone.status, alone.stderr).toBe(0);
    expect(alone.stderr, 'the start line does not say jobs with no Node handler are failed').toMatch(
      /a job with no Node handler is failed into failed_jobs \(share off\)/,
    );
    const failed = await failedRecords();
    expect(
      failed.map((f) => f.uuid),
      '--no-share did not fail the job',
    ).toEqual([uuid]);
    expect(failed[0]!.exception, 'the failure does not say there was no handler').toMatch(
      /NoHandlerException: no handler for App\\Jobs\\Bridge\\RecordJob/,
    );
    const both = await lqb(['work', `--handlers=${handlers}`, '--share', '--no-share'], current.s.env);
    expect([both.status, both.stderr], '--share with --no-share was not a usage error').toEqual([
      2,
      'lqb work: --share and --no-share say opposite things: give one (lqb work --help for usage)\n',
    ]);
  });
});
