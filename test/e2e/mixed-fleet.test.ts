/**
 * A mixed fleet: Laravel's own worker and `lqb work` on one queue, 2,000 jobs that Laravel
 * pushed, some released and retried, some failing for good. Every job runs to its end exactly
 * as often as Laravel's rules say (none lost, none twice), attempts count the same on both
 * sides, and the failed records both sides write have one shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUuidFailedJobProvider, type FailedJob } from '../../src/worker/index.js';
import { HANDLERS, lqb, php, scratch, type RunResult, type Scratch } from '../helpers/processes.js';
import { rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const QUEUE = 'fleet';
const prefix = uniquePrefix('fleet');
const s: Scratch = scratch(prefix, QUEUE);
const RECORDS = 1700;
const FLAKY = 200;
const FAILING = 100;
let node: RunResult;
let laravel: RunResult;
let failed: FailedJob[];
let runs: Record<string, any>[];

beforeAll(async () => {
  const dispatch = (kind: string, options: object) =>
    php('laravel-dispatch.php', [kind, JSON.stringify({ queue: QUEUE, ...options })], s.env);
  await dispatch('record', { n: 1, count: RECORDS, label: 'fleet', ratio: 0.5, items: [1] });
  await dispatch('flaky', { n: 1, count: FLAKY, failTimes: 1 });
  await dispatch('failing', { n: 1, count: FAILING, message: 'never' });
  const flags = ['--tries=3', '--backoff=0', '--stop-when-empty', '--sleep=0'];
  [node, laravel] = await Promise.all([
    lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, ...flags], s.env, { timeoutMs: 240_000 }),
    php('laravel-worker.php', [`--queue=${QUEUE}`, ...flags], s.env, { timeoutMs: 240_000 }),
  ]);
  const failer = DatabaseUuidFailedJobProvider.fromUrl(s.env.LQB_FAILED_DB!);
  failed = await failer.all();
  await failer.close();
  runs = [...s.nodeRuns(), ...s.phpRuns()].filter((r) => !r.failed);
}, 300_000);

afterAll(async () => {
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  s.remove();
});

function attemptsByUuid(className: string): Map<string, number[]> {
  const byUuid = new Map<string, number[]>();
  for (const run of runs.filter((r) => r.class === className)) byUuid.set(run.uuid, [...(byUuid.get(run.uuid) ?? []), run.attempts].sort());
  return byUuid;
}

describe('a PHP worker and a Node worker sharing one queue', () => {
  it('both exit cleanly, both did work, and the queue is empty', async () => {
    expect(node.status).toBe(0);
    expect(laravel.status).toBe(0);
    expect(s.nodeRuns().length).toBeGreaterThan(100);
    expect(s.phpRuns().length).toBeGreaterThan(100);
    const raw = rawClient();
    const left = await raw.keys(`${prefix}queues:${QUEUE}*`);
    const sizes = await Promise.all(
      left.filter((k) => !k.endsWith(':notify')).map(async (k) => ((await raw.type(k)) === 'list' ? raw.llen(k) : raw.zcard(k))),
    );
    raw.disconnect();
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(0);
  });

  it('every plain job ran exactly once', () => {
    const records = attemptsByUuid('App\\Jobs\\Bridge\\RecordJob');
    expect(records.size).toBe(RECORDS);
    expect(offenders(records, '1'), 'jobs (uuid: attempts run) that did not run exactly once, on attempt 1').toEqual({});
  });

  it('every flaky job failed once and succeeded on attempt 2, on whichever side', () => {
    const flaky = attemptsByUuid('App\\Jobs\\Bridge\\FlakyJob');
    expect(flaky.size).toBe(FLAKY);
    expect(offenders(flaky, '1,2'), 'flaky jobs (uuid: attempts run) that did not run attempts 1 and 2').toEqual({});
  });

  it('every failing job ran its three attempts and was recorded once, in one shape from either side', () => {
    const failing = attemptsByUuid('App\\Jobs\\Bridge\\FailingJob');
    expect(failing.size).toBe(FAILING);
    expect(offenders(failing, '1,2,3'), 'failing jobs (uuid: attempts run) that did not run attempts 1, 2 and 3').toEqual({});
    expect(failed).toHaveLength(FAILING);
    expect(new Set(failed.map((f) => f.uuid))).toEqual(new Set(failing.keys()));
    for (const record of failed) {
      expect(record).toMatchObject({ connection: 'redis', queue: QUEUE });
      expect(record.failed_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      expect(JSON.parse(record.payload).attempts).toBe(2); // the payload as its last attempt popped it
      expect(record.exception.split('\n')[0]).toMatch(/^(Error|RuntimeException): never/);
    }
  });
});

/** The jobs whose attempts, in the order they ran, are not `expected`, as uuid: "attempts". */
function offenders(runs: Map<string, number[]>, expected: string): Record<string, string> {
  return Object.fromEntries(
    [...runs].filter(([, attempts]) => attempts.join() !== expected).map(([uuid, attempts]) => [uuid, attempts.join()]),
  );
}
