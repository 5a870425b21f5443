/**
 * `lqb ui` in a real browser (Debian's chromium, driven by playwright-core): real Laravel 8.83
 * pushes jobs (php-fixture-gen/laravel-dispatch.php) and fails one in its own worker
 * (laravel-worker.php), and `lqb work` fails another; the page, served by `lqb ui` on a loopback
 * port, shows them, each failure with the side its trace names, and its actions are checked in
 * Redis and in the failed_jobs table. PHP produces, the dashboard reads.
 * A screenshot of each main view goes to test-artifacts/ (gitignored); with LQB_UI_DOCS_SCREENSHOTS=1 the
 * job list's, the failed list's, a job's page's and search's also refresh docs/ui-VIEW.png (the README's, docs/ui.md's).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { root } from '../helpers/php.js';
import { postAction, searchHits, startUi } from '../helpers/ui.js';
import { HANDLERS, lqb, php, scratch, type Scratch } from '../helpers/processes.js';
import { rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(root, 'test-artifacts');
const TOKEN = 'ui-test-token-4b1d';
const APP_KEY = 'base64:5aE2hQ2kq0bWmWJt3h8sG0QF3yq5Y0w4JQ1b2Jx0H5M=';

let s: Scratch;
let prefix: string;
let server: { child: ChildProcess; url: string };
let browser: Browser;
let page: Page;
const bodies: string[] = [];
const pushed: Partial<Record<'delayed' | 'notification' | 'failing' | 'nodeFailing', { uuid: string; queue: string }>> = {};

async function laravel(kind: string, options: object): Promise<{ uuid: string; queue: string }[]> {
  const result = await php('laravel-dispatch.php', [kind, JSON.stringify(options)], s.env);
  expect(result.stderr, `laravel-dispatch.php ${kind}`).toBe('');
  return result.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

async function shot(name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `ui-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  if (process.env.LQB_UI_DOCS_SCREENSHOTS === '1' && ['jobs', 'failed', 'job', 'search'].includes(name))
    copyFileSync(file, join(root, 'docs', `ui-${name}.png`));
}

/** Clicks the action's button, then "Yes" in the confirmation, and waits for the page to say it is done. */
async function confirmAction(button: ReturnType<Page['locator']>): Promise<void> {
  // The last action's notice stays three seconds: wait it out, so the one awaited below is this action's.
  await page.getByTestId('notice').waitFor({ state: 'detached' });
  await button.click();
  await page.getByTestId('confirm-yes').click();
  await page.getByTestId('notice').waitFor();
}

const row = (queue: string) => page.getByTestId(`queue-${queue}`);
const cell = async (queue: string, state: string) => (await row(queue).getByTestId(state).textContent())?.trim();

beforeAll(async () => {
  expect(existsSync(CHROMIUM), `chromium at ${CHROMIUM} (php-fixture-gen/install-deps.sh installs it)`).toBe(true);
  prefix = uniquePrefix('ui');
  s = scratch(prefix, 'default');
  s.env.APP_KEY = APP_KEY;
  await laravel('record', { n: 1, label: 'hello', ratio: 0.5, items: [1, 2], flag: true, count: 3 });
  [pushed.delayed] = await laravel('record', { n: 10, label: 'later', ratio: 1.5, items: [], flag: false, delay: 600 });
  [pushed.notification] = await laravel('notification', { userId: 3, invoiceId: 7 });
  [pushed.failing] = await laravel('failing', { n: 7, message: 'boom from PHP', queue: 'mail' });
  const worker = await php('laravel-worker.php', ['--queue=mail', '--stop-when-empty', '--tries=1'], s.env);
  expect(worker.stdout, 'Laravel’s worker fails the FailingJob').toMatch(/Failed:\s+App\\Jobs\\Bridge\\FailingJob/);
  // Node's worker fails one too (its runs recorded apart: the pause test reads s.nodeRuns()).
  [pushed.nodeFailing] = await laravel('failing', { n: 8, message: 'boom from Node', queue: 'node' });
  const nodeWorker = await lqb(['work', `--handlers=${HANDLERS}`, '--queue=node', '--stop-when-empty', '--sleep=0', '--tries=1'], {
    ...s.env,
    LQB_NODE_RECORD_FILE: join(s.dir, 'node-failing-runs.jsonl'),
  });
  expect(nodeWorker.status, `lqb work: ${nodeWorker.stderr}`).toBe(0);

  server = await startUi([`--token=${TOKEN}`], s.env);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('response', async (response) => {
    const type = response.headers()['content-type'] ?? '';
    if (type.startsWith('application/json') || type.startsWith('text/html')) bodies.push(await response.text().catch(() => ''));
  });
  // The token once in the address: kept as a cookie, and taken out of the address.
  await page.goto(`${server.url}?token=${TOKEN}`);
  expect(page.url(), 'the token is taken out of the address').toBe(server.url);
});

