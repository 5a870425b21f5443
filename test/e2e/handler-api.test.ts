/**
 * The handler API (DESIGN.md §5) against Debian's real Laravel 8.83 on real Redis. Laravel
 * produces every job (php-fixture-gen/laravel-dispatch.php); Laravel's own queue:work
 * (laravel-worker.php) and `lqb work` (test/e2e/fixtures/handlers.mjs) consume twin jobs, and what
 * each side's job sees, and records when it fails, is compared.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { HANDLERS, lqb, php, scratchPerTest, type Scratch, laravelDispatch as pushedByLaravel } from '../helpers/processes.js';

const QUEUE = 'handler-api';
const current = scratchPerTest('handler-api', QUEUE);
let s: Scratch;
beforeEach(() => ({ s } = current));

const withPayloads = () => ({ ...s.env, LQB_RECORD_PAYLOAD: '1' });
const work = (...flags: string[]) =>
  lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', ...flags], withPayloads());
const laravelWork = (...flags: string[]) =>
  php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', ...flags], withPayloads());
const laravelDispatch = (kind: string, options: object) => pushedByLaravel(s.env, QUEUE, kind, options);

/** A run's payload with its own job's uuid and id taken out, so twin jobs' payloads compare. */
function twinPayload(run: Record<string, any>): unknown {
  expect(run.payload, `${run.side} ${run.class}: no payload recorded`).toBeDefined();
  expect([run.payload.uuid, run.payload.id], `${run.side} ${run.class}: the payload's uuid and id are the job's`).toEqual([
    run.uuid,
    run.jobId,
  ]);
  return { ...run.payload, uuid: '(uuid)', id: '(id)' };
}

describe('what a handler sees of a job Laravel pushed', () => {
  it('job.payload is Laravel’s $job->payload() (attempts as pushed, not counting this one), on a first and a second attempt, for a job and a listener', async () => {
    // Twins: the same class and properties, pushed once for each worker.
    await laravelDispatch('flaky', { n: 1, failTimes: 1 });
    await laravelDispatch('listener', { id: 9, name: 'twin' });
    expect((await laravelWork('--tries=2')).status).toBe(0);
    await laravelDispatch('flaky', { n: 1, failTimes: 1 });
    await laravelDispatch('listener', { id: 9, name: 'twin' });
    expect((await work('--tries=2')).status).toBe(0);

    const phpRuns = s.phpRuns();
    const nodeRuns = s.nodeRuns();
    const flaky = (runs: Record<string, any>[]) => runs.filter((r) => r.class === 'App\\Jobs\\Bridge\\FlakyJob');
    const listener = (runs: Record<string, any>[]) =>
      runs.filter((r) => String(r.class).startsWith('App\\Listeners\\Bridge\\RecordListener'));
    expect(
      flaky(phpRuns).map((r) => [r.attempts, r.payload.attempts]),
      'Laravel: attempts, payload attempts',
    ).toEqual([
      [1, 0],
      [2, 1],
    ]);
    expect(
      flaky(nodeRuns).map((r) => [r.attempts, r.payload.attempts]),
      'Node: job.attempts, job.payload.attempts',
    ).toEqual([
      [1, 0],
      [2, 1],
    ]);
    expect(flaky(nodeRuns).map(twinPayload), 'FlakyJob: job.payload').toEqual(flaky(phpRuns).map(twinPayload));
    expect(listener(nodeRuns).map(twinPayload), 'RecordListener: job.payload').toEqual(listener(phpRuns).map(twinPayload));
    // The keys in Laravel's order, as $job->payload() has them.
    expect(Object.keys(listener(nodeRuns)[0]!.payload)).toEqual(Object.keys(listener(phpRuns)[0]!.payload));
  });

  it('job.uuid, job.id and job.queue are what Laravel pushed, for a job, a listener, a notification and a mailable', async () => {
    const pushed = [
      ...(await laravelDispatch('record', { n: 1, label: 'x', ratio: 0.5, items: [] })),
      ...(await laravelDispatch('listener', { id: 2, name: 'y' })),
      ...(await laravelDispatch('notification', { userId: 1, invoiceId: 7 })),
      ...(await laravelDispatch('mailable', { orderId: 5 })),
    ];
    expect((await work()).status).toBe(0);
    const seen = s.nodeRuns().map((r) => ({ uuid: r.uuid, id: r.jobId, queue: r.queue }));
    expect(seen).toEqual(pushed.map((p) => ({ uuid: p.uuid, id: p.id, queue: QUEUE })));
  });
});

describe('a failure’s record', () => {
  it('reads as Laravel’s does: `Class: message in FILE:LINE`, `Stack trace:`, numbered frames ending in {main}', async () => {
    await laravelDispatch('failing', { n: 1, message: 'php says no' });
    expect((await laravelWork()).status).toBe(0);
    await laravelDispatch('failing', { n: 2, message: 'node says no' });
    expect((await work()).status).toBe(0);
    const records = JSON.parse((await php('laravel-dispatch.php', ['failed'], s.env)).stdout) as { exception: string }[];
    const layout = /^(\S+): (.+) in (\S[^\n]*):(\d+)\nStack trace:\n(?:#\d+ [^\n]+\n)*#\d+ \{main\}$/;
    const shapes = records.map((r) => layout.exec(r.exception)?.slice(1, 3) ?? r.exception);
    expect(shapes.sort()).toEqual([
      ['Error', 'node says no'],
      ['RuntimeException', 'php says no 1 attempt 1'],
    ]);
  });
});
