/**
 * connect()'s defaults for a service that embeds a worker: no memory limit of the CLI's, the
 * prefix Laravel's default config gives without a .env, the process's signals handled on request,
 * one line at start, and handler keys whose backslashes JavaScript ate refused at once.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, type LaravelQueue } from '../../src/connect/index.js';
import { type WorkerLogger } from '../../src/worker/index.js';
import { php as phpEval, root } from '../helpers/php.js';
import { lqb, php } from '../helpers/processes.js';
import { REDIS_URL, rawClient, removePrefix, startOwnRedis, uniquePrefix, type OwnRedis } from '../helpers/redis.js';

let prefix: string;
let dir: string;
let queue: LaravelQueue | undefined;
let own: OwnRedis | undefined;
beforeEach(() => {
  prefix = uniquePrefix('defaults');
  dir = mkdtempSync(join(tmpdir(), 'lqb-defaults-'));
});
afterEach(async () => {
  await queue?.close();
  queue = undefined;
  own?.stop();
  own = undefined;
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

/** A logger that keeps each line with its level. */
function keptLogger(): { lines: { level: string; message: string; fields: Record<string, unknown> }[]; logger: WorkerLogger } {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const at = (level: string) => (fields: object, message?: string) =>
    void lines.push({ level, message: message ?? '', fields: fields as Record<string, unknown> });
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

const failedDb = () => join(dir, 'failed.sqlite');

describe('the memory limit is the CLI’s, not an embedded worker’s', () => {
  it('a service holding 200 MB of its own heap runs its jobs with the default options', async () => {
    // The service's own data: 200 arrays of 1 MB of doubles on the JS heap (a typed array's bytes
    // would be outside it), live for the whole run.
    const held = Array.from({ length: 200 }, (_, i) => new Array<number>(131_072).fill(i + 0.5));
    queue = await connect({ redis: REDIS_URL, prefix, failedDb: failedDb() });
    await queue.dispatch('App\\Jobs\\ResizeImage', { id: 1 }, { queue: 'images' });
    let ran = 0;
    const worker = queue.worker(
      { 'App\\Jobs\\ResizeImage': async () => void ran++ },
      { queues: ['images'], stopWhenEmpty: true, sleep: 0.05 },
    );
    const stop = await worker.run();
    expect(stop, 'the embedded worker stopped for memory at once (the CLI’s 128 MB applied to the whole service)').toEqual({
      status: 0,
      reason: 'empty',
    });
    expect(ran, 'the job did not run').toBe(1);
    expect(held.length, 'the service’s heap was not held through the run').toBe(200);
    expect(process.memoryUsage().heapUsed / 1024 / 1024, 'MB of JS heap the service held').toBeGreaterThan(200);
  });

  it('a limit given stops the worker, and the logger hears why, with the heap’s size', async () => {
    queue = await connect({ redis: REDIS_URL, prefix, failedDb: failedDb() });
    const { lines, logger } = keptLogger();
    const stop = await queue.worker({}, { memory: 1, logger }).run();
    expect(stop, 'the stop').toMatchObject({ status: 12, reason: 'memory' });
    expect(lines.find((l) => l.fields.event === 'stopping')?.message, 'the logger did not say why the worker stopped').toMatch(
      /^stopping memory: the JS heaps and Buffers live after their last full collections hold \d+ MB, at or past the memory limit of 1 MB$/,
    );
  });
});

describe('the Redis prefix without a .env', () => {
  /** What Laravel's default config/database.php (skeleton 5.8.16 to 12.1) gives: its own expression, run by PHP. */
  const laravelPrefix = (appName: string | undefined, separator: '_' | '-'): string =>
    phpEval(
      `require 'Illuminate/Support/autoload.php'; $name = ${appName === undefined ? "'laravel'" : JSON.stringify(appName)}; echo ${separator === '_' ? "Illuminate\\Support\\Str::slug($name, '_').'_database_'" : "Illuminate\\Support\\Str::slug($name).'-database-'"};`,
    ).toString();

  it('is laravel_database_, as Laravel’s default config gives, and Laravel’s worker runs what dispatch pushed there', async () => {
    const expected = laravelPrefix(undefined, '_');
    expect(expected, 'PHP’s default prefix').toBe('laravel_database_');
    const saved = process.env.APP_NAME;
    delete process.env.APP_NAME;
    try {
      queue = await connect({ redis: REDIS_URL, failedDb: failedDb() });
    } finally {
      if (saved !== undefined) process.env.APP_NAME = saved;
    }
    expect(queue.prefix, 'connect({ redis }) without a prefix').toBe(expected);
    // A queue of this test's own under the shared default prefix, removed after.
    const name = `${prefix}q`;
    const { uuid } = await queue.dispatch(
      'App\\Jobs\\Bridge\\RecordJob',
      { n: 1, label: 'prefix', ratio: 0.5, items: [1], flag: true },
      { queue: name },
    );
    const record = join(dir, 'php-runs.jsonl');
    try {
      const laravel = await php('laravel-worker.php', [`--queue=${name}`, '--stop-when-empty', '--sleep=0'], {
        ...process.env,
        REDIS_PREFIX: expected,
        LQB_FAILED_DB: failedDb(),
        LQB_RECORD_FILE: record,
      });
      expect(laravel.stdout, `Laravel's worker under ${expected} did not run the job dispatch pushed: ${laravel.stderr}`).toMatch(
        /Processed: {2}App\\Jobs\\Bridge\\RecordJob/,
      );
      const runs = readFileSync(record, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { uuid: string });
      expect(
        runs.map((r) => r.uuid),
        'Laravel’s worker ran another job',
      ).toEqual([uuid]);
    } finally {
      const raw = rawClient();
      await removePrefix(raw, `${expected}queues:${name}`);
      raw.disconnect();
    }
  });

  it('follows APP_NAME from the environment, and the version’s style: 13’s hyphens, none before skeleton 5.8.16', async () => {
    const saved = process.env.APP_NAME;
    process.env.APP_NAME = 'Acme Shop';
    try {
      queue = await connect({ redis: REDIS_URL, failedDb: failedDb() });
      expect(queue.prefix, 'APP_NAME=Acme Shop').toBe(laravelPrefix('Acme Shop', '_'));
      await queue.close();
      queue = await connect({ redis: REDIS_URL, failedDb: failedDb(), laravel: '13' });
      expect(queue.prefix, 'laravel: 13').toBe(laravelPrefix('Acme Shop', '-'));
      await queue.close();
      // Skeleton 5.8.0 to 5.8.15's config/database.php set no prefix at all.
      queue = await connect({ redis: REDIS_URL, failedDb: failedDb(), laravel: '5.8.3' });
      expect(queue.prefix, 'laravel: 5.8.3').toBe('');
      await queue.close();
      queue = await connect({ redis: REDIS_URL, failedDb: failedDb(), prefix: '' });
      expect(queue.prefix, "prefix: '' is no prefix").toBe('');
    } finally {
      if (saved === undefined) delete process.env.APP_NAME;
      else process.env.APP_NAME = saved;
    }
  });
});

describe('the line a worker says at start', () => {
  it('names Redis (password masked), the prefix, the app’s Laravel (as lqb work names it), the queues, the handlers and the share mode, once', async () => {
    own = await startOwnRedis(['--requirepass', 'sekret-pw']);
    queue = await connect({
      redis: `redis://:sekret-pw@127.0.0.1:${own.port}/0`,
      prefix: 'shop_database_',
      laravel: '8.83.27',
      failedDb: failedDb(),
    });
    const { lines, logger } = keptLogger();
    const handlers = {
      'App\\Jobs\\ResizeImage': async () => undefined,
      'App\\Listeners\\SendShipmentNotification@handle': async () => undefined,
    };
    await queue.worker(handlers, { queues: ['images', 'default'], stopWhenEmpty: true, sleep: 0.05, logger }).run();
    const starting = lines.filter((l) => l.fields.event === 'starting');
    expect(
      starting.map((l) => [l.level, l.message]),
      'the start line',
    ).toEqual([
      [
        'info',
        `worker starting: redis redis://:***@127.0.0.1:${own.port}/0, prefix "shop_database_", unique locks redis://:***@127.0.0.1:${own.port}/0, cache prefix "laravel_cache", Laravel 8.83.27, queues images,default, handlers App\\Jobs\\ResizeImage App\\Listeners\\SendShipmentNotification@handle; a job with no Node handler is left on the queue for a PHP worker (share; share: false / --no-share fails it instead)`,
      ],
    ]);
    expect(JSON.stringify(lines), 'a line shows the password').not.toContain('sekret-pw');
  });
});

describe('handler keys whose backslashes JavaScript ate', () => {
  it('are refused when the worker is made, naming the key and how to write it', async () => {
    queue = await connect({ redis: REDIS_URL, prefix, failedDb: failedDb() });
    // What 'App\Jobs\ResizeImage' and 'App\notifications\InvoicePaid' are in JavaScript source.
    expect(() => queue!.worker({ AppJobsResizeImage: async () => undefined }), 'a squashed key was taken').toThrow(
      'handler key "AppJobsResizeImage" has no backslashes, so it matches no PHP class (probably "App\\\\Jobs\\\\ResizeImage" was meant): write each backslash twice in JavaScript source, e.g. \'App\\\\Jobs\\\\ResizeImage\' (or String.raw`App\\Jobs\\ResizeImage`)',
    );
    expect(() => queue!.worker({ 'App\notificationsInvoicePaid': async () => undefined }), 'a key holding a newline was taken').toThrow(
      /^handler key "App\\notificationsInvoicePaid" holds a control character where a backslash was meant \('\\n' in the source is one character\)/,
    );
    expect(
      () => queue!.worker({ 'App\\Jobs\\ResizeImage': async () => undefined, SendEmail: async () => undefined }),
      'a well-written key, or a class of no namespace, was refused',
    ).not.toThrow();
  });

  it('lqb work refuses such a handlers module at start (exit 2), naming the key', async () => {
    const handlers = join(dir, 'squashed.mjs');
    writeFileSync(handlers, "export default { 'App\\Jobs\\ResizeImage': async () => {} };\n");
    const result = await lqb(['work', `--handlers=${handlers}`, '--once'], {
      ...process.env,
      REDIS_PREFIX: prefix,
      LQB_FAILED_DB: failedDb(),
    });
    expect([result.status, result.stderr], 'lqb work took the squashed key').toEqual([
      2,
      `lqb work: ${handlers}: handler key "AppJobsResizeImage" has no backslashes, so it matches no PHP class (probably "App\\\\Jobs\\\\ResizeImage" was meant): write each backslash twice in JavaScript source, e.g. 'App\\\\Jobs\\\\ResizeImage' (or String.raw\`App\\Jobs\\ResizeImage\`) (lqb work --help for usage)\n`,
    ]);
  });

  it('a job with no handler names the nearest key in its failure', async () => {
    queue = await connect({ redis: REDIS_URL, prefix, failedDb: failedDb() });
    await queue.dispatch('App\\Jobs\\ResizeImages', { id: 1 });
    const failures: string[] = [];
    await queue
      .worker(
        { 'App\\Jobs\\ResizeImage': async () => undefined, 'App\\Jobs\\SendInvoice': async () => undefined },
        { share: false, stopWhenEmpty: true, sleep: 0.05, onFailed: (job) => void failures.push(job.exception) },
      )
      .run();
    expect(failures.length, 'the job was not failed').toBe(1);
    expect(failures[0], 'the failure').toContain(
      'LaravelQueueBridge\\NoHandlerException: no handler for App\\Jobs\\ResizeImages in the handlers module (the nearest handler key is "App\\\\Jobs\\\\ResizeImage")',
    );
  });
});

describe('handleSignals', () => {
  it('SIGINT lets the job in hand finish, then run() resolves with reason signal, and nothing is left reserved', async () => {
    queue = await connect({ redis: REDIS_URL, prefix, failedDb: failedDb() });
    await queue.dispatch('App\\Jobs\\Slow', {}, { queue: 'slow' });
    const script = join(dir, 'service.mjs');
    writeFileSync(
      script,
      [
        `import { connect } from ${JSON.stringify(join(root, 'dist/index.js'))};`,
        `const queue = await connect({ redis: ${JSON.stringify(REDIS_URL)}, prefix: ${JSON.stringify(prefix)}, failedDb: ${JSON.stringify(failedDb())} });`,
        "const worker = queue.worker({ 'App\\\\Jobs\\\\Slow': async () => { console.log('started'); await new Promise((r) => setTimeout(r, 1500)); console.log('finished'); } }, { queues: ['slow'], sleep: 0.05, handleSignals: true });",
        'const stop = await worker.run();',
        "console.log('run ended: ' + stop.reason);",
        'await queue.close();',
      ].join('\n'),
    );
    const child = spawn('node', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('close', (code, signal) => resolve([code, signal])),
    );
    const started = await new Promise<boolean>((resolve) => {
      child.stdout.on('data', (d) => {
        stdout += d;
        if (stdout.includes('started')) resolve(true);
      });
      child.on('close', () => resolve(false));
    });
    expect(started, `the service ended before its job started: ${stderr}`).toBe(true);
    child.kill('SIGINT');
    expect(await exited, `the service did not exit 0 after SIGINT: ${stderr}`).toEqual([0, null]);
    expect(stdout.split('\n').filter(Boolean), 'the job did not finish before the worker stopped').toEqual([
      'started',
      'finished',
      'run ended: signal',
    ]);
    expect(await queue.connection.size('slow'), 'a job was left in the queue (reserved, to run again)').toBe(0);
  });
});
