/**
 * One class moved to Node, on a queue still PHP's: Laravel 8.83 pushes PHP-only jobs (FlakyJob)
 * with a Node job (RecordJob) as every 11th, and Laravel's own worker and `lqb work` (handlers for
 * RecordJob only, share on by default) work the queue at once. Node takes none of PHP's jobs: PHP
 * runs every one of them at attempt 1, in the order they were pushed (none was popped and pushed
 * back, which would have sent it to the tail), and Redis's :delayed never holds one (nothing was
 * given back). Every job runs exactly once, at attempt 1, on one side or the other.
 * Producer: Laravel (laravel-dispatch.php interleaved). Consumers: Laravel's worker and lqb work.
 * The evidence is the jobs' own records (each run writes its side, uuid and attempts) and Redis.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseQueue } from '../../src/database/index.js';
import { DatabaseUuidFailedJobProvider, Worker } from '../../src/worker/index.js';
import { QUEUE_DATABASES, withJobsTable } from '../helpers/jobs-table.js';
import { HANDLERS, laravelDispatch, lqb, php, scratch, type LaravelPushed, type RunResult } from '../helpers/processes.js';
import { rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const QUEUE = 'moving';
const prefix = uniquePrefix('share-reserve');
const s = scratch(prefix, QUEUE);
const PHP_ONLY = 'App\\Jobs\\Bridge\\FlakyJob';
const MOVED = 'App\\Jobs\\Bridge\\RecordJob';
const JOBS = 2200;
const EVERY = 11;

let pushed: LaravelPushed[];
let node: RunResult;
let laravel: RunResult;
/** The most jobs :delayed held at any one look while the workers ran (sampled every few ms). */
let delayedAtMost = 0;
let left: { ready: number; delayed: number; reserved: number };

