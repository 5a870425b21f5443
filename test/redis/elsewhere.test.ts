/**
 * A queue that waits under the other default spelling of a Laravel 12 app's prefix
 * (`{slug}-database-` against `{slug}_database_`): real Laravel pushes under one, Node is
 * pointed at the other, and `lqb size` and `lqb work` say where the jobs are, in one line.
 * Jobs under any other prefix (`*queues:NAME`) are found by a bounded SCAN on a redis-server of
 * the test's own (the shared one holds other tests' queues), counted by its INFO commandstats.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ELSEWHERE_BOUNDS, otherDefaultSpelling } from '../../src/redis/elsewhere.js';
import { HANDLERS, laravelDispatch, lqb, scratch, type Scratch } from '../helpers/processes.js';
import { ownRedisWithAdmin, rawClient, removePrefix } from '../helpers/redis.js';

const slug = `elsewhere${randomBytes(3).toString('hex')}`;
const hyphenated = `${slug}-database-`;
const underscored = `${slug}_database_`;
let s: Scratch | undefined;

const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  s?.remove();
  const raw = rawClient();
  for (const prefix of [hyphenated, underscored]) await removePrefix(raw, prefix);
  raw.disconnect();
});

describe('otherDefaultSpelling', () => {
  it.each([
    ['laravel_database_', 'laravel-database-'],
    ['my_app_database_', 'my-app-database-'],
    ['my-app-database-', 'my_app_database_'],
    ['custom:', undefined],
    ['', undefined],
  ])('of %j is %j', (prefix, other) => {
    expect(otherDefaultSpelling(prefix)).toBe(other);
  });
});

describe('jobs Laravel pushed under the hyphenated prefix, Node reading the underscored one', () => {
  it('lqb size and lqb work say, once each, where the jobs wait and the --prefix to give', async () => {
    s = scratch(hyphenated, 'default');
    await laravelDispatch(s.env, 'default', 'record', { n: 1, label: 'elsewhere' });
    const env = { ...s.env, REDIS_PREFIX: underscored };
    const sized = await lqb(['size'], env);
    expect([sized.status, sized.stdout.trim()], 'lqb size under the other spelling').toEqual([0, 'default  0']);
    const line = `the queues under the prefix "${underscored}" are empty, but 1 job on default wait under "${hyphenated}", the other spelling Laravel 12's skeletons give: if that is the app's, give --prefix=${hyphenated} (REDIS_PREFIX, or connect({ prefix }))`;
    expect(sized.stderr.trim().split('\n'), 'what lqb size said on standard error').toEqual([`lqb size: ${line}`]);

    const worked = await lqb(['work', `--handlers=${HANDLERS}`, '--stop-when-empty', '--sleep=1', '--max-time=5'], env);
    expect(worked.status, worked.stderr).toBe(0);
    expect(
      worked.stdout.split('\n').filter((l) => l.includes('other spelling')),
      `the lines of lqb work that say where the jobs are: ${worked.stdout}`,
    ).toEqual([expect.stringContaining(line)]);

    const right = await lqb(['size'], s.env);
    expect([right.stdout.trim(), right.stderr], 'lqb size under the prefix the jobs are under').toEqual(['default  1', '']);
  });
});

/** How many SCAN calls the server has answered since its stats were reset. */
async function scansMade(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  return Number(/cmdstat_scan:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

describe('jobs under any other prefix (`*queues:NAME`), Node reading its own empty one', () => {
  it('lqb size, lqb find and lqb work each say in one line where they wait and the --prefix to give; the worker looks once, not per poll', async () => {
    const { url, admin } = await ownRedisWithAdmin(cleanups);
    s = scratch('mine:', 'default');
    const env = { ...s.env, REDIS_URL: url, REDIS_PREFIX: 'mine:' };
    const pushed = await lqb(['dispatch', 'App\\Jobs\\Bridge\\RecordJob', '--props={"n":1}', '--prefix=other-app:'], env);
    expect(pushed.status, `lqb dispatch under other-app: ${pushed.stderr}`).toBe(0);
    const hint = `1 job on default wait under "other-app:": if that is the app's, give --prefix=other-app: (REDIS_PREFIX, or connect({ prefix }))`;

    const sized = await lqb(['size'], env);
    expect([sized.status, sized.stdout.trim()], 'lqb size under mine:').toEqual([0, 'default  0']);
    expect(sized.stderr.trim().split('\n'), 'what lqb size said on standard error').toEqual([
      `lqb size: the queues under the prefix "mine:" are empty, but ${hint}`,
    ]);

    const found = await lqb(['find', '00000000-0000-4000-8000-000000000000'], env);
    expect(found.status, 'lqb find of a job not under mine:').toBe(1);
    expect(found.stderr.trim().split('\n'), 'what lqb find said on standard error').toEqual([
      expect.stringMatching(/^lqb find: no job "00000000-0000-4000-8000-000000000000" on default or among the failed jobs: .*; but /),
    ]);
    expect(found.stderr, 'lqb find names where the jobs wait').toContain(`; but ${hint}`);

    await admin.config('RESETSTAT');
    const worked = await lqb(['work', `--handlers=${HANDLERS}`, '--sleep=1', '--max-time=4'], env);
    expect(worked.status, worked.stderr).toBe(0);
    expect(
      worked.stdout.split('\n').filter((line) => line.includes('other-app:')),
      `the lines of lqb work that say where the jobs are: ${worked.stdout}`,
    ).toEqual([expect.stringContaining(`are empty, but ${hint}`)]);
    // Polled about four times in 4 s; looked once: one bounded SCAN walk (the keys fit one call).
    expect(await scansMade(admin), 'SCAN calls lqb work made over its polls').toBe(1);
    expect(await admin.llen('other-app:queues:default'), 'the job under other-app: (looked at, never taken)').toBe(1);
  });

  it('a look over many keys stops at its bound: ELSEWHERE_BOUNDS.scans SCAN calls a queue, found or not', async () => {
    const { url, admin } = await ownRedisWithAdmin(cleanups);
    const filler = ELSEWHERE_BOUNDS.count * ELSEWHERE_BOUNDS.scans * 2;
    for (let start = 0; start < filler; start += 5000) {
      const pairs = Array.from({ length: Math.min(5000, filler - start) }, (_, i) => [`filler:${start + i}`, '1']).flat();
      await admin.mset(...pairs);
    }
    await admin.config('RESETSTAT');
    s = scratch('mine:', 'default');
    const sized = await lqb(['size', '--queue=default,mail'], { ...s.env, REDIS_URL: url, REDIS_PREFIX: 'mine:' });
    expect([sized.status, sized.stdout, sized.stderr], 'lqb size over many keys, nothing elsewhere').toEqual([
      0,
      'default  0\nmail     0\n',
      '',
    ]);
    expect(await scansMade(admin), `SCAN calls for two queues over ${filler} keys`).toBe(2 * ELSEWHERE_BOUNDS.scans);
  });
});
