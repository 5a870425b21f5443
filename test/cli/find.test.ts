/**
 * `lqb find ID`: Laravel 8.83 pushes (laravel-dispatch.php), the CLI says where the job is; a job
 * failed in Node is found among the failed jobs; one that is nowhere exits 1 with one line.
 */
import { describe, expect, it } from 'vitest';
import { HANDLERS, lqb, php, scratchPerTest } from '../helpers/processes.js';

const QUEUE = 'lookup';
const current = scratchPerTest('cli-find', QUEUE);

describe('lqb find ID', () => {
  it('finds Laravel’s ready and delayed jobs by uuid or id, a failed one among the failed jobs, and none of a deleted one', async () => {
    const { s } = current;
    const laravel = async (kind: string, options: object) => {
      const result = await php('laravel-dispatch.php', [kind, JSON.stringify({ queue: QUEUE, ...options })], s.env);
      expect(result.status, `laravel-dispatch.php failed: ${result.stderr}`).toBe(0);
      return JSON.parse(result.stdout.trim()) as { id: string; uuid: string; class: string };
    };
    const ready = await laravel('record', { n: 1 });
    const delayed = await laravel('record', { n: 2, delay: 600 });
    const find = async (id: string, ...flags: string[]) => {
      const result = await lqb(['find', id, `--queue=${QUEUE}`, ...flags], s.env);
      return { ...result, found: result.status === 0 ? (JSON.parse(result.stdout) as Record<string, unknown>) : undefined };
    };

    expect((await find(ready.uuid)).found, 'Laravel’s ready job by uuid').toEqual({
      state: 'ready',
      queue: QUEUE,
      id: ready.id,
      uuid: ready.uuid,
      name: ready.class,
      attempts: 0,
    });
    expect((await find(ready.id)).found, 'Laravel’s ready job by id').toMatchObject({ state: 'ready', uuid: ready.uuid });
    const late = (await find(delayed.uuid)).found;
    expect(late, 'Laravel’s delayed job').toMatchObject({ state: 'delayed', id: delayed.id });
    expect(Date.parse(String(late?.until)) - Date.now(), 'the delayed job is not due in about 600 s').toBeGreaterThan(590_000);
    expect((await find(ready.uuid, '--queue=elsewhere')).status, 'found on a queue that does not hold it').toBe(1);

    // Node runs the ready job (RecordJob succeeds) and fails a failing one.
    const failing = await laravel('failing', { n: 3, message: 'nope' });
    const work = await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env);
    expect(work.status, `lqb work failed: ${work.stderr}`).toBe(0);
    const failed = await find(failing.uuid);
    expect(failed.found, 'the failed job').toMatchObject({ state: 'failed', queue: QUEUE, uuid: failing.uuid, name: failing.class });
    expect(String(failed.found?.exception), 'the failed job’s exception').toContain('nope');
    const gone = await find(ready.uuid);
    expect(gone.status, 'a job that ran and was deleted is found').toBe(1);
    expect(gone.stderr, 'the not-found line').toBe(
      `lqb find: no job ${JSON.stringify(ready.uuid)} on ${QUEUE} or among the failed jobs: it ran and was deleted, or was never pushed\n`,
    );
  });

  it('gives a job delayed past the year 275760 (past what a Date holds) its due time in UNIX seconds', async () => {
    const { s } = current;
    const seconds = 9_000_000_000_000;
    const pushed = await lqb(
      ['dispatch', 'App\\Jobs\\Bridge\\RecordJob', '--props={"n":7}', `--queue=${QUEUE}`, `--delay=${seconds}`],
      s.env,
    );
    expect(pushed.status, `lqb dispatch failed: ${pushed.stderr}`).toBe(0);
    const { uuid } = JSON.parse(pushed.stdout) as { uuid: string };
    const result = await lqb(['find', uuid, `--queue=${QUEUE}`], s.env);
    expect(result.stderr, 'lqb find’s error').toBe('');
    expect(result.status, 'lqb find’s exit status').toBe(0);
    const found = JSON.parse(result.stdout) as { state: string; until: unknown };
    expect(found.state, 'where the far-delayed job is').toBe('delayed');
    expect(Number(found.until) - seconds - Date.now() / 1000, 'until, in UNIX seconds, is not about now + the delay').toBeLessThan(60);
    expect(Number(found.until) - seconds - Date.now() / 1000, 'until, in UNIX seconds, is not about now + the delay').toBeGreaterThan(-60);
  });

  it('takes exactly one ID', async () => {
    const result = await lqb(['find'], current.s.env);
    expect(result.status, 'lqb find without an ID').toBe(2);
    expect(result.stderr.trim().split('\n'), 'the usage error is one line').toHaveLength(1);
  });
});
