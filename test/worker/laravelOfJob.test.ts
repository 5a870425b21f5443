/**
 * Which Laravel a job is read as where the app's version is not known: what its payload shows
 * (real payloads of each version, fixtures/laravel/, made by each version's own createPayload).
 * `lqb work` with no version says so once at start, records a 12.x payload's failure in
 * Laravel 12.67's own words (fixtures/laravel/failure-words.jsonl, from its exception classes),
 * and says the 11.39 lock-key line only at a payload it applies to, once.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { laravelOfJob, versionShownBy } from '../../src/worker/laravelOfJob.js';
import { failureWording } from '../../src/worker/errors.js';
import { WITHOUT_SHAPES_LINE } from '../../src/worker/methods.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { UNKNOWN_LARAVEL } from '../../src/connect/buildWorker.js';
import { failureWords } from '../helpers/failure-words.js';
import { root } from '../helpers/php.js';
import { connect } from '../../src/connect/index.js';
import { lqb, scratchPerTest } from '../helpers/processes.js';
import { REDIS_URL, rawClient } from '../helpers/redis.js';

interface Made {
  laravel: string;
  payload: string;
}
const made = (file: string): Made[] =>
  readFileSync(join(root, 'fixtures/laravel', file), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Made);
const versions = made('versions-5.8-to-12.jsonl');
const uniques = made('unique-12-13.jsonl');
const envelope = (record: Made) => JSON.parse(record.payload) as Record<string, unknown>;
const plainJob = (laravel: string) => versions.find((r) => r.laravel === laravel && envelope(r).displayName === 'App\\Jobs\\PlainJob')!;

describe('versionShownBy, on payloads each version made', () => {
  it.each([...new Set(versions.map((r) => r.laravel))])('Laravel %s', (laravel) => {
    const shown = versions.filter((r) => r.laravel === laravel).map((r) => versionShownBy(envelope(r)));
    // createdAt came in 12.11; before it a payload shows nothing of its version (no unique job here).
    const expected = Number(laravel.split('.')[0]) >= 12 ? '12.11' : undefined;
    expect(new Set(shown), `what Laravel ${laravel}'s payloads show of their version`).toEqual(new Set([expected]));
  });

  it('a unique job 12.67 and 13.26 locked shows 12.11+ (createdAt), and its hidden context names the lock', () => {
    for (const record of uniques) {
      expect(versionShownBy(envelope(record)), `what a ${record.laravel} unique job's payload shows`).toBe('12.11');
      const withoutCreatedAt = { ...envelope(record) };
      delete withoutCreatedAt.createdAt;
      const locked = JSON.stringify(withoutCreatedAt).includes('laravel_unique_job_key');
      expect(versionShownBy(withoutCreatedAt), `a ${record.laravel} payload's hidden context alone (locked: ${locked})`).toBe(
        locked ? '11.39' : undefined,
      );
    }
  });

  it("the app's version, where known, is the answer; the payload's only without it", () => {
    const twelve = envelope(plainJob('12.67.0'));
    expect(laravelOfJob('8.83.29', twelve), 'an 8.83 app reading a 12.x payload').toBe('8.83.29');
    expect(laravelOfJob(undefined, twelve), 'no version, a 12.x payload').toBe('12.11');
    expect(laravelOfJob(undefined, envelope(plainJob('10.50.3'))), 'no version, a 10.50 payload').toBeUndefined();
    expect(failureWording(undefined, twelve), "a 12.x payload's failure words with no version").toBe('from-10.10');
  });

  it('a version only given (--laravel), not read from the app, is outranked by a payload that shows a later Laravel', () => {
    const twelve = envelope(plainJob('12.67.0'));
    expect(laravelOfJob('8.83.29', twelve, true), '--laravel=8.83.29 reading a 12.x payload').toBe('12.11');
    expect(laravelOfJob('13.26.1', twelve, true), '--laravel=13.26.1 reading a 12.x payload').toBe('13.26.1');
    expect(laravelOfJob('8.83.29', envelope(plainJob('10.50.3')), true), '--laravel=8.83.29 reading a 10.50 payload').toBe('8.83.29');
  });
});

describe('lqb work where no version is known', () => {
  const current = scratchPerTest('version');
  const twelve = failureWords.find((w) => w.laravel.startsWith('12.'))!;
  // Laravel 12.67's own words (its exception classes, for App\Jobs\Slow), of the fixture's App\Jobs\PlainJob.
  const words = () =>
    [twelve.timedOut, twelve.outOfAttempts].map((w) => `${w.class}: ${w.message.replace('App\\Jobs\\Slow', 'App\\Jobs\\PlainJob')}`);

  it('says "unknown" once at start, words a 12.67 payload’s failure as 12.67 does (under a lower --laravel too), and says the 11.39 line once, at the first payload it applies to', async () => {
    const handlers = join(current.s.dir, 'hangs.mjs');
    writeFileSync(
      handlers,
      "export default { 'App\\\\Jobs\\\\PlainJob': (job) => new Promise((resolve) => job.signal.addEventListener('abort', resolve)) };\n",
    );
    const raw = rawClient();
    await raw.rpush(`${current.prefix}queues:default`, plainJob('12.67.0').payload);
    const work = (...flags: string[]) =>
      lqb(['work', `--handlers=${handlers}`, '--timeout=1', '--sleep=0', '--no-share', ...flags], current.s.env);
    // A job past its timeout stays reserved until retry_after, as Laravel's does: three attempts of 3 (the payload's maxTries), the last failed.
    const first = await work('--retry-after=2', '--max-jobs=3', '--max-time=60');
    expect(first.status, `lqb work on a 12.67 payload: ${first.stderr}`).toBe(0);
    const starts = first.stderr.split('\n').filter((line) => line.startsWith('lqb work: worker starting:'));
    expect(starts, 'the start line').toEqual([expect.stringContaining(`, Laravel ${UNKNOWN_LARAVEL}, queues default,`)]);
    expect(
      (first.stdout + first.stderr).split('\n').filter((line) => line.includes('cannot be known before Laravel 11.39')),
      'the 11.39 lock-key line, with only a 12.67 payload on the queue',
    ).toEqual([]);
    const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
    try {
      const [record] = await failer.all();
      const firstLine = record?.exception.split('\n')[0]!.replace(/ in \S+:\d+$/, '');
      expect(words(), `the failed_jobs exception of the 12.67 PlainJob, in Laravel ${twelve.laravel}'s words`).toContain(firstLine);
    } finally {
      await failer.close();
    }

    // --laravel below what the payload shows: the payload outranks the flag (no installed.json says otherwise).
    // Another of 12.67's PlainJobs (another uuid, its own failed_jobs row), as the first: 3 tries, no timeout of its own.
    const another = versions.find(
      (r) =>
        r.laravel === '12.67.0' &&
        envelope(r).displayName === 'App\\Jobs\\PlainJob' &&
        envelope(r).maxTries === 3 &&
        envelope(r).timeout === null &&
        envelope(r).uuid !== envelope(plainJob('12.67.0')).uuid,
    )!;
    await raw.rpush(`${current.prefix}queues:default`, another.payload);
    const flagged = await work('--laravel=8.83.29', '--retry-after=2', '--max-jobs=3', '--max-time=60');
    expect(flagged.status, `lqb work --laravel=8.83.29 on a 12.67 payload: ${flagged.stderr}`).toBe(0);
    const again = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
    try {
      const failed = await again.find(String(envelope(another).uuid));
      const line = failed?.exception.split('\n')[0]!.replace(/ in \S+:\d+$/, '');
      expect(
        words(),
        `the failed_jobs exception of ${String(envelope(another).uuid)} under --laravel=8.83.29, in Laravel ${twelve.laravel}'s words`,
      ).toContain(line);
    } finally {
      await again.close();
    }

    // Payloads of 10.50 and 11.56, which show nothing of their version: the line applies, said once.
    await raw.rpush(`${current.prefix}queues:default`, plainJob('10.50.3').payload, plainJob('11.56.0').payload);
    raw.disconnect();
    const second = await work('--stop-when-empty');
    expect(second.status, `lqb work on 10.50 and 11.56 payloads: ${second.stderr}`).toBe(0);
    expect(
      (second.stdout + second.stderr).split('\n').filter((line) => line.includes('cannot be known before Laravel 11.39')),
      'the 11.39 lock-key line, with payloads that show no version',
    ).toEqual([expect.stringContaining(WITHOUT_SHAPES_LINE)]);
  });

  it('connect({ laravel }) below what a payload shows: its worker words the failure as the payload’s Laravel', async () => {
    const third = versions.find(
      (r) =>
        r.laravel === '12.67.0' && envelope(r).displayName === 'App\\Jobs\\PlainJob' && String(envelope(r).uuid).startsWith('091443eb'),
    )!;
    const raw = rawClient();
    await raw.rpush(`${current.prefix}queues:default`, third.payload);
    raw.disconnect();
    const failedDb = join(current.s.dir, 'connect-failed.sqlite');
    const queue = await connect({ redis: REDIS_URL, prefix: current.prefix, laravel: '8.83.29', failedDb, logger: false });
    try {
      const hang = (job: { signal: AbortSignal }) => new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()));
      await queue
        .worker({ 'App\\Jobs\\PlainJob': hang }, { timeout: 1, retryAfter: 2, maxJobs: 3, maxTime: 60, sleep: 0, share: false })
        .run();
      const failed = await queue.failer.find(String(envelope(third).uuid));
      const line = failed?.exception.split('\n')[0]!.replace(/ in \S+:\d+$/, '');
      expect(words(), `the failed_jobs exception of ${String(envelope(third).uuid)} under laravel: '8.83.29'`).toContain(line);
    } finally {
      await queue.close();
    }
  });
});
