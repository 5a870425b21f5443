/**
 * createDashboard's handler mounted in a plain node:http server under a path (as Fastify mounts
 * it, with basePath) and the page's base: JSON from Redis paged, never more than asked for.
 * Jobs here are pushed (and failed records written) by the library's own builder and failer (the browser test, test/e2e/dashboard.test.ts,
 * shows what real Laravel pushed).
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { cancelDelayed, createDashboard, type Dashboard } from '../../src/ui/index.js';
import { debianPayloads, versionPayloads } from '../helpers/laravel.js';
import { serveDashboard } from '../helpers/ui.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let prefix: string;
let dir: string;
let dashboard: Dashboard;
let server: Server;
let base: string;

beforeEach(async () => {
  prefix = uniquePrefix('ui-handler');
  dir = mkdtempSync(join(tmpdir(), 'lqb-ui-'));
  const client = prefixedClient(prefix);
  const queue = new RedisQueue(client);
  const payloads = Array.from({ length: 30 }, (_, n) => buildPayload(buildJob({ className: 'App\\Jobs\\Page', properties: { n } })).raw);
  await queue.bulkRaw(payloads, 'pages');
  client.disconnect();
  dashboard = createDashboard({
    settings: { redis: 'redis://127.0.0.1:6379', prefix, failedDb: join(dir, 'failed.sqlite') },
    basePath: '/queues',
  });
  server = createServer(dashboard.handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/queues`;
});

afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  await dashboard.close();
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe('createDashboard', () => {
  it('serves the page under its mount path, with that path as the page’s base', async () => {
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<base href="/queues/" />');
    expect((await fetch(`${base}/assets/vendor/preact-htm.js`)).headers.get('content-type')).toMatch(/javascript/);
  });

  it('without a credential, answers only to loopback names (a rebound name is refused)', async () => {
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(`${base}/api/overview`);
        request({ host: url.hostname, port: url.port, path: url.pathname, headers: { Host: host } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        })
          .on('error', reject)
          .end();
      });
    expect(await status('evil.example:8080'), 'Host: evil.example').toBe(403);
    expect(await status('localhost:8080'), 'Host: localhost').toBe(200);
    expect(await status('[::1]:8080'), 'Host: [::1]').toBe(200);
  });

  it('pages a queue from Redis: offset and limit as asked, the total from LLEN', async () => {
    const answer = (await (await fetch(`${base}/api/queues/pages/jobs?state=ready&offset=10&limit=5`)).json()) as {
      total: number;
      jobs: { properties: { n: number } }[];
    };
    expect(answer.total).toBe(30);
    expect(
      answer.jobs.map((job) => job.properties.n),
      'jobs 10 to 14 of the list',
    ).toEqual([10, 11, 12, 13, 14]);
    const overview = (await (await fetch(`${base}/api/overview`)).json()) as { queues: { name: string; ready: number }[] };
    expect(overview.queues).toEqual([
      expect.objectContaining({ name: 'pages', ready: 30, delayed: 0, reserved: 0, failed: 0, paused: false }),
    ]);
  });

  it('refuses an action without the CSRF token, and one not confirmed', async () => {
    const html = await (await fetch(`${base}/`)).text();
    const csrf = /name="lqb-csrf" content="([^"]+)"/.exec(html)![1]!;
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${base}/api/queues/pages/pause`, { method: 'POST', headers, body });
    expect((await post({ 'Content-Type': 'application/json' }, '{"confirm":true}')).status, 'no CSRF header').toBe(403);
    expect((await post({ 'Content-Type': 'text/plain', 'X-CSRF-Token': csrf }, '{"confirm":true}')).status, 'not JSON').toBe(403);
    expect(
      (await post({ 'Content-Type': 'application/json', 'X-CSRF-Token': csrf, Origin: 'http://evil.example' }, '{"confirm":true}')).status,
      'another origin',
    ).toBe(403);
    expect((await post({ 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, '{}')).status, 'not confirmed').toBe(400);
    const raw = rawClient();
    expect(await raw.keys(`${prefix}*paused*`)).toEqual([]);
    expect((await post({ 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, '{"confirm":true}')).status).toBe(200);
    expect((await raw.keys(`${prefix}*paused*`)).length, 'the pause switch, once confirmed').toBe(1);
    raw.disconnect();
  });
});

describe('createDashboard with basic auth, over failed jobs', () => {
  it('asks for basic auth (401 and a challenge), and with it forgets and flushes as lqb forget / flush do', async () => {
    const guarded = createDashboard({
      settings: { redis: 'redis://127.0.0.1:6379', prefix, failedDb: join(dir, 'failed.sqlite') },
      basicAuth: 'ops:pa55word',
    });
    const failer = DatabaseUuidFailedJobProvider.fromUrl(join(dir, 'failed.sqlite'));
    const payloads = [1, 2, 3].map((n) => {
      const built = buildPayload(buildJob({ className: 'App\\Jobs\\Page', properties: { n } }));
      return { raw: built.raw, uuid: String(built.envelope.uuid) };
    });
    for (const payload of payloads) await failer.log('redis', 'pages', payload.raw, `RuntimeException: page ${payload.uuid} failed`);
    const other = createServer(guarded.handler);
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}/`;
    try {
      const refused = await fetch(`${url}api/failed`);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Basic /);
      const wrong = await fetch(`${url}api/failed`, { headers: { Authorization: `Basic ${Buffer.from('ops:nope').toString('base64')}` } });
      expect(wrong.status, 'a wrong password').toBe(401);

      const auth = { Authorization: `Basic ${Buffer.from('ops:pa55word').toString('base64')}` };
      const html = await (await fetch(url, { headers: auth })).text();
      expect(html, 'the password is in no page').not.toContain('pa55word');
      const csrf = /name="lqb-csrf" content="([^"]+)"/.exec(html)![1]!;
      const act = (path: string) =>
        fetch(`${url}api/${path}`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
          body: '{"confirm":true}',
        });
      const listed = (await (await fetch(`${url}api/failed?limit=2`, { headers: auth })).json()) as {
        total: number;
        jobs: { uuid: string }[];
      };
      expect(listed.total).toBe(3);
      expect(
        listed.jobs.map((job) => job.uuid),
        'newest first, two to a page',
      ).toEqual([payloads[2]!.uuid, payloads[1]!.uuid]);

      expect((await act(`failed/${payloads[0]!.uuid}/forget`)).status).toBe(200);
      expect(
        (await failer.all()).map((job) => job.uuid),
        'after forget',
      ).toEqual([payloads[2]!.uuid, payloads[1]!.uuid]);
      expect((await act('failed/flush')).status).toBe(200);
      expect(await failer.all(), 'after flush').toEqual([]);
    } finally {
      await new Promise((resolve) => other.close(resolve));
      await guarded.close();
      await failer.close();
    }
  });
});

describe('createDashboard over an encrypted job, a 12.x job and a cancelled one', () => {
  const fixtures = debianPayloads();
  const encrypted = fixtures.find((record) => record.name === 'encrypted/cbc')!;
  const secret = String(encrypted.expect.props.cardToken);
  const modern = versionPayloads().find((record) => record.laravel.startsWith('12.') && JSON.parse(record.payload).createdAt)!;

  async function serveWith(showEncrypted: boolean): Promise<{ url: string; close: () => Promise<void> }> {
    const served = await serveDashboard({
      settings: { redis: 'redis://127.0.0.1:6379', prefix, failedDb: join(dir, 'failed.sqlite'), key: encrypted.appKey },
      showEncrypted,
    });
    return { url: `${served.base}/`, close: served.close };
  }

  beforeEach(async () => {
    const client = prefixedClient(prefix);
    await new RedisQueue(client).bulkRaw([encrypted.payload, modern.payload], 'secrets');
    client.disconnect();
    const failer = DatabaseUuidFailedJobProvider.fromUrl(join(dir, 'failed.sqlite'));
    await failer.log('redis', 'secrets', encrypted.payload, 'RuntimeException: card declined');
    await failer.close();
  });

  it('shows a ShouldBeEncrypted command as encrypted in every answer, though the key is given, unless showEncrypted', async () => {
    const hidden = await serveWith(false);
    try {
      for (const path of ['api/queues/secrets/jobs?state=ready', 'api/failed', 'api/overview']) {
        const text = await (await fetch(`${hidden.url}${path}`)).text();
        expect(text, `${path}: the card token of the encrypted job`).not.toContain(secret);
      }
      const jobs = (await (await fetch(`${hidden.url}api/queues/secrets/jobs?state=ready`)).json()) as {
        jobs: { name: string; encrypted: boolean; properties: unknown }[];
      };
      const charge = jobs.jobs.find((job) => job.name === 'App\\Jobs\\ChargeCard')!;
      expect({ encrypted: charge.encrypted, properties: charge.properties }, 'ChargeCard in the ready list').toEqual({
        encrypted: true,
        properties: null,
      });
      expect(((await (await fetch(`${hidden.url}api/overview`)).json()) as { showEncrypted: boolean }).showEncrypted).toBe(false);
    } finally {
      await hidden.close();
    }
    const shown = await serveWith(true);
    try {
      const jobs = (await (await fetch(`${shown.url}api/queues/secrets/jobs?state=ready`)).json()) as {
        jobs: { name: string; properties: { cardToken?: string } | null }[];
      };
      expect(jobs.jobs.find((job) => job.name === 'App\\Jobs\\ChargeCard')!.properties?.cardToken, 'with showEncrypted').toBe(secret);
    } finally {
      await shown.close();
    }
  });

  it('gives a 12.11+ Redis job its push time from createdAt', async () => {
    const served = await serveWith(false);
    try {
      const jobs = (await (await fetch(`${served.url}api/queues/secrets/jobs?state=ready`)).json()) as {
        jobs: { uuid: string; pushedAt: number | null }[];
      };
      const envelope = JSON.parse(modern.payload) as { uuid: string; createdAt: number };
      expect(jobs.jobs.find((job) => job.uuid === envelope.uuid)?.pushedAt, `pushedAt of the ${modern.laravel} job`).toBe(
        envelope.createdAt,
      );
    } finally {
      await served.close();
    }
  });

  it('gives each queue its wait, the age of its oldest ready job, where its payload says when it was pushed', async () => {
    const client = prefixedClient(prefix);
    await new RedisQueue(client).pushRaw(modern.payload, 'modern');
    client.disconnect();
    const served = await serveWith(false);
    try {
      const overview = (await (await fetch(`${served.url}api/overview`)).json()) as {
        queues: { name: string; wait: number | null }[];
        longestWait: { queue: string; wait: number } | null;
      };
      const wait = (name: string) => overview.queues.find((q) => q.name === name)?.wait;
      const createdAt = (JSON.parse(modern.payload) as { createdAt: number }).createdAt;
      expect(wait('modern'), `modern: ${modern.laravel}'s job pushed at ${createdAt}`).toBeCloseTo(Date.now() / 1000 - createdAt, -1);
      expect(wait('secrets'), 'secrets: an 8.83 job at its head carries no push time').toBeNull();
      expect(overview.longestWait?.queue, 'the queue with the longest wait').toBe('modern');
    } finally {
      await served.close();
    }
  });

  it('counts a cancelled job as one that left the queue, never as finished, when no record counts finished jobs', async () => {
    const client = prefixedClient(prefix);
    const queue = new RedisQueue(client);
    const delayed = buildPayload(buildJob({ className: 'App\\Jobs\\Later', properties: {} }));
    await queue.laterRaw(600, delayed.raw, 'later');
    const served = await serveWith(false);
    try {
      const overview = async () =>
        (
          (await (await fetch(`${served.url}api/overview`)).json()) as {
            queues: { name: string; history: { left: number[]; finished: number[] | null; finishedFrom: string[] } }[];
          }
        ).queues.find((q) => q.name === 'later')!.history;
      await overview();
      const cancelled = await cancelDelayed(queue, String(delayed.envelope.uuid), 'later');
      client.disconnect();
      expect(cancelled.cancelled, 'the delayed job cancelled').toBe(true);
      const history = await overview();
      expect(
        history.left.reduce((a, b) => a + b, 0),
        'jobs that left "later"',
      ).toBe(1);
      expect({ finished: history.finished, finishedFrom: history.finishedFrom }, 'finished jobs of "later"').toEqual({
        finished: null,
        finishedFrom: [],
      });
    } finally {
      await served.close();
    }
  });
});