afterAll(async () => {
  await browser?.close();
  server?.child.kill('SIGTERM');
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  s?.remove();
});

describe('lqb ui in chromium, over jobs real Laravel 8.83 pushed and failed', () => {
  it('shows each queue’s ready, delayed, reserved and failed counts', async () => {
    await row('default').waitFor();
    await expect.poll(() => cell('default', 'ready'), { message: 'default: ready' }).toBe('4');
    expect(await cell('default', 'delayed'), 'default: delayed').toBe('1');
    expect(await cell('default', 'reserved'), 'default: reserved').toBe('0');
    // Every job of `mail` failed: the queue has no keys left, its failed job still names it.
    expect(await cell('mail', 'failed'), 'mail: failed').toBe('1');
    expect(await cell('mail', 'ready'), 'mail: ready').toBe('0');
    await shot('overview');
  });

  it('lists the ready jobs with their commands decoded, a model as Class#id', async () => {
    await page.goto(`${server.url}#/queues/default/ready`);
    const jobs = page.getByTestId('job');
    await expect.poll(() => jobs.count(), { message: 'ready jobs listed' }).toBe(4);
    const first = jobs.first();
    expect(await first.getByTestId('job-name').textContent()).toBe('App\\Jobs\\Bridge\\RecordJob');
    const properties = JSON.parse((await first.getByTestId('properties').textContent())!);
    expect(properties, 'RecordJob n=1 as Laravel serialized it').toMatchObject({
      '@class': 'App\\Jobs\\Bridge\\RecordJob',
      n: 1,
      label: 'hello',
      ratio: 0.5,
      items: [1, 2],
      flag: true,
    });
    const notification = page.locator(`[data-uuid="${pushed.notification!.uuid}"]`);
    expect(await notification.getByTestId('job-name').textContent()).toBe('App\\Notifications\\InvoicePaid');
    const sent = JSON.parse((await notification.getByTestId('properties').textContent())!);
    expect(sent.notifiables, 'the notifiable User as Class#id').toBe('App\\Models\\User#[3]');
    await first.locator('summary').click();
    await shot('jobs');
  });

  it('shows the failed job with its exception and the side that failed it, and retry puts it back on its queue', async () => {
    await page.goto(`${server.url}#/failed`);
    const failed = page.locator(`[data-testid="failed-job"][data-uuid="${pushed.failing!.uuid}"]`);
    await failed.waitFor();
    expect(await failed.getByTestId('exception').textContent(), 'the exception Laravel recorded').toMatch(
      /^RuntimeException: boom from PHP 7 attempt 1/,
    );
    const byNode = page.locator(`[data-testid="failed-job"][data-uuid="${pushed.nodeFailing!.uuid}"]`);
    expect(await byNode.getByTestId('exception').textContent(), 'the exception lqb work recorded').toMatch(/^Error: boom from Node/);
    // The badge in the row, and in the detail under the exception once it is opened.
    const badge = (job: typeof failed) => job.locator('td').first().getByTestId('side').allTextContents();
    expect(await badge(failed), 'Laravel failed it: PHP').toEqual(['PHP']);
    expect(await badge(byNode), 'lqb work failed it: Node').toEqual(['Node']);
    await failed.getByTestId('exception').locator('summary').click();
    await byNode.getByTestId('exception').locator('summary').click();
    expect(await failed.getByTestId('side-detail').textContent(), 'the detail says why: PHP').toMatch(
      /^Failed on PHP: its trace's frames are PHP's/,
    );
    expect(await byNode.getByTestId('side-detail').textContent(), 'the detail says why: Node').toMatch(
      /^Failed on Node: its trace's frames are JavaScript's/,
    );
    const api = await page.evaluate(() => fetch('api/failed').then((r) => r.json()));
    const sides = Object.fromEntries(api.jobs.map((job: { uuid: string; side: unknown }) => [job.uuid, job.side]));
    expect(sides, 'the API says each side').toEqual({ [pushed.failing!.uuid]: 'php', [pushed.nodeFailing!.uuid]: 'node' });
    await shot('failed');

    await confirmAction(failed.getByTestId('retry'));
    const raw = rawClient();
    const back = await raw.lrange(`${prefix}queues:mail`, 0, -1);
    raw.disconnect();
    expect(back.length, 'queues:mail holds the retried job').toBe(1);
    expect(JSON.parse(back[0]!), 'the retried payload, attempts reset').toMatchObject({ uuid: pushed.failing!.uuid, attempts: 0 });
    const listed = await lqb(['failed', '--json'], s.env);
    const left = listed.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { id: string }).id);
    expect(left, 'the failed record is gone; Node’s failure is left').toEqual([pushed.nodeFailing!.uuid]);
  });

  it('opens a job’s own page from the failed list: its envelope, its whole trace and the side that failed it', async () => {
    await page.goto(`${server.url}#/failed`);
    const byNode = page.locator(`[data-testid="failed-job"][data-uuid="${pushed.nodeFailing!.uuid}"]`);
    await byNode.getByTestId('job-link').click();
    const job = page.getByTestId('job-page');
    await job.waitFor();
    expect(page.url(), 'the job page’s address').toBe(`${server.url}#/job/${pushed.nodeFailing!.uuid}`);
    expect(await job.getByTestId('found-in').textContent(), 'where the page found the job').toBe('failed_jobs');
    expect(await job.getByTestId('side').first().textContent(), 'the side its trace names').toBe('Node');
    expect(await job.getByTestId('field-maxTries').textContent(), 'the envelope’s maxTries').toMatch(/maxTries/);
    expect(await job.getByTestId('exception').textContent(), 'the exception').toContain('boom from Node');
    await shot('job');
  });

  it('searches the queues and failed_jobs by text in the command, saying how much it searched', async () => {
    const hits = await searchHits(page, server.url, 'later');
    expect(hits, `hits for "later": the delayed RecordJob whose label it is; found ${JSON.stringify(hits)}`).toEqual([
      [pushed.delayed!.uuid, 'default · delayed'],
    ]);
    expect(await page.getByTestId('searched').textContent(), 'how much was searched').toMatch(/^searched \d+ of \d+ jobs: all of them$/);
    await shot('search');
  });

  it('forgets all failures matching an exception text, after a confirmation naming their count', async () => {
    await page.goto(`${server.url}#/failed`);
    await page.getByTestId('filter-exception').fill('boom from Node');
    await expect.poll(() => page.getByTestId('failed-job').count(), { message: 'failures matching "boom from Node"' }).toBe(1);
    await page.getByTestId('notice').waitFor({ state: 'detached' });
    await page.getByTestId('forget-all').click();
    expect(await page.getByTestId('confirm').locator('strong').textContent(), 'the confirmation names the count').toBe(
      'Forget 1 failed job matching exception “boom from Node”?',
    );
    await page.getByTestId('confirm-yes').click();
    await page.getByTestId('notice').waitFor();
    const listed = await lqb(['failed', '--json'], s.env);
    expect(listed.stdout.trim(), 'failed_jobs after forget all').toBe('');
  });

  it('cancels a delayed job: it leaves :delayed', async () => {
    await page.goto(`${server.url}#/queues/default/delayed`);
    const delayed = page.locator(`[data-testid="job"][data-uuid="${pushed.delayed!.uuid}"]`);
    await delayed.waitFor();
    await shot('delayed');
    await confirmAction(delayed.getByTestId('cancel'));
    const raw = rawClient();
    const left = await raw.zrange(`${prefix}queues:default:delayed`, 0, -1);
    const ready = await raw.llen(`${prefix}queues:default`);
    raw.disconnect();
    expect(left, 'queues:default:delayed after the cancel').toEqual([]);
    expect(ready, 'the ready jobs are untouched').toBe(4);
  });

  it('pauses a queue as queue:pause writes it: shown, read by Laravel as paused, and held by lqb work', async () => {
    await page.goto(server.url);
    await row('default').waitFor();
    await confirmAction(row('default').getByTestId('pause-toggle'));
    await expect.poll(() => row('default').getByTestId('status').textContent(), { message: 'default: status' }).toBe('paused');
    await shot('paused');
    const paused = await php('laravel-dispatch.php', ['paused', JSON.stringify({ connection: 'redis', queue: 'default' })], s.env);
    expect(paused.stdout.trim(), 'Laravel’s QueueManager::isPaused reading').toBe('{"paused":true}');
    const work = await lqb(['work', `--handlers=${HANDLERS}`, '--queue=default', '--stop-when-empty', '--sleep=0', '--no-share'], s.env);
    expect(work.status).toBe(0);
    expect(s.nodeRuns(), 'lqb work ran nothing from the paused queue').toEqual([]);

    await confirmAction(row('default').getByTestId('pause-toggle'));
    await expect.poll(() => row('default').getByTestId('status').textContent()).toBe('running');
    const resumed = await php('laravel-dispatch.php', ['paused', JSON.stringify({ connection: 'redis', queue: 'default' })], s.env);
    expect(resumed.stdout.trim()).toBe('{"paused":false}');
  });

  it('refreshes the counts live: a job Laravel pushes while the page is open shows without a reload', async () => {
    await page.goto(server.url);
    await expect.poll(() => cell('default', 'ready'), { message: 'default: ready before' }).toBe('4');
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => navigations.push(frame.url()));
    await laravel('record', { n: 20, label: 'live', ratio: 0.5, items: [], flag: true });
    await expect.poll(() => cell('default', 'ready'), { message: 'default: ready after the push', timeout: 15_000 }).toBe('5');
    expect(navigations, 'no reload').toEqual([]);
  });

  it('shows a job Laravel’s worker holds as reserved, with its attempt counted and its reservation’s end', async () => {
    const [slow] = await laravel('slow', { n: 30, seconds: 4, queue: 'slow' });
    const worker = spawn('php', [join(root, 'php-fixture-gen/laravel-worker.php'), '--queue=slow', '--once'], {
      env: s.env,
      stdio: 'ignore',
    });
    try {
      await page.goto(`${server.url}#/queues/slow/reserved`);
      const held = page.locator(`[data-testid="job"][data-uuid="${slow!.uuid}"]`);
      await held.waitFor({ timeout: 15_000 });
      expect((await held.locator('td').nth(1).textContent())?.trim(), 'attempts of the reserved copy').toBe('1');
      expect((await held.locator('td').nth(2).textContent())?.trim(), 'the reservation ends in retry_after (90 s)').toMatch(/^in \d+s$/);
      // Nothing in Redis says which worker holds a reservation: the page names no side.
      expect(await held.getByTestId('side').count(), 'a reserved job shows no side').toBe(0);
      await shot('reserved');
    } finally {
      await new Promise((resolve) => (worker.exitCode === null ? worker.on('exit', resolve) : resolve(undefined)));
    }
  });

  it('answers a wrong token with 401 and changes nothing', async () => {
    const raw = rawClient();
    const before = await raw.llen(`${prefix}queues:default`);
    const csrf = await page.locator('meta[name="lqb-csrf"]').getAttribute('content');
    const wrong = { Authorization: 'Bearer not-the-token', 'Content-Type': 'application/json', 'X-CSRF-Token': csrf! };
    const pageAnswer = await fetch(server.url, { headers: { Authorization: 'Bearer not-the-token' } });
    expect(pageAnswer.status, 'the page with a wrong token').toBe(401);
    const none = await fetch(`${server.url}api/overview`);
    expect(none.status, 'the API with no token').toBe(401);
    const action = await fetch(`${server.url}api/queues/default/pause`, { method: 'POST', headers: wrong, body: '{"confirm":true}' });
    expect(action.status, 'an action with a wrong token').toBe(401);
    const flush = await fetch(`${server.url}api/failed/flush`, { method: 'POST', headers: wrong, body: '{"confirm":true}' });
    expect(flush.status).toBe(401);
    expect(await raw.llen(`${prefix}queues:default`), 'queues:default unchanged').toBe(before);
    expect(await raw.keys(`${prefix}*paused*`), 'no pause switch written').toEqual([]);
    // The right token but no CSRF header: refused too.
    const noCsrf = await fetch(`${server.url}api/queues/default/pause`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body: '{"confirm":true}',
    });
    expect(noCsrf.status, 'an action without the CSRF token').toBe(403);
    expect(await raw.keys(`${prefix}*paused*`)).toEqual([]);
    raw.disconnect();
  });

  it('never sends the APP_KEY or the token in a page or a response', () => {
    expect(bodies.length).toBeGreaterThan(5);
    for (const body of bodies) {
      expect(body.includes(APP_KEY.slice(7)), 'APP_KEY in a response').toBe(false);
      expect(body.includes(TOKEN), 'the token in a response').toBe(false);
    }
  });

  it('read-only: every action is refused; beyond the loopback only with a credential', async () => {
    const readOnly = await startUi(['--read-only'], s.env);
    try {
      const answer = await postAction(readOnly.url, 'api/failed/flush');
      expect(answer.status, 'an action on a read-only dashboard').toBe(403);
    } finally {
      readOnly.child.kill('SIGTERM');
    }
    const open = await lqb(['ui', '--host=0.0.0.0', '--port=0'], s.env);
    expect(open.status, 'lqb ui --host=0.0.0.0 without a token').toBe(2);
    expect(open.stderr).toMatch(/beyond the loopback: give --token or --basic-auth/);
  });
});
