/**
 * `lqb ui` with jobs too large to show whole: a 50 MB job and one whose properties are 120 KB of
 * base64 on the queue, a failure with a megabyte of exception. A page answers with each cut
 * (saying how much more there is) and stays small; the whole payload is a download, as stored
 * but for the dashboard's own secrets (its token here), behind the same access rule as the page;
 * and the server ends on SIGTERM. Node pushes, the dashboard (the built CLI) reads, on real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { scratch, type Scratch } from '../helpers/processes.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';
import { startUi, type RunningUi } from '../helpers/ui.js';

const TOKEN = 'large-jobs-token-7c2e';
const auth = { Authorization: `Bearer ${TOKEN}` };
/** A deadline for an answer, not a measure: the old dashboard never answered these pages. */
const answerWithin = () => AbortSignal.timeout(120_000);

let s: Scratch;
let prefix: string;
let server: RunningUi;
const payloads = { huge: '', base64: '' };
let failedUuid = '';
let failedException = '';

beforeAll(async () => {
  prefix = uniquePrefix('ui-large');
  s = scratch(prefix, 'default');
  const client = prefixedClient(prefix);
  const queue = new RedisQueue(client);
  const blob = 'QmFzZTY0cnVu'.repeat((50 << 20) / 12);
  payloads.huge = buildPayload(buildJob({ className: 'App\\Jobs\\Bridge\\RecordJob', properties: { n: 1, blob: `${blob} b=c` } })).raw;
  payloads.base64 = buildPayload(
    buildJob({
      className: 'App\\Jobs\\Bridge\\RecordJob',
      properties: { n: 2, blob: Buffer.alloc(90_000, 7).toString('base64'), note: `token ${TOKEN} in the data` },
    }),
  ).raw;
  await queue.pushRaw(payloads.huge, 'default');
  await queue.pushRaw(payloads.base64, 'default');
  client.disconnect();
  const failer = DatabaseUuidFailedJobProvider.fromUrl(s.env.LQB_FAILED_DB!);
  failedException = `Exception: ${'x'.repeat(1 << 20)} with ${TOKEN}`;
  failedUuid = await failer.log('redis', 'default', payloads.base64, failedException);
  await failer.close();
  server = await startUi([`--token=${TOKEN}`], s.env);
});

afterAll(async () => {
  server?.child.kill('SIGKILL');
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  s?.remove();
});

interface ShownJob {
  uuid: string | null;
  name: string;
  payloadBytes: number;
  payloadHead?: string;
  properties: unknown;
  propertiesCut?: string;
  exception?: string;
  download?: string;
}

async function getJson(path: string): Promise<{ text: string; jobs: ShownJob[] }> {
  const res = await fetch(server.url + path, { headers: auth, signal: answerWithin() });
  const text = await res.text();
  expect(res.status, `${path}: ${text.slice(0, 300)}`).toBe(200);
  return { text, jobs: (JSON.parse(text) as { jobs: ShownJob[] }).jobs };
}

const uuidOf = (payload: string) => (JSON.parse(payload.slice(0, payload.indexOf(',"data":')) + '}') as { uuid: string }).uuid;

describe('a page of jobs too large to show whole', () => {
  it('shows the 50 MB job by its start and its size, the base64 job by its properties cut, and stays small', async () => {
    const { text, jobs } = await getJson('api/queues/default/jobs?state=ready');
    expect(text.length, 'the page of two jobs, in characters').toBeLessThan(64 * 1024);
    expect(text, 'the page shows the token').not.toContain(TOKEN);
    const huge = jobs.find((job) => job.uuid === uuidOf(payloads.huge));
    expect(huge, `the 50 MB job by its uuid, in ${JSON.stringify(jobs.map((j) => j.uuid))}`).toBeDefined();
    expect(huge!.name, 'the 50 MB job: its name, from the start of its payload').toBe('App\\Jobs\\Bridge\\RecordJob');
    expect(huge!.payloadBytes, 'the 50 MB job: its size').toBe(Buffer.byteLength(payloads.huge));
    expect(huge!.properties, 'the 50 MB job: not decoded').toBeNull();
    const head = huge!.payloadHead!.replace(/… \(\d+ more bytes\)$/, '');
    expect(huge!.payloadHead, 'the 50 MB job: its start, saying how many more bytes the whole has').toBe(
      `${head}… (${Buffer.byteLength(payloads.huge) - Buffer.byteLength(head)} more bytes)`,
    );
    expect(payloads.huge.startsWith(head) && head.length > 0, 'the head is the payload as stored').toBe(true);
    const base64 = jobs.find((job) => job.uuid === uuidOf(payloads.base64));
    expect(base64?.propertiesCut, 'the base64 job: its properties cut, saying how much more').toMatch(/… \(\d+ more characters\)$/);
  });

  it("gives each whole payload as a download, with the dashboard's own token hidden, behind the token", async () => {
    const { jobs } = await getJson('api/queues/default/jobs?state=ready');
    for (const [what, payload] of [
      ['the 50 MB job', payloads.huge],
      ['the base64 job', payloads.base64],
    ] as const) {
      const job = jobs.find((j) => j.uuid === uuidOf(payload))!;
      expect(job.download, `${what}: a download path`).toBeDefined();
      const res = await fetch(server.url + job.download!, { headers: auth, signal: answerWithin() });
      expect(res.status, `${what}: download status`).toBe(200);
      expect(res.headers.get('content-disposition'), `${what}: given as a file`).toMatch(/^attachment; filename="[\w-]+\.json"$/);
      const body = await res.text();
      expect(body.length, `${what}: the download's length`).toBe(payload.split(TOKEN).join('***').length);
      expect(body === payload.split(TOKEN).join('***'), `${what}: the download is the payload, the token hidden`).toBe(true);
      const anonymous = await fetch(server.url + job.download!, { signal: answerWithin() });
      expect(anonymous.status, `${what}: a download without the token`).toBe(401);
    }
    const moved = await fetch(`${server.url}api/queues/default/payload?state=ready&offset=0&uuid=not-this-one`, { headers: auth });
    expect(moved.status, 'a download of a job no longer where the page saw it').toBe(409);
  });

  it('shows a failure with a megabyte of exception cut, and its payload as a download', async () => {
    const { text, jobs } = await getJson('api/failed');
    expect(text.length, 'the page of one failure, in characters').toBeLessThan(64 * 1024);
    const job = jobs.find((j) => j.uuid === failedUuid);
    const kept = job!.exception!.replace(/… \(\d+ more characters\)$/, '');
    expect(job?.exception, 'the exception, cut, saying how much more of the whole there is').toBe(
      `${kept}… (${failedException.length - kept.length} more characters)`,
    );
    expect(failedException.startsWith(kept) && kept.length > 0, 'the exception as recorded').toBe(true);
    const res = await fetch(server.url + job!.download!, { headers: auth, signal: answerWithin() });
    expect(res.status, "the failed job's download").toBe(200);
    expect(await res.text(), "the failed job's payload, the token hidden").toBe(payloads.base64.split(TOKEN).join('***'));
  });

  it('ends on SIGTERM', async () => {
    // A page of the 50 MB job asked for, then SIGTERM: the server answers or not, and ends.
    void fetch(`${server.url}api/queues/default/jobs?state=ready`, { headers: auth, signal: answerWithin() }).catch(() => undefined);
    const exited = new Promise<number | string | null>((resolve) => server.child.once('exit', (code, signal) => resolve(code ?? signal)));
    server.child.kill('SIGTERM');
    const outcome = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 60_000))]);
    expect(outcome, 'lqb ui after SIGTERM').not.toBe('still running');
  });
});
