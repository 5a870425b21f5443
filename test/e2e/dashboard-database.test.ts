/**
 * `lqb ui` on the database connection, in a real browser (Debian's chromium, driven by
 * playwright-core): a jobs table made by Laravel 8.83's own Schema builder on SQLite, MariaDB and
 * PostgreSQL, filled by
 * its own DatabaseQueue (php-fixture-gen/laravel-database-queue.php), one job reserved by its own
 * pop. The page, served by `lqb ui --connection=database` with no Redis named (so it opens
 * none), shows the counts and the decoded command; its cancel and pause are checked in the
 * tables, the pause switch (on SQLite, whose scratch file holds a `cache` table of the test's
 * own) read back by Laravel's own DatabaseStore. PHP produces, the dashboard reads. Screenshots go to test-artifacts/ (gitignored) as the Redis test's do.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { root } from '../helpers/php.js';
import { searchHits, startUi, type RunningUi } from '../helpers/ui.js';
import { HANDLERS, lqb, php } from '../helpers/processes.js';
import { QUEUE_DATABASES } from '../helpers/jobs-table.js';
import { rawClient, removePrefix } from '../helpers/redis.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(root, 'test-artifacts');
const READY = '00000000-0000-4000-8000-0000000000d1';
const DELAYED = '00000000-0000-4000-8000-0000000000d2';
const HELD = '00000000-0000-4000-8000-0000000000d3';
/** Laravel 8's cache.prefix for APP_NAME=Laravel: DatabaseStore puts nothing between it and a key. */
const CACHE_PREFIX = 'laravel_cache';

let dir: string;
let database: string;
let table: string;
let env: NodeJS.ProcessEnv;
let server: RunningUi;
let browser: Browser;
let page: Page;
let label: string;

interface Row {
  id: number;
  attempts: number;
  reserved_at: number | null;
  payload: string;
}

/** laravel-database-queue.php OP on the test's table; its JSON answer. */
async function laravel(op: string, options?: object): Promise<any> {
  const result = await php('laravel-database-queue.php', options ? [op, JSON.stringify(options)] : [op], env);
  if (result.status !== 0) throw new Error(`laravel-database-queue.php ${op} exited ${result.status}: ${result.stderr.trim()}`);
  return result.stdout.trim() === '' ? undefined : JSON.parse(result.stdout);
}

/** Laravel 8.83's own DatabaseStore on the SQLite file's `cache` table (php-fixture-gen/cache-store.php). */
function cacheStore(...ops: object[]): unknown[] {
  return JSON.parse(
    execFileSync('php', [join(root, 'php-fixture-gen/cache-store.php')], {
      input: JSON.stringify({ connection: { driver: 'sqlite', database, prefix: '' }, table: 'cache', prefix: CACHE_PREFIX, ops }),
      encoding: 'utf8',
    }),
  ) as unknown[];
}

async function shot(name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `ui-database-${label}-${name}.png`), fullPage: true });
}

async function confirmAction(button: ReturnType<Page['locator']>): Promise<void> {
  // The last action's notice stays three seconds: wait it out, so the one awaited below is this action's.
  await page.getByTestId('notice').waitFor({ state: 'detached' });
  await button.click();
  await page.getByTestId('confirm-yes').click();
  await page.getByTestId('notice').waitFor();
}

const row = (queue: string) => page.getByTestId(`queue-${queue}`);
const cell = async (queue: string, state: string) => (await row(queue).getByTestId(state).textContent())?.trim();
const uuids = (rows: Row[]) => rows.map((r) => JSON.parse(r.payload).uuid as string).sort();

