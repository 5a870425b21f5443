/**
 * The failed-jobs view's filter on each database: by class (as Laravel's payload spells it, its
 * backslashes JSON-escaped), by queue, by exception text (with LIKE's wildcards taken literally),
 * and the count "retry all" and "forget all" act on: ids up to the one counted, so a failure
 * recorded after the count is left. Payloads are Laravel 8.83's own (fixtures/laravel).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { databaseConfig, openDatabase, quoteName } from '../../src/database/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { FailedJobsView } from '../../src/ui/failed.js';
import { DECODED_UP_TO, HEAD_READ, TAIL_READ } from '../../src/ui/jobs.js';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { debianPayloads } from '../helpers/laravel.js';
import { QUEUE_DATABASES } from '../helpers/jobs-table.js';

const plain = debianPayloads().filter((record) => !record.appKey);
const classOf = (payload: string) => (JSON.parse(payload) as { displayName: string }).displayName;
const [first, second] = [...new Set(plain.map((record) => classOf(record.payload)))];
const ofClass = (name: string) => plain.filter((record) => classOf(record.payload) === name);

describe.each(QUEUE_DATABASES)('FailedJobsView’s filter on %s', (database, urlOf) => {
  it('counts and lists by class, queue and exception text, and acts only on what it counted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lqb-ui-failed-'));
    const table = `failed_${randomBytes(4).toString('hex')}`;
    const url = urlOf(dir);
    const failer = DatabaseUuidFailedJobProvider.fromUrl(url, table);
    const view = new FailedJobsView(databaseConfig(url), table);
    try {
      const firsts = ofClass(first!).slice(0, 3);
      const seconds = ofClass(second!).slice(0, 2);
      for (const record of firsts) await failer.log('redis', 'mail', record.payload, 'RuntimeException: SMTP 50%_down');
      for (const record of seconds) await failer.log('redis', 'default', record.payload, 'RuntimeException: timeout');
      expect((await view.matching({ className: first! })).count, `${database}: failures of ${first}`).toBe(firsts.length);
      expect((await view.matching({ queue: 'default' })).count, `${database}: failures on default`).toBe(seconds.length);
      expect((await view.matching({ exception: '50%_down' })).count, `${database}: exception containing 50%_down`).toBe(firsts.length);
      expect((await view.matching({ exception: '5_%' })).count, `${database}: LIKE's wildcards are plain text`).toBe(0);
      expect((await view.matching({ className: first!, queue: 'default' })).count, `${database}: ${first} on default (none)`).toBe(0);
      const listed = await view.page(0, 10, { className: second! });
      expect(
        listed.jobs.map((job) => classOf(job.payload)),
        `${database}: the list of ${second}`,
      ).toEqual(seconds.map(() => second));

      const counted = await view.matching({ className: first! });
      // A failure of the same class after the count: "retry all" must leave it.
      const later = ofClass(first!)[3] ?? firsts[0]!;
      await failer.log('redis', 'mail', later.payload.replace(/"uuid":"[^"]+"/, `"uuid":"later-${table}"`), 'RuntimeException: later');
      const acted = await view.uuidsMatching({ className: first! }, counted.upTo, 0, 100);
      expect(acted.length, `${database}: what "retry all" acts on, after a later failure`).toBe(counted.count);
      expect(
        acted.some((row) => row.uuid === `later-${table}`),
        `${database}: the later failure is not among them`,
      ).toBe(false);

      // A failure too large to list whole: its payload's two ends and its exception's first 64 KB, with their sizes.
      const large = buildPayload(buildJob({ className: 'App\\Jobs\\Large', properties: { blob: 'x'.repeat(DECODED_UP_TO) } })).raw;
      const exception = `RuntimeException: large\n${'#0 /app/x.php(1): f()\n'.repeat(5000)}`;
      await failer.log('redis', 'big', large, exception);
      const [bigOne] = (await view.page(0, 1, { queue: 'big' }, { cut: true })).jobs;
      expect(bigOne?.cut?.bytes, `${database}: the large payload's size`).toBe(Buffer.byteLength(large));
      expect(bigOne?.payload, `${database}: its head`).toBe(large.slice(0, HEAD_READ));
      expect(bigOne?.cut?.tail, `${database}: its tail`).toBe(large.slice(-TAIL_READ));
      expect(bigOne?.exception, `${database}: the exception's start`).toBe(exception.slice(0, 64 * 1024));
      expect(bigOne?.exceptionLength, `${database}: the exception's length`).toBe(exception.length);
      const shown = await view.findShown(bigOne!.uuid);
      expect(shown?.cut?.bytes, `${database}: found by uuid, cut the same`).toBe(Buffer.byteLength(large));
    } finally {
      await failer.close();
      await view.close();
      if (database !== 'SQLite') {
        const db = openDatabase(databaseConfig(url));
        await db.query(`drop table if exists ${quoteName(db.dialect, table)}`);
        await db.close();
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
