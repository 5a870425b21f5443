/**
 * `lqb ui` over Horizon's records, in a real browser (Debian's chromium, driven by
 * playwright-core): the records Horizon 5.22.1 itself wrote on Laravel 8.83 (the last state of
 * fixtures/horizon/events.jsonl) under this test's prefixes, the dashboard told Horizon's prefix
 * with --horizon-prefix. The page shows a job's Horizon status beside it, the queue's throughput
 * as Horizon measured it, and Horizon's failed list with the exception Horizon kept. Screenshots go
 * to test-artifacts/ (gitignored) as the other dashboard tests' do.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { root } from '../helpers/php.js';
import { rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';
import { horizonFixtureId as ID, loadHorizonLastState } from '../helpers/horizon-state.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(root, 'test-artifacts');

let prefix: string;
let dir: string;
let server: { child: ChildProcess; url: string };
let browser: Browser;
let page: Page;

function startUi(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', [join(root, 'dist/cli/main.js'), 'ui', '--port=0', ...args], {
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
      const url = /serving (http:\/\/\S+\/)/.exec(out)?.[1];
      if (url) resolve({ child, url });
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => reject(new Error(`lqb ui exited with ${code} before serving: ${err.trim()}`)));
  });
}

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
});