beforeAll(async () => {
  pushed = await laravelDispatch(s.env, QUEUE, 'interleaved', { n: 1, count: JOBS, every: EVERY });
  const handlers = join(s.dir, 'moved-only.mjs');
  writeFileSync(
    handlers,
    `import all from ${JSON.stringify(HANDLERS)};\nexport default { ${JSON.stringify(MOVED)}: all[${JSON.stringify(MOVED)}] };\n`,
  );
  const raw = rawClient();
  const key = `${prefix}queues:${QUEUE}`;
  let watching = true;
  const watch = (async () => {
    while (watching) {
      delayedAtMost = Math.max(delayedAtMost, await raw.zcard(`${key}:delayed`));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const flags = ['--stop-when-empty', '--sleep=0', `--queue=${QUEUE}`];
  try {
    [node, laravel] = await Promise.all([
      lqb(['work', `--handlers=${handlers}`, ...flags], s.env, { timeoutMs: 50_000 }),
      php('laravel-worker.php', flags, s.env, { timeoutMs: 50_000 }),
    ]);
  } finally {
    watching = false;
    await watch;
  }
  left = { ready: await raw.llen(key), delayed: await raw.zcard(`${key}:delayed`), reserved: await raw.zcard(`${key}:reserved`) };
  raw.disconnect();
}, 60_000);

afterAll(async () => {
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  s.remove();
});

/** Each job's runs, by uuid: the side and attempt of each. */
function runsByUuid(): Map<string, string[]> {
  const runs = new Map<string, string[]>();
  for (const run of [...s.phpRuns(), ...s.nodeRuns()]) runs.set(run.uuid, [...(runs.get(run.uuid) ?? []), `${run.side}@${run.attempts}`]);
  return runs;
}

describe('Laravel’s worker and lqb work on one queue, one class moved to Node', () => {
  it('both end cleanly with the queue empty and nothing failed', async () => {
    expect(pushed.length, 'Laravel did not push the jobs').toBe(JOBS);
    expect([node.status, node.stderr.split('\n').filter((l) => !/worker starting/.test(l))], 'lqb work did not end cleanly').toEqual([
      0,
      [''],
    ]);
    expect([laravel.status, laravel.stderr], 'Laravel’s worker did not end cleanly').toEqual([0, '']);
    expect(left, 'jobs were left on the queue').toEqual({ ready: 0, delayed: 0, reserved: 0 });
    const failer = DatabaseUuidFailedJobProvider.fromUrl(s.env.LQB_FAILED_DB!);
    const failed = await failer.all();
    await failer.close();
    expect(
      failed.map((f) => `${f.uuid}: ${f.exception.split('\n')[0]}`),
      'jobs were failed',
    ).toEqual([]);
  });

  it('Node took none of PHP’s jobs: each ran once on PHP at attempt 1, in push order, and none was ever given back', () => {
    const runs = runsByUuid();
    const phpOnly = pushed.filter((p) => p.class === PHP_ONLY);
    const wrong = Object.fromEntries(
      phpOnly.filter((p) => (runs.get(p.uuid) ?? []).join() !== 'php@1').map((p) => [p.uuid, (runs.get(p.uuid) ?? ['never ran']).join()]),
    );
    expect(wrong, `PHP-only jobs (uuid: side@attempt of each run) that did not run once, on PHP, at attempt 1`).toEqual({});
    const phpOrder = s
      .phpRuns()
      .filter((r) => r.class === PHP_ONLY)
      .map((r) => r.uuid);
    const firstOutOfPlace = phpOrder.findIndex((uuid, i) => uuid !== phpOnly[i]!.uuid);
    expect(
      firstOutOfPlace,
      `Laravel’s worker did not run PHP’s jobs in the order they were pushed (first out of place: run ${firstOutOfPlace}, ${phpOrder[firstOutOfPlace]}): one was taken from its place`,
    ).toBe(-1);
    expect(delayedAtMost, 'Redis’s :delayed held jobs while the workers ran: PHP’s jobs were given back').toBe(0);
    expect([...new Set(s.nodeRuns().map((r) => r.class))], 'Node ran a class it has no handler for').toEqual([MOVED]);
    expect(node.stdout, 'lqb work said a line of a PHP-only job').not.toMatch(/FlakyJob/);
  });

  it('every moved job ran exactly once at attempt 1, on one side or the other', () => {
    const runs = runsByUuid();
    const moved = pushed.filter((p) => p.class === MOVED);
    expect(moved.length, 'the Node jobs were not pushed').toBe(JOBS / EVERY);
    const wrong = Object.fromEntries(
      moved
        .filter((p) => !/^(php|node)@1$/.test((runs.get(p.uuid) ?? []).join()))
        .map((p) => [p.uuid, (runs.get(p.uuid) ?? ['never ran']).join()]),
    );
    expect(wrong, 'Node jobs (uuid: side@attempt of each run) that did not run exactly once at attempt 1').toEqual({});
    const byPhp = moved.filter((p) => runs.get(p.uuid)?.[0] === 'php@1').length;
    // Laravel's worker pops the head whatever it holds: Node's share is a ceiling (docs/sharing.md).
    process.stdout.write(
      `share-reserve: of ${moved.length} Node jobs, Laravel's worker reached ${byPhp} first, Node ran ${moved.length - byPhp}\n`,
    );
    expect(moved.length - byPhp, 'Node ran none of its jobs').toBeGreaterThan(0);
  });
});

/**
 * The same on Laravel's database queue, on each database: Laravel 8.83 dispatches the jobs onto
 * the jobs table, Laravel's worker (`queue:work database`) and a Node worker (the library's, share
 * on) work it at once. A PHP job Node gave back would be a new row (give-back is a delete and an
 * insert): each PHP job's run names the row id Laravel pushed it as, at attempt 1.
 */
describe.each(QUEUE_DATABASES)('Laravel’s worker and a Node worker on one jobs table, one class moved to Node, on %s', (_, url) => {
  it('Node takes none of PHP’s rows; every job runs once at attempt 1, PHP’s from the row Laravel pushed', () =>
    withJobsTable(url, async (t) => {
      const count = 440;
      const pushed = await laravelDispatch(t.env, 'default', 'interleaved', { n: 1, count, every: EVERY });
      expect(pushed.length, 'Laravel did not push the jobs').toBe(count);
      const queue = DatabaseQueue.open(t.url, { table: t.table });
      const failer = DatabaseUuidFailedJobProvider.fromUrl(t.env.LQB_FAILED_DB!);
      const nodeRuns: { uuid: string; attempts: number; id: string; class: string }[] = [];
      const errors: string[] = [];
      try {
        const worker = new Worker(
          queue,
          { [MOVED]: async (job) => void nodeRuns.push({ uuid: job.uuid!, attempts: job.attempts, id: job.id, class: job.name }) },
          { queues: ['default'], sleep: 0.05, memory: 0, stopWhenEmpty: true, connectionName: 'database' },
          {
            failer,
            log: (event) => void (event.event === 'error' || event.event === 'given-back' ? errors.push(JSON.stringify(event)) : 0),
          },
        );
        const [laravelRun] = await Promise.all([
          php('laravel-worker.php', ['database', '--stop-when-empty', '--sleep=0'], t.env, { timeoutMs: 50_000 }),
          worker.run(),
        ]);
        expect(
          [laravelRun.status, laravelRun.stderr],
          'Laravel’s worker did not end cleanly (a pop that fails ends --stop-when-empty early)',
        ).toEqual([0, '']);
        expect(errors, 'the Node worker gave back or erred').toEqual([]);
        const phpRuns = existsSync(t.env.LQB_RECORD_FILE!)
          ? readFileSync(t.env.LQB_RECORD_FILE!, 'utf8')
              .split('\n')
              .filter(Boolean)
              .map((line) => JSON.parse(line) as { uuid: string; attempts: number; jobId: string; class: string })
          : [];
        const runs = new Map<string, string[]>();
        for (const run of phpRuns) runs.set(run.uuid, [...(runs.get(run.uuid) ?? []), `php@${run.attempts}#${run.jobId}`]);
        for (const run of nodeRuns) runs.set(run.uuid, [...(runs.get(run.uuid) ?? []), `node@${run.attempts}#${run.id}`]);
        const wrong = Object.fromEntries(
          pushed
            .filter((p) => {
              const seen = (runs.get(p.uuid) ?? []).join();
              return p.class === PHP_ONLY ? seen !== `php@1#${p.id}` : !new RegExp(`^(php|node)@1#${p.id}$`).test(seen);
            })
            .map((p) => [`${p.class} ${p.uuid} (row ${p.id})`, (runs.get(p.uuid) ?? ['never ran']).join()]),
        );
        expect(wrong, 'jobs (side@attempt#row of each run) that did not run once at attempt 1 from their row, PHP’s on PHP').toEqual({});
        expect([...new Set(nodeRuns.map((r) => r.class))], 'Node ran a class it has no handler for, or none of its own').toEqual([MOVED]);
        process.stdout.write(`share-reserve (${t.url.split(':')[0]}): Node ran ${nodeRuns.length} of ${count / EVERY} Node jobs\n`);
      } finally {
        await queue.close();
        await failer.close();
      }
    }));
});
