/**
 * `lqb ui`'s views beyond the queue lists, in a real browser (Debian's chromium, driven by
 * playwright-core), over what real Laravel 8.83 and a real `lqb work` did on one Redis:
 * - a `Bus::batch` of three jobs, one failing, made and run by Laravel's own worker: the batches
 *   list and the batch's page, its progress as Laravel reads it, and Retry failed jobs as
 *   queue:retry-batch (the failed job back on its queue, its failed_jobs row gone);
 * - jobs Laravel pushed and a Node worker ran, kept in Node's record: who runs what per class
 *   (Node's runs exact, PHP's unknown without Horizon), the Node worker from its heartbeat while it
 *   runs, and the jobs it completed;
 * With LQB_UI_DOCS_SCREENSHOTS=1 each view's screenshot also refreshes docs/ui-VIEW.png (docs/ui.md's).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { root } from '../helpers/php.js';
import { startUi, type RunningUi } from '../helpers/ui.js';
import { HANDLERS, lqb, php, scratch, type Scratch } from '../helpers/processes.js';
import { rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(root, 'test-artifacts');
const APP_KEY = 'base64:5aE2hQ2kq0bWmWJt3h8sG0QF3yq5Y0w4JQ1b2Jx0H5M=';
const RECORD_JOB = 'App\\Jobs\\Bridge\\RecordJob';

let s: Scratch;
let prefix: string;
let server: RunningUi;
let browser: Browser;
let page: Page;
let nodeWorker: ChildProcess | undefined;
let batchId: string;
let failedInBatch: string;

async function shot(name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `ui-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  if (process.env.LQB_UI_DOCS_SCREENSHOTS === '1') copyFileSync(file, join(root, 'docs', `ui-${name}.png`));
}

async function phpJson(script: string, args: string[]): Promise<any[]> {
  const result = await php(script, args, s.env);
  expect(result.stderr, `${script} ${args.join(' ')}`).toBe('');
  return result.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

beforeAll(async () => {
  expect(existsSync(CHROMIUM), `chromium at ${CHROMIUM} (php-fixture-gen/install-deps.sh installs it)`).toBe(true);
  prefix = uniquePrefix('ui-views');
  s = scratch(prefix, 'default');
  s.env.APP_KEY = APP_KEY;
  // job_batches in the app's database, the failed jobs' one: where lqb ui looks by default.
  s.env.LQB_BATCH_DB = s.env.LQB_FAILED_DB;
  // A batch Laravel makes and its own worker runs: the second job fails.
  s.env.QUEUE_NAME = 'batches';
  [{ batch: batchId }] = await phpJson('laravel-bookkeeping.php', [
    'batch',
    JSON.stringify({ labels: ['ok', 'fail', 'ok'], callbacks: false }),
  ]);
  const worked = await php('laravel-worker.php', ['--queue=batches', '--stop-when-empty', '--sleep=0', '--tries=1'], s.env);
  expect(worked.status, `Laravel's worker on the batch: ${worked.stderr}`).toBe(0);
  s.env.QUEUE_NAME = 'default';
  // Jobs Laravel pushes for Node's worker, which runs until the end of the file.
  await phpJson('laravel-dispatch.php', ['record', JSON.stringify({ n: 1, label: 'on node', count: 3, queue: 'node' })]);
  nodeWorker = spawn('node', [join(root, 'dist/cli/main.js'), 'work', `--handlers=${HANDLERS}`, '--queue=node', '--sleep=0.1'], {
    env: s.env,
    stdio: 'ignore',
  });
  server = await startUi([], s.env);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
});

afterAll(async () => {
  nodeWorker?.kill('SIGTERM');
  await browser?.close();
  server?.child.kill('SIGTERM');
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  s?.remove();
});

describe('lqb ui’s views in chromium, over what Laravel 8.83 and lqb work did', () => {
  it('lists the batch Laravel ran with its progress, and opens it: one failed job of three, the batch cancelled by it', async () => {
    await page.goto(`${server.url}#/batches`);
    const row = page.locator(`[data-testid="batch"][data-id="${batchId}"]`);
    await row.waitFor();
    expect(await row.getByTestId('progress').textContent(), `batch ${batchId}: progress as Laravel's Batch::progress()`).toBe('67%');
    // Failures not allowed: Laravel cancelled the batch at its failed job.
    expect(await row.getByTestId('batch-status').textContent(), `batch ${batchId}: status`).toBe('cancelled');
    await shot('batches');
    await row.locator('a').first().click();
    const batch = page.getByTestId('batch-page');
    await batch.waitFor();
    const failed = batch.getByTestId('batch-failed').locator('li');
    expect(await failed.count(), `batch ${batchId}: its failed job ids`).toBe(1);
    failedInBatch = (await failed.locator('a').textContent())!;
    await shot('batch');
  });

  it('retries the batch’s failed jobs as queue:retry-batch: the job back on its queue, its failed record gone', async () => {
    await page.goto(`${server.url}#/batches/${batchId}`);
    await page.getByTestId('batch-retry').click();
    await page.getByTestId('confirm-yes').click();
    await page.getByTestId('notice').waitFor();
    const raw = rawClient();
    try {
      const queued = (await raw.lrange(`${prefix}queues:batches`, 0, -1)).map((payload) => (JSON.parse(payload) as { uuid: string }).uuid);
      expect(queued, `queues:batches after retrying batch ${batchId}`).toEqual([failedInBatch]);
    } finally {
      raw.disconnect();
    }
    const listed = await lqb(['failed', '--json'], s.env);
    expect(listed.stdout, 'failed_jobs after the retry').not.toContain(failedInBatch);
  });

  it('shows who runs what: the class Node ran, counted by its record, PHP’s runs unknown without Horizon', async () => {
    await page.goto(`${server.url}#/activity`);
    const row = page.locator(
      `[data-testid="activity-classes"] [data-testid="activity-row"][data-name="${RECORD_JOB.replaceAll('\\', '\\\\')}"]`,
    );
    await expect
      .poll(async () => (await row.count()) && (await row.getByTestId('node-ran').textContent()), {
        message: `${RECORD_JOB}: Node ran`,
        timeout: 15_000,
      })
      .toBe('3');
    expect(await row.getByTestId('horizon-ran').textContent(), `${RECORD_JOB}: PHP's runs`).toBe('unknown');
    expect(await row.getByTestId('node-handles').textContent(), `${RECORD_JOB}: a running Node worker takes it`).toBe('yes');
    await shot('activity');
  });

  it('lists the running Node worker from its heartbeat, and the jobs it completed', async () => {
    await page.goto(`${server.url}#/workers`);
    const worker = page.getByTestId('node-worker');
    await expect.poll(() => worker.count(), { message: 'Node workers listed' }).toBe(1);
    expect(await worker.locator('td').nth(2).textContent(), 'its connection and queues').toBe('redis: node');
    await shot('workers');
    await page.goto(`${server.url}#/completed`);
    await expect.poll(() => page.getByTestId('completed-job').count(), { message: 'completed jobs listed' }).toBe(3);
    await shot('completed');
  });

  it('shows the overview’s summary: Node’s jobs past hour, the worker and its processes', async () => {
    await page.goto(server.url);
    await expect.poll(async () => page.getByTestId('past-hour').textContent(), { message: 'jobs past hour' }).toBe('3');
    expect(await page.getByTestId('status-summary').textContent(), 'status').toBe('1 Node worker');
    expect(await page.getByTestId('processes').textContent(), 'processes').toBe('1');
    await shot('overview');
  });
});