describe.each(QUEUE_DATABASES)(
  'lqb ui --connection=database in chromium, over a jobs table Laravel 8.83 made and filled (%s)',
  (name, url) => {
    beforeAll(async () => {
      expect(existsSync(CHROMIUM), `chromium at ${CHROMIUM} (php-fixture-gen/install-deps.sh installs it)`).toBe(true);
      label = name.toLowerCase();
      dir = mkdtempSync(join(tmpdir(), 'lqb-ui-db-'));
      database = url(dir);
      table = `lqb_ui_${randomBytes(4).toString('hex')}_jobs`;
      const { REDIS_URL: _url, REDIS_CLUSTER: _cluster, ...rest } = process.env;
      env = {
        ...rest,
        QUEUE_CONNECTION: 'database',
        LQB_QUEUE_DB: database,
        LQB_JOBS_TABLE: table,
        QUEUE_NAME: 'default',
        // Laravel's PHP app reads its restart signal from a Redis cache: a prefix of this test's own.
        REDIS_PREFIX: `lqb-ui-db-${randomBytes(3).toString('hex')}:`,
        LQB_FAILED_DB: join(dir, 'failed.sqlite'),
      };
      await laravel('create-table');
      if (name === 'SQLite') cacheStore({ op: 'create' });
      // HELD first, so Laravel's pop reserves it; then READY, and DELAYED for ten minutes.
      await laravel('record', { uuid: HELD, n: 3, label: 'held' });
      expect(JSON.parse((await laravel('pop', { then: 'keep' })).payload).uuid, 'Laravel’s pop reserved HELD').toBe(HELD);
      await laravel('record', { uuid: READY, n: 1, label: 'hello', ratio: 0.5, items: [1, 2], flag: true });
      await laravel('record', { uuid: DELAYED, n: 2, label: 'later', delay: 600 });

      server = await startUi(
        [`--connection=database`, `--queue-db=${database}`, `--jobs-table=${table}`, `--failed-db=${join(dir, 'failed.sqlite')}`],
        env,
      );
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
      page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(server.url);
    });

    afterAll(async () => {
      await browser?.close();
      server?.child.kill('SIGTERM');
      await laravel('drop-table').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
      const raw = rawClient();
      await removePrefix(raw, env.REDIS_PREFIX!).catch(() => undefined);
      raw.disconnect();
    });

    it('shows the queue’s ready, delayed and reserved counts', async () => {
      await row('default').waitFor();
      await expect.poll(() => cell('default', 'ready'), { message: 'default: ready' }).toBe('1');
      expect(await cell('default', 'delayed'), 'default: delayed').toBe('1');
      expect(await cell('default', 'reserved'), 'default: reserved').toBe('1');
      expect(await cell('default', 'failed'), 'default: failed').toBe('0');
      expect(await row('default').locator('td').first().textContent(), 'the connection named').toContain('database');
      await shot('overview');
    });

    it('lists the ready job with its command decoded, its id the row’s', async () => {
      await page.goto(`${server.url}#/queues/default/ready`);
      const job = page.locator(`[data-testid="job"][data-uuid="${READY}"]`);
      await job.waitFor();
      expect(await job.getByTestId('job-name').textContent()).toBe('App\\Jobs\\Bridge\\RecordJob');
      expect(JSON.parse((await job.getByTestId('properties').textContent())!), 'RecordJob n=1 as Laravel serialized it').toMatchObject({
        '@class': 'App\\Jobs\\Bridge\\RecordJob',
        n: 1,
        label: 'hello',
        ratio: 0.5,
        items: [1, 2],
        flag: true,
      });
      await job.locator('summary').click();
      await shot('jobs');
    });

    it('shows the job Laravel’s pop reserved with the attempts column and its reservation’s end', async () => {
      await page.goto(`${server.url}#/queues/default/reserved`);
      const held = page.locator(`[data-testid="job"][data-uuid="${HELD}"]`);
      await held.waitFor();
      expect((await held.locator('td').nth(1).textContent())?.trim(), 'attempts of the reserved row').toBe('1');
      expect((await held.locator('td').nth(2).textContent())?.trim(), 'the reservation ends in retry_after (90 s)').toMatch(/^in \d+s$/);
    });

    it('cancels the delayed job: its row, and only it, leaves the table', async () => {
      await page.goto(`${server.url}#/queues/default/delayed`);
      const delayed = page.locator(`[data-testid="job"][data-uuid="${DELAYED}"]`);
      await delayed.waitFor();
      await shot('delayed');
      await confirmAction(delayed.getByTestId('cancel'));
      expect(uuids((await laravel('rows')) as Row[]), 'rows left in the jobs table').toEqual([HELD, READY].sort());
      await page.goto(server.url);
      await expect.poll(() => cell('default', 'delayed'), { message: 'default: delayed after the cancel' }).toBe('0');
    });

    it('cancels from the command line too: lqb cancel on a job that is not delayed says where it is and deletes nothing', async () => {
      const result = await lqb(['cancel', READY, '--connection=database', `--queue-db=${database}`, `--jobs-table=${table}`], env);
      expect(result.status, 'lqb cancel of a ready job').toBe(1);
      expect(result.stderr).toMatch(/no delayed job \[[-0-9a-f]+\] on queue \[default\]: the job is ready already/);
      expect(uuids((await laravel('rows')) as Row[]), 'rows left').toEqual([HELD, READY].sort());
    });

    // The pause switches go to the cache table of the queue's database: on SQLite, the scratch file's own.
    if (name === 'SQLite')
      it('pauses and resumes in the database cache store, as Laravel’s DatabaseStore reads it', async () => {
        await page.goto(server.url);
        await row('default').waitFor();
        await confirmAction(row('default').getByTestId('pause-toggle'));
        await expect.poll(() => row('default').getByTestId('status').textContent(), { message: 'default: status' }).toBe('paused');
        await shot('paused');
        expect(cacheStore({ op: 'get', key: 'illuminate:queue:paused:database:default' }), 'the switch as DatabaseStore reads it').toEqual([
          true,
        ]);
        await confirmAction(row('default').getByTestId('pause-toggle'));
        await expect.poll(() => row('default').getByTestId('status').textContent()).toBe('running');
        expect(cacheStore({ op: 'get', key: 'illuminate:queue:paused:database:default' }), 'the switch after resume').toEqual([null]);
      });

    it('opens the ready job’s own page from its list: the row’s id and the envelope’s fields', async () => {
      await page.goto(`${server.url}#/queues/default/ready`);
      await page.locator(`[data-testid="job"][data-uuid="${READY}"]`).getByTestId('job-link').click();
      const job = page.getByTestId('job-page');
      await job.waitFor();
      expect(await job.getByTestId('found-in').textContent(), `${name}: READY found`).toBe('ready');
      expect(await job.getByTestId('field-displayName').locator('td').textContent(), `${name}: READY's displayName`).toBe(
        'App\\Jobs\\Bridge\\RecordJob',
      );
      await shot('job');
    });

    it('searches the jobs table by text in the command, saying how much it searched', async () => {
      const hits = await searchHits(page, server.url, 'hello');
      expect(hits, `${name}: hits for "hello": READY, whose label it is`).toEqual([[READY, 'default · ready']]);
      await shot('search');
    });

    it('lists what a Node worker on the jobs table completed, from the record it keeps in the same database', async () => {
      // Its cache (pause switches, the restart signal) in Redis under the test's prefix: the queue and its record stay in the database.
      const worked = await lqb(
        [
          'work',
          '--connection=database',
          `--queue-db=${database}`,
          `--jobs-table=${table}`,
          `--handlers=${HANDLERS}`,
          '--cache-store=redis',
          '--redis=redis://127.0.0.1:6379',
          `--prefix=${env.REDIS_PREFIX}`,
          '--stop-when-empty',
          '--sleep=0',
        ],
        { ...env, LQB_NODE_RECORD_FILE: join(dir, 'node-runs.jsonl') },
      );
      expect(worked.status, `lqb work on ${name}: ${worked.stderr.slice(-600)}`).toBe(0);
      await page.goto(`${server.url}#/completed`);
      await expect
        .poll(() => page.getByTestId('completed-job').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-uuid'))), {
          message: `${name}: the jobs Node's record says it completed`,
        })
        .toContain(READY);
      await shot('completed');
      // Who runs what, from the same record: the class Node ran (the shared test database may hold other runs' too).
      await page.goto(`${server.url}#/activity`);
      const row = page.locator(
        `[data-testid="activity-classes"] [data-testid="activity-row"][data-name="App\\\\Jobs\\\\Bridge\\\\RecordJob"]`,
      );
      await row.waitFor();
      expect(Number(await row.getByTestId('node-ran').textContent()), `${name}: RecordJob, run by Node`).toBeGreaterThanOrEqual(1);
      expect(await row.getByTestId('horizon-ran').textContent(), `${name}: PHP's runs, without Horizon`).toBe('unknown');
      await shot('activity');
    });

    it('said nothing on standard error (no Redis was looked for)', () => {
      expect(server.stderr(), 'lqb ui’s standard error').toBe('');
    });
  },
);
