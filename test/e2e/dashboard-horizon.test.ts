/**
 * `lqb ui` over Horizon's records, in a real browser (Debian's chromium, driven by
 * playwright-core): the records Horizon 5.22.1 itself wrote on Laravel 8.83 (the last state of
 * fixtures/horizon/events.jsonl) under this test's prefixes, the dashboard told Horizon's prefix
 * with --horizon-prefix. The page shows a job's Horizon status beside it, the queue's throughput
 * as Horizon measured it, and Horizon's failed list with the exception Horizon kept. Screenshots go
 * to test-artifacts/ (gitignored) as the other dashboard tests' do. Last, the dashboard's Retry
 * (its API) of the job Horizon holds a failed record of, once Laravel 8.83's own worker has failed
 * it into failed_jobs: retried as Horizon's Retry does, as `lqb retry` retries it.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { root } from '../helpers/php.js';
import { postAction, startUi, type RunningUi } from '../helpers/ui.js';
import { php } from '../helpers/processes.js';
import { rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';
import { horizonFixtureId as ID, loadHorizonLastState } from '../helpers/horizon-state.js';
import { readHorizonFixtures } from '../horizon/fixtures.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(root, 'test-artifacts');

let prefix: string;
let dir: string;
let server: RunningUi;
let browser: Browser;
let page: Page;

async function shot(name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `ui-horizon-${name}.png`), fullPage: true });
}

beforeAll(async () => {
  expect(existsSync(CHROMIUM), `chromium at ${CHROMIUM} (php-fixture-gen/install-deps.sh installs it)`).toBe(true);
  prefix = uniquePrefix('ui-hz');
  dir = mkdtempSync(join(tmpdir(), 'lqb-ui-hz-'));
  await loadHorizonLastState(prefix, `${prefix}horizon:`);
  server = await startUi([
    `--prefix=${prefix}`,
    `--horizon-prefix=${prefix}horizon:`,
    `--failed-db=${join(dir, 'failed.sqlite')}`,
    '--connection=redis',
  ]);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
});

afterAll(async () => {
  await browser?.close();
  server?.child.kill('SIGTERM');
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe('lqb ui in chromium, over the records Horizon 5.22.1 wrote on Laravel 8.83', () => {
  it('shows the queue’s throughput and runtime as Horizon measured them, and links Horizon’s lists', async () => {
    await page.goto(server.url);
    const row = page.getByTestId('queue-default');
    await row.waitFor();
    await expect
      .poll(() => row.getByTestId('horizon-metrics').textContent(), { message: 'default: Horizon’s metrics' })
      .toBe('Horizon: 4 done, 4.99 ms mean');
    expect(await row.getByTestId('finished').textContent(), 'the chart’s finished jobs: Horizon’s count, no lower bound').toBe(
      '4 finished',
    );
    expect(await row.getByTestId('delayed').textContent()).toBe('1');
    await page.getByTestId('horizon-links').waitFor();
    await shot('overview');
  });

  it('shows beside the delayed job Horizon’s status of it', async () => {
    await page.goto(`${server.url}#/queues/default/delayed`);
    const job = page.locator(`[data-testid="job"][data-uuid="${ID(6)}"]`);
    await job.waitFor();
    expect((await job.getByTestId('horizon-status').textContent())?.replace(/\s+/g, ' ').trim(), 'E: Horizon’s record').toMatch(
      /^Horizon: pending \d+h ago$/,
    );
  });

  it('lists Horizon’s failed jobs with the exception Horizon kept, and its completed ones', async () => {
    await page.goto(`${server.url}#/horizon/failed`);
    const failed = page.locator(`[data-testid="horizon-job"][data-uuid="${ID(3)}"]`);
    await failed.waitFor();
    expect(await failed.getByTestId('job-name').textContent()).toBe('App\\Jobs\\SyncUser');
    expect(await failed.getByTestId('exception').locator('summary').textContent(), 'C: the exception').toMatch(
      /^RuntimeException: CRM rejected user 42/,
    );
    expect(JSON.parse((await failed.getByTestId('properties').textContent())!).user, 'C: its model').toBe('App\\Models\\User#42');
    await shot('failed');
    await page.getByTestId('horizon-tab-completed').click();
    await expect
      .poll(() => page.getByTestId('horizon-job').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-uuid'))))
      .toEqual([ID(5), ID(2), ID(1)]);
  });

  it('lists the tags Horizon monitors and a tag’s jobs, and Horizon’s silenced jobs', async () => {
    await page.goto(server.url);
    await page.getByTestId('horizon-tags-link').click();
    const billing = page.locator('[data-testid="horizon-tag"][data-tag="billing"]');
    await billing.waitFor();
    expect(await billing.getByTestId('tag-jobs').textContent(), 'billing: its jobs').toBe('1');
    await shot('tags');
    await billing.locator('a').first().click();
    await expect
      .poll(() => page.getByTestId('tagged-job').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-uuid'))), {
        message: 'billing’s jobs',
      })
      .toEqual([ID(2)]);
    await page.goto(`${server.url}#/horizon/silenced`);
    await expect
      .poll(() => page.getByTestId('horizon-job').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-uuid'))), {
        message: 'Horizon’s silenced jobs',
      })
      .toEqual([ID(4)]);
  });

  it('opens a failed job’s page from Horizon’s failed list: its retry, and from the retry the job it retries', async () => {
    await page.goto(`${server.url}#/horizon/failed`);
    await page
      .locator(`[data-testid="horizon-job"][data-uuid="${ID(3)}"]`)
      .getByTestId('job-link')
      .click();
    const job = page.getByTestId('job-page');
    await job.waitFor();
    expect(await job.getByTestId('side').first().textContent(), 'C: failed on PHP, its trace says').toBe('PHP');
    const retries = job.getByTestId('retries').locator('tbody tr');
    expect(await retries.count(), 'C: its retries, as retried_by lists them').toBe(1);
    expect(await retries.first().locator('td').nth(1).textContent(), 'C′: the retry’s status').toBe('completed');
    await shot('job');
    if (process.env.LQB_UI_DOCS_SCREENSHOTS === '1')
      copyFileSync(join(ARTIFACTS, 'ui-horizon-job.png'), join(root, 'docs', 'ui-horizon-job.png'));
    await retries.first().locator('a').click();
    await page.getByTestId('retry-of').waitFor();
    expect(await page.getByTestId('retry-of').textContent(), 'C′: the job it retries').toBe(ID(3));
  });
});

describe('the dashboard’s Retry, over Horizon’s records, as lqb retry', () => {
  /** Laravel 8.83's own worker, its failed_jobs the dashboard's, its Redis keys under a prefix of their own. */
  const laravelEnv = () => ({ ...process.env, REDIS_PREFIX: `${prefix}laravel:`, LQB_FAILED_DB: join(dir, 'failed.sqlite') });

  it('retries a job Laravel 8.83 failed, which Horizon holds a failed record of, as Horizon’s Retry does: a new job retry_of it, pending in retried_by, its failed_jobs row gone', async () => {
    // C's payload as Horizon's queue pushed it (fixture step 11); Laravel 8.83's worker fails it
    // (no SyncUser class here) and its failer keeps it, as the app's failed_jobs would.
    const pushedC = readHorizonFixtures().find((line) => line.step === 11)!.payload!;
    const raw = rawClient();
    try {
      await raw.rpush(`${prefix}laravel:queues:default`, pushedC);
      const ran = await php('laravel-worker.php', ['--queue=default', '--stop-when-empty', '--sleep=0', '--tries=1'], laravelEnv());
      expect(ran.stdout, `Laravel's worker: ${ran.stderr}`).toMatch(/Failed:\s+App\\Jobs\\SyncUser/);
      const before = await getJson('api/failed');
      expect(
        before.jobs.map((job: { uuid: string }) => job.uuid),
        'failed_jobs: the job Laravel failed',
      ).toEqual([ID(3)]);
      expect(before.jobs[0].horizon?.status, 'beside it, Horizon’s failed record (Horizon 5.22.1 wrote it)').toBe('failed');

      const answer = await postAction(server.url, `api/failed/${ID(3)}/retry`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const retryId = (answer.body.horizon as { id?: string } | undefined)?.id;
      expect(answer.body, 'the answer names the new job').toMatchObject({ retried: ID(3), queue: 'default', horizon: { id: retryId } });
      expect(retryId, 'the retry’s id: Str::orderedUuid()').toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );

      const [queued] = await raw.lrange(`${prefix}queues:default`, 0, -1);
      const payload = JSON.parse(queued!) as Record<string, unknown>;
      expect(payload, 'pushed as Horizon’s Retry pushes it').toMatchObject({
        id: retryId,
        uuid: retryId,
        attempts: 0,
        retry_of: ID(3),
        type: 'job',
        silenced: false,
      });
      const record = await raw.hgetall(`${prefix}horizon:${retryId}`);
      expect(record, 'the retry’s record: pending, holding what the queue holds').toMatchObject({ status: 'pending', payload: queued });
      const failed = await raw.hgetall(`${prefix}horizon:${ID(3)}`);
      expect(failed.status, 'the failed record stays failed, as in Horizon').toBe('failed');
      const retriedBy = JSON.parse(failed.retried_by!) as { id: string; status: string }[];
      expect(
        retriedBy.map(({ id, status }) => ({ id, status })),
        'retried_by: Horizon’s own retry C′ (completed), then this one, pending',
      ).toEqual([
        { id: ID(5), status: 'completed' },
        { id: retryId, status: 'pending' },
      ]);
    } finally {
      raw.disconnect();
    }
    const left = await php('laravel-dispatch.php', ['failed', '{}'], laravelEnv());
    expect(left.stdout.trim(), `failed_jobs as Laravel's failer reads it: ${left.stderr}`).toBe('[]');
    expect((await getJson('api/failed')).total, 'the dashboard’s failed list').toBe(0);
  });
});

async function getJson(path: string): Promise<any> {
  const res = await fetch(server.url + path);
  expect(res.status, `GET ${path}`).toBe(200);
  return res.json();
}
