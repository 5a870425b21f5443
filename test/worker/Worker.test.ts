/**
 * The worker's rules on real Redis, Node on both ends: the payloads are built as Laravel 8
 * builds them, the outcomes are those Laravel's Worker gives (test/e2e has the same rules
 * against Laravel's own worker and producer).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Encrypter, Worker, buildJob, buildPayload, decodePayload, type HandlerJob, type PayloadOptions } from '../../src/index.js';
import { fromJS, serialize } from '../../src/php/index.js';
import { debianPayloads } from '../helpers/laravel.js';
import { workerSetup, type WorkerSetup } from '../helpers/worker.js';
import { rawClient } from '../helpers/redis.js';
import { failureWords } from '../helpers/failure-words.js';

let env: WorkerSetup;
beforeEach(() => {
  env = workerSetup();
});
afterEach(() => env.cleanup());

/**
 * A delayed job's due time: `seconds` past the moment it was given back, which fell between the
 * clock readings `before` and `after` (whole seconds), however long a busy machine took.
 */
function expectDueIn(score: number, seconds: number, before: number, after: number, what: string): void {
  expect(
    score >= before + seconds && score <= after + seconds,
    `${what}: due at ${score}, should be ${seconds} s past its release, within [${before + seconds}, ${after + seconds}]`,
  ).toBe(true);
}

function payload(className: string, props: Record<string, unknown> = {}, options: PayloadOptions = {}): string {
  return buildPayload(buildJob({ className, properties: props, serializesModels: false }), options).raw;
}

describe('running jobs', () => {
  it('gives the handler the command and deletes the job when it returns', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Hello', { name: 'Ada', n: 3 }));
    const seen: unknown[] = [];
    const stop = await env
      .worker(
        {
          'App\\Jobs\\Hello': async (job) =>
            void seen.push([
              job.command.name,
              job.command.n,
              job.attempts,
              job.queue,
              job.payload.displayName,
              job.payload.attempts,
              job.decoded.profile,
            ]),
        },
        { stopWhenEmpty: true },
      )
      .run();
    expect(stop.reason).toBe('empty');
    expect(seen).toEqual([['Ada', 3, 1, 'default', 'App\\Jobs\\Hello', 0, '8']]);
    expect(await env.queue.size()).toBe(0);
    expect(env.events.map((e) => e.event)).toEqual(['processing', 'processed', 'stopping']);
  });

  it('tries queues in the order given', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Low'), 'low');
    await env.queue.pushRaw(payload('App\\Jobs\\High'), 'high');
    const order: string[] = [];
    const handlers = { 'App\\Jobs\\Low': async () => void order.push('low'), 'App\\Jobs\\High': async () => void order.push('high') };
    await env.worker(handlers, { queues: ['high', 'low'], stopWhenEmpty: true }).run();
    expect(order).toEqual(['high', 'low']);
  });
});

describe('exceptions', () => {
  it('release with the payload’s backoff until maxTries, then fail into failed_jobs', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Flaky', {}, { maxTries: 3, backoff: [0, 0] }));
    const attempts: number[] = [];
    const handlers = {
      'App\\Jobs\\Flaky': async (job: { attempts: number }) => {
        attempts.push(job.attempts);
        throw new Error(`boom ${job.attempts}`);
      },
    };
    await env.worker(handlers, { stopWhenEmpty: true }).run();
    expect(attempts).toEqual([1, 2, 3]);
    const [record] = await env.failer.all();
    expect(record!.queue).toBe('default');
    expect(record!.connection).toBe('redis');
    expect(record!.exception).toMatch(/^Error: boom 3 in \S+Worker.test.ts:\d+\nStack trace:/);
    // Laravel keeps the payload as this attempt popped it: the reserved form the last release put back.
    expect(decodePayload(record!.payload).envelope.attempts).toBe(2);
    expect(await env.queue.size()).toBe(0);
  });

  it('wait out the backoff in :delayed', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Flaky', {}, { maxTries: 2, backoff: [30] }));
    const before = Math.floor(Date.now() / 1000);
    await env.worker({ 'App\\Jobs\\Flaky': async () => Promise.reject(new Error('x')) }, { stopWhenEmpty: true }).run();
    const after = Math.floor(Date.now() / 1000);
    expect(await env.queue.delayedSize()).toBe(1);
    const [[member, score]] = (await env.client.zrange('queues:default:delayed', 0, -1, 'WITHSCORES')).reduce<[string, string][]>(
      (pairs, v, i, all) => (i % 2 ? pairs : [...pairs, [v, all[i + 1]!]]),
      [],
    ) as [[string, string]];
    expectDueIn(Number(score), 30, before, after, 'the backoff of 30 s');
    expect(JSON.parse(member).attempts).toBe(1); // the reserved form goes back, attempts counted
  });

  it('with --tries=0 never run out', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Flaky'));
    let runs = 0;
    await env
      .worker(
        {
          'App\\Jobs\\Flaky': async () => {
            if (++runs < 5) throw new Error('again');
          },
        },
        { tries: 0, stopWhenEmpty: true },
      )
      .run();
    expect(runs).toBe(5);
    expect(await env.failer.all()).toEqual([]);
  });

  it('a job past retryUntil fails without running', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Late', {}, { retryUntil: Math.floor(Date.now() / 1000) - 10 }));
    let ran = false;
    await env.worker({ 'App\\Jobs\\Late': async () => void (ran = true) }, { stopWhenEmpty: true }).run();
    expect(ran).toBe(false);
    expect((await env.failer.all())[0]!.exception).toMatch(
      /MaxAttemptsExceededException: App\\Jobs\\Late has been attempted too many times/,
    );
  });

  it('maxExceptions counts per uuid in Laravel’s cache key and fails when reached', async () => {
    const raw = payload('App\\Jobs\\Picky', {}, { maxTries: 10, maxExceptions: 2 });
    await env.queue.pushRaw(raw);
    let runs = 0;
    await env
      .worker(
        {
          'App\\Jobs\\Picky': async () => {
            runs++;
            throw new Error('no');
          },
        },
        { stopWhenEmpty: true },
      )
      .run();
    expect(runs).toBe(2);
    expect(await env.failer.all()).toHaveLength(1);
    expect(await env.client.exists(`laravel_cache:job-exceptions:${String(decodePayload(raw).envelope.uuid)}`)).toBe(0);
  });
});

describe('what a handler can do', () => {
  it('release, fail and delete by hand', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Release'));
    await env.queue.pushRaw(payload('App\\Jobs\\Fail'));
    await env.queue.pushRaw(payload('App\\Jobs\\Delete'));
    const failedHook: string[] = [];
    const fail = Object.assign(async (job: { fail: (e: Error) => Promise<void> }) => job.fail(new Error('refused')), {
      failed: async (_job: unknown, error: unknown) => void failedHook.push((error as Error).message),
    });
    await env
      .worker(
        {
          'App\\Jobs\\Release': async (job) => (job.attempts === 1 ? job.release(60) : undefined),
          'App\\Jobs\\Fail': fail,
          'App\\Jobs\\Delete': async (job) => job.delete(),
        },
        { stopWhenEmpty: true },
      )
      .run();
    expect(await env.queue.delayedSize()).toBe(1);
    expect(failedHook).toEqual(['refused']);
    expect((await env.failer.all()).map((r) => r.exception.split('\n')[0]!.replace(/ in \S+:\d+$/, ''))).toEqual(['Error: refused']);
  });

  it('release, fail and delete taken out of the job (const { release } = job) act on that job', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Release'));
    await env.queue.pushRaw(payload('App\\Jobs\\Fail'));
    await env.queue.pushRaw(payload('App\\Jobs\\Delete'));
    await env
      .worker(
        {
          'App\\Jobs\\Release': async (job) => {
            const { release, attempts } = job;
            if (attempts === 1) await release(60);
          },
          'App\\Jobs\\Fail': async (job) => {
            const { fail } = job;
            await fail(new Error('refused'));
          },
          'App\\Jobs\\Delete': async (job) => {
            const { delete: remove } = job;
            // The same function each time it is read: bound once, to this job.
            expect(job.delete).toBe(remove);
            await remove();
          },
        },
        { stopWhenEmpty: true },
      )
      .run();
    expect(await env.queue.delayedSize()).toBe(1);
    expect((await env.failer.all()).map((r) => JSON.parse(r.payload).displayName)).toEqual(['App\\Jobs\\Fail']);
    expect(env.events.filter((e) => e.event !== 'processing' && e.event !== 'stopping').map((e) => [e.job, e.event])).toEqual([
      ['App\\Jobs\\Release', 'released'],
      ['App\\Jobs\\Fail', 'failed'],
      ['App\\Jobs\\Delete', 'processed'],
    ]);
  });

  it("fail() records a ManuallyFailedException with no message, fail('reason') one with the reason; the hook gets that Error", async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Quiet'));
    await env.queue.pushRaw(payload('App\\Jobs\\Said'));
    const hooked: unknown[] = [];
    const failed = async (_job: unknown, error: unknown) => void hooked.push([(error as Error).name, (error as Error).message]);
    await env
      .worker(
        {
          'App\\Jobs\\Quiet': Object.assign(async (job: { fail: () => Promise<void> }) => job.fail(), { failed }),
          'App\\Jobs\\Said': Object.assign(async (job: { fail: (reason: string) => Promise<void> }) => job.fail('the card was declined'), {
            failed,
          }),
        },
        { stopWhenEmpty: true },
      )
      .run();
    const firstLines = (await env.failer.all()).map((r) => [JSON.parse(r.payload).displayName, r.exception.split('\n')[0]]);
    expect(firstLines.sort()).toEqual([
      ['App\\Jobs\\Quiet', expect.stringMatching(/^Illuminate\\Queue\\ManuallyFailedException in \S+:\d+$/)],
      ['App\\Jobs\\Said', expect.stringMatching(/^Illuminate\\Queue\\ManuallyFailedException: the card was declined in \S+:\d+$/)],
    ]);
    expect(hooked).toEqual([
      ['Illuminate\\Queue\\ManuallyFailedException', ''],
      ['Illuminate\\Queue\\ManuallyFailedException', 'the card was declined'],
    ]);
  });

  it('release(seconds) with no number of seconds throws in the handler, so the job is failed by the rules, never left reserved or delayed for ever', async () => {
    const given: Record<string, unknown> = { NotANumber: NaN, Forever: Infinity, Word: 'soon', Numeric: '30' };
    for (const name of Object.keys(given)) await env.queue.pushRaw(payload(`App\\Jobs\\${name}`));
    const before = Math.floor(Date.now() / 1000);
    const handlers = Object.fromEntries(
      Object.entries(given).map(([name, seconds]) => [
        `App\\Jobs\\${name}`,
        async (job: HandlerJob) => (job.release as (s: unknown) => Promise<void>)(seconds),
      ]),
    );
    await env.worker(handlers, { stopWhenEmpty: true }).run();
    const failed = (await env.failer.all()).map((r) => [
      JSON.parse(r.payload).displayName,
      r.exception.split('\n')[0]!.replace(/ in \S+:\d+$/, ''),
    ]);
    expect(failed.sort()).toEqual([
      ['App\\Jobs\\Forever', 'TypeError: job.release(seconds): seconds must be a finite number, not Infinity'],
      ['App\\Jobs\\NotANumber', 'TypeError: job.release(seconds): seconds must be a finite number, not NaN'],
      ['App\\Jobs\\Word', 'TypeError: job.release(seconds): seconds must be a finite number, not "soon"'],
    ]);
    const after = Math.floor(Date.now() / 1000);
    expect(await env.client.zcard('queues:default:reserved'), 'a job left reserved').toBe(0);
    const [member, score] = await env.client.zrange('queues:default:delayed', 0, -1, 'WITHSCORES');
    expect(JSON.parse(member!).displayName, 'the job released with "30"').toBe('App\\Jobs\\Numeric');
    expectDueIn(Number(score), 30, before, after, 'the job released with "30"');
  });

  it('the failed hook runs with the error on every way to failure, as Laravel calls a job’s failed()', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Throws', {}, { maxTries: 1 }));
    await env.queue.pushRaw(payload('App\\Jobs\\Picky', {}, { maxTries: 5, maxExceptions: 1 }));
    // Taken once before (attempts 1 of 1): this take is one too many.
    await env.client.rpush('queues:default', payload('App\\Jobs\\Again', {}, { maxTries: 1 }).replace('"attempts":0', '"attempts":1'));
    const hooked: string[] = [];
    const ran: string[] = [];
    const handler = (message: string) =>
      Object.assign(
        async (job: { name: string }) => {
          ran.push(job.name);
          throw new Error(message);
        },
        {
          failed: async (job: { name: string }, error: unknown) =>
            void hooked.push(`${job.name}: ${(error as Error).name}: ${(error as Error).message}`),
        },
      );
    await env
      .worker(
        {
          'App\\Jobs\\Throws': handler('last try'),
          'App\\Jobs\\Picky': handler('one too many'),
          'App\\Jobs\\Again': handler('never runs'),
        },
        { stopWhenEmpty: true },
      )
      .run();
    expect(ran).toEqual(['App\\Jobs\\Throws', 'App\\Jobs\\Picky']);
    expect(hooked).toEqual([
      'App\\Jobs\\Throws: Error: last try',
      'App\\Jobs\\Picky: Error: one too many',
      expect.stringMatching(
        /^App\\Jobs\\Again: Illuminate\\Queue\\MaxAttemptsExceededException: App\\Jobs\\Again has been attempted too many times/,
      ),
    ]);
    expect(await env.failer.all()).toHaveLength(3);
  });

  it('a handler that deletes its job and then throws is logged as deleted: nothing was released or failed', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Gone', {}, { maxTries: 3 }));
    await env
      .worker(
        {
          'App\\Jobs\\Gone': async (job) => {
            await job.delete();
            throw new Error('after delete');
          },
        },
        { stopWhenEmpty: true },
      )
      .run();
    expect(env.events.map((e) => [e.event, e.error])).toEqual([
      ['processing', undefined],
      ['deleted', 'after delete'],
      ['stopping', undefined],
    ]);
    expect(await env.queue.size()).toBe(0);
    expect(await env.failer.all()).toEqual([]);
  });

  it('works with the job taken apart: const { command, release } = job', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Apart', { n: 5 }));
    const seen: unknown[] = [];
    await env
      .worker(
        {
          'App\\Jobs\\Apart': async ({ command, attempts, release }) => {
            seen.push([command.n, attempts]);
            await release(60);
          },
        },
        { stopWhenEmpty: true },
      )
      .run();
    expect(seen).toEqual([[5, 1]]);
    expect(await env.queue.delayedSize()).toBe(1);
    expect(await env.failer.all()).toEqual([]);
  });
});

describe('timeouts', () => {
  it('abort the handler’s signal; on the last attempt the job fails, and the worker goes on', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Slow', {}, { timeout: 1, maxTries: 1 }));
    await env.queue.pushRaw(payload('App\\Jobs\\Quick'));
    let aborted = false;
    let quick = false;
    await env
      .worker(
        {
          'App\\Jobs\\Slow': (job) =>
            new Promise<void>((resolve) =>
              job.signal.addEventListener('abort', () => {
                aborted = true;
                resolve();
              }),
            ),
          'App\\Jobs\\Quick': async () => void (quick = true),
        },
        { stopWhenEmpty: true },
      )
      .run();
    expect(aborted).toBe(true);
    expect(quick).toBe(true);
    expect((await env.failer.all())[0]!.exception).toMatch(/MaxAttemptsExceededException/);
  });

  it('with attempts left, leave the job reserved to come back after retry_after', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Slow', {}, { timeout: 1, maxTries: 3 }));
    await env
      .worker(
        { 'App\\Jobs\\Slow': (job) => new Promise((resolve) => job.signal.addEventListener('abort', resolve)) },
        { stopWhenEmpty: true },
      )
      .run();
    expect(await env.queue.reservedSize()).toBe(1);
    expect(await env.failer.all()).toEqual([]);
    expect(env.events.map((e) => e.event)).toContain('timed-out');
  });

  it('what a handler does to its job after its timeout is ignored: the job is no longer its own', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Slow', {}, { timeout: 1, maxTries: 3 }));
    let late: Promise<void> | undefined;
    await env
      .worker(
        {
          'App\\Jobs\\Slow': (job) =>
            new Promise<void>((resolve) =>
              setTimeout(() => {
                late = job.delete();
                resolve();
              }, 1300),
            ),
        },
        { stopWhenEmpty: true },
      )
      .run();
    while (!late) await new Promise((r) => setTimeout(r, 50));
    await late;
    expect(await env.queue.reservedSize()).toBe(1); // still waiting for retry_after, not deleted by the late handler
  });

  it('a handler that first looks at its signal after the timeout finds it already aborted, with the reason', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Slow', {}, { timeout: 1, maxTries: 3 }));
    let seen: AbortSignal | undefined;
    await env
      .worker(
        {
          'App\\Jobs\\Slow': (job) =>
            new Promise<void>((resolve) =>
              setTimeout(() => {
                seen = job.signal;
                resolve();
              }, 1300),
            ),
        },
        { stopWhenEmpty: true },
      )
      .run();
    while (!seen) await new Promise((r) => setTimeout(r, 50));
    expect(seen.aborted).toBe(true);
    expect(String(seen.reason)).toMatch(/TimeoutExceeded|timed out after 1 seconds/);
  });

  it('failOnTimeout fails at once', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Slow', {}, { timeout: 1, maxTries: 3, failOnTimeout: true }));
    await env
      .worker(
        { 'App\\Jobs\\Slow': (job) => new Promise((resolve) => job.signal.addEventListener('abort', resolve)) },
        { stopWhenEmpty: true },
      )
      .run();
    // Laravel 8 records it as MaxAttemptsExceededException (test/e2e checks this against Laravel).
    expect((await env.failer.all())[0]!.exception).toMatch(
      /MaxAttemptsExceededException: App\\Jobs\\Slow has been attempted too many times or run too long/,
    );
  });

  // What Laravel 12.67 and 13.26's own exception classes say (php-fixture-gen/live/failure-words.php).
  for (const words of failureWords) {
    it(`records a timeout and a job out of attempts in Laravel ${words.laravel}'s words, when the app is ${words.laravel}`, async () => {
      await env.queue.pushRaw(payload('App\\Jobs\\Slow', {}, { timeout: 1, maxTries: 3, failOnTimeout: true }));
      await env.queue.pushRaw(payload('App\\Jobs\\Slow', {}, { retryUntil: Math.floor(Date.now() / 1000) - 10 }));
      const slow = (job: HandlerJob) => new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()));
      await env.worker({ 'App\\Jobs\\Slow': slow }, { stopWhenEmpty: true }, { laravel: words.laravel }).run();
      const recorded = (await env.failer.all()).map((failed) => failed.exception.split('\n')[0]!.replace(/ in \S+:\d+$/, ''));
      expect(recorded.sort(), `the failed_jobs exceptions a Laravel ${words.laravel} app gets`).toEqual(
        [`${words.timedOut.class}: ${words.timedOut.message}`, `${words.outOfAttempts.class}: ${words.outOfAttempts.message}`].sort(),
      );
    });
  }
});

describe('chains', () => {
  const chained = (connection: string | null) => {
    const head = buildJob({ className: 'App\\Jobs\\Head', properties: {}, serializesModels: false });
    head.props.set(
      'chained',
      fromJS([
        Buffer.from(serialize(buildJob({ className: 'App\\Jobs\\Next', properties: {}, serializesModels: false }))).toString('utf8'),
      ]),
    );
    head.props.set('chainConnection', connection);
    return buildPayload(head).raw;
  };

  it('push the next job on this connection to the connection’s queue; one bound for another connection fails this job with the reason', async () => {
    await env.queue.pushRaw(chained('redis'), 'work');
    await env.queue.pushRaw(chained('sqs'), 'work');
    await env.worker({ 'App\\Jobs\\Head': async () => undefined }, { queues: ['work'], stopWhenEmpty: true }).run();
    expect((await env.client.lrange('queues:default', 0, -1)).map((raw) => decodePayload(raw).name)).toEqual(['App\\Jobs\\Next']);
    const failed = await env.failer.all();
    expect(failed.map((r) => r.exception.split('\n')[0]!.replace(/ in \S+:\d+$/, ''))).toEqual([
      'Error: the next job in the chain goes to connection "sqs", and this worker serves only "redis"',
    ]);
  });
});

describe('string jobs', () => {
  it('run under Class@fire, the method Laravel calls when the job string names none', async () => {
    const strings = debianPayloads().filter((r) => r.name === 'string/no-method' || r.name === 'string/handler-with-data');
    expect(strings).toHaveLength(2);
    for (const record of strings) await env.queue.pushRaw(record.payload);
    const ran: unknown[] = [];
    await env
      .worker(
        {
          'App\\Handlers\\LegacyImport@fire': async (job) => void ran.push(job.command),
          'App\\Handlers\\LegacyImport@handle': async () => void ran.push('wrong method'),
        },
        { stopWhenEmpty: true },
      )
      .run();
    expect(ran.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
      { file: '/imports/2024/users.csv', rows: 3, ratio: 0.5, who: 'Zoë' },
      { value: 'raw string data' },
    ]);
    expect(await env.failer.all()).toEqual([]);
  });
});

describe('jobs it cannot run', () => {
  it('no handler: failed with the reason, never dropped', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Unknown'));
    await env.worker({}, { stopWhenEmpty: true }).run();
    expect((await env.failer.all())[0]!.exception).toMatch(/NoHandlerException: no handler for App\\Jobs\\Unknown/);
  });

  it('a queued closure Laravel 8.83 pushed (dispatch(function () {…})): failed, saying it is PHP only a PHP worker runs', async () => {
    const closures = debianPayloads().filter((r) => r.name === 'closure/queue-push' || r.name === 'closure/dispatch-helper');
    expect(closures.length, 'the closure fixtures are missing').toBe(2);
    for (const record of closures) await env.queue.pushRaw(record.payload);
    await env.worker({}, { stopWhenEmpty: true }).run();
    const failed = await env.failer.all();
    expect(
      failed.map((f) => f.exception.split('\n')[0]),
      'a closure was not failed with its reason',
    ).toEqual(
      closures.map(() =>
        expect.stringMatching(
          /^LaravelQueueBridge\\NoHandlerException: Closure \(laravel-fixtures\.php:\d+\): a queued closure is PHP code; only a PHP worker can run it \(no handler for Illuminate\\Queue\\CallQueuedClosure in the handlers module\)/,
        ),
      ),
    );
  });

  it('no handler with --share: never taken, left in its place as pushed, not a line said of it', async () => {
    const php = payload('App\\Jobs\\PhpOnly');
    const node = payload('App\\Jobs\\Moved');
    await env.queue.bulkRaw([php, node, php]);
    const ran: unknown[] = [];
    await env
      .worker(
        { 'App\\Jobs\\Moved': async (job) => void ran.push(job.command.n ?? job.name) },
        { stopWhenEmpty: true, sleep: 0.01, share: true },
      )
      .run();
    expect(ran, 'the Node job did not run once').toEqual(['App\\Jobs\\Moved']);
    expect(await env.failer.all(), 'a job was failed').toEqual([]);
    expect(await env.client.lrange('queues:default', 0, -1), 'the PHP jobs are not where they were, as pushed').toEqual([php, php]);
    expect(await env.client.zcard('queues:default:delayed'), 'a PHP job was given back').toBe(0);
    expect(
      env.events.filter((e) => e.job === 'App\\Jobs\\PhpOnly').map((e) => e.event),
      'the worker said something of a PHP job',
    ).toEqual([]);
  });

  it('an encrypted job and no APP_KEY here, with --share: given back as pushed for a PHP worker that has the key, never failed', async () => {
    const raw = buildPayload(buildJob({ className: 'App\\Jobs\\Secret', properties: { token: 't' } }), {
      encrypter: new Encrypter(`base64:${Buffer.alloc(32, 7).toString('base64')}`),
    }).raw;
    await env.queue.pushRaw(raw);
    await env.worker({ 'App\\Jobs\\Secret': async () => undefined }, { once: true, share: true, shareDelay: 0 }).run();
    expect(await env.failer.all()).toEqual([]);
    expect(
      env.events.find((e) => e.event === 'given-back'),
      'no given-back event',
    ).toMatchObject({ job: 'App\\Jobs\\Secret', reason: expect.stringMatching(/no APP_KEY/) });
    await env.queue.migrate();
    expect(await env.client.lrange('queues:default', 0, -1)).toEqual([raw]);
  });

  it.each([
    ['not JSON', '{"job": nope'],
    ['no attempts', '{"job":"Illuminate\\\\Queue\\\\CallQueuedHandler@call","data":{"commandName":"X","command":"O:1:\\"X\\":0:{}"}}'],
    ['non-numeric attempts', payload('App\\Jobs\\X').replace('"attempts":0', '"attempts":"zero"')],
    [
      'a job field that is not a string',
      payload('App\\Jobs\\X').replace('"job":"Illuminate\\\\Queue\\\\CallQueuedHandler@call"', '"job":42'),
    ],
    ['data that is not an object', payload('App\\Jobs\\X').replace(/"data":\{.*\},"id"/, '"data":"nothing","id"')],
    ['a broken command', payload('App\\Jobs\\X').replace('O:10:', 'O:99:')],
    ['a command claiming a huge string', payload('App\\Jobs\\X').replace('s:3:\\"job\\"', 's:999999999:\\"job\\"')],
    ['a truncated command', payload('App\\Jobs\\X').replace(/"command":"(.{20}).*?"\}/, '"command":"$1"}')],
    [
      'encrypted with another key',
      buildPayload(buildJob({ className: 'App\\Jobs\\X', properties: {} }), {
        encrypter: new Encrypter(`base64:${Buffer.alloc(32, 7).toString('base64')}`),
      }).raw,
    ],
  ])('a payload that is %s is failed with the reason, and the next job runs', async (_, poison) => {
    await env.client.rpush('queues:default', poison);
    await env.queue.pushRaw(payload('App\\Jobs\\Good'));
    let good = false;
    const worker = new Worker(
      env.queue,
      { 'App\\Jobs\\Good': async () => void (good = true), 'App\\Jobs\\X': async () => undefined },
      { stopWhenEmpty: true, sleep: 0.05, share: false },
      { failer: env.failer, encrypter: new Encrypter(`base64:${Buffer.alloc(32, 1).toString('base64')}`) },
    );
    await worker.run();
    expect(good).toBe(true);
    const [record] = await env.failer.all();
    expect(record!.payload).toBe(poison);
    expect(record!.exception).toMatch(/UndecodableJobException: the job cannot be read/);
    expect(await env.queue.size()).toBe(0);
  });
});

describe('stopping', () => {
  it('--max-jobs, --once, and a restart signal stop the loop', async () => {
    for (let i = 0; i < 3; i++) await env.queue.pushRaw(payload('App\\Jobs\\Tick'));
    expect((await env.worker({ 'App\\Jobs\\Tick': async () => undefined }, { maxJobs: 2 }).run()).reason).toBe('max-jobs');
    expect(await env.queue.size()).toBe(1);
    expect((await env.worker({ 'App\\Jobs\\Tick': async () => undefined }, { once: true }).run()).reason).toBe('once');
    const worker = env.worker({}, {});
    const running = worker.run();
    await new Promise((r) => setTimeout(r, 100));
    await env.cache.signalRestart(Math.floor(Date.now() / 1000) + 1);
    expect((await running).reason).toBe('restart');
  });
});

describe('concurrency', () => {
  it('never runs more handlers at once than --concurrency; the next reserve goes out while jobs run and while the last ones are deleted', async () => {
    await env.queue.bulkRaw(Array.from({ length: 100 }, (_, n) => payload('App\\Jobs\\Tick', { n })));
    let running = 0;
    let mostRunning = 0;
    let returned = 0;
    // Jobs reserved beyond those whose handlers returned and whose deletes are on their way.
    let mostReservedUnsettled = 0;
    const processed = () => env.events.filter((e) => e.event === 'processed').length;
    const worker = env.worker(
      {
        'App\\Jobs\\Tick': async () => {
          mostRunning = Math.max(mostRunning, ++running);
          const processedBefore = processed();
          const reserved = await env.queue.reservedSize();
          // At most this many were settling when Redis counted: returned by now, not yet deleted before.
          mostReservedUnsettled = Math.max(mostReservedUnsettled, reserved - (returned - processedBefore));
          await new Promise((r) => setTimeout(r, 5));
          running--;
          returned++;
        },
      },
      { stopWhenEmpty: true, concurrency: 8 },
    );
    expect((await worker.run()).reason).toBe('empty');
    expect(mostRunning, 'handlers running at once').toBeLessThanOrEqual(8);
    expect(
      mostRunning,
      'handlers running at once: more than one reserve’s worth (half the slots) means the next came while these ran',
    ).toBeGreaterThan(4);
    expect(mostReservedUnsettled, 'jobs reserved, less those only waiting for their delete').toBeLessThanOrEqual(8);
    expect(processed(), 'jobs processed').toBe(100);
    expect(await env.queue.size(), 'jobs left in the queue').toBe(0);
  });

  it('writes the next reserve before the jobs just taken start, so Redis reserves while they run', async () => {
    await env.queue.bulkRaw(Array.from({ length: 4 }, (_, n) => payload('App\\Jobs\\Tick', { n })));
    // Redis's own log of what it runs, stamped by its clock: the reserves are the scripts given the queue's notify list.
    const raw = rawClient();
    const monitor = await raw.monitor();
    const reserves: number[] = [];
    const notify = `${env.prefix}queues:default:notify`;
    monitor.on('monitor', (time: string, args: string[]) => {
      const command = args[0]?.toLowerCase();
      if ((command === 'evalsha' || command === 'eval') && args.includes(notify)) reserves.push(Number(time));
    });
    let blockedFrom: number | undefined;
    // Long enough that a busy machine's scheduling does not blur before the job from after it.
    const HELD = 2;
    const worker = env.worker(
      {
        'App\\Jobs\\Tick': () => {
          if (blockedFrom !== undefined) return;
          // The first job holds the event loop: a reserve not yet written waits for it to end.
          blockedFrom = Date.now() / 1000;
          while (Date.now() / 1000 - blockedFrom < HELD) {
            // busy, as a CPU-bound handler is
          }
        },
      },
      { stopWhenEmpty: true, concurrency: 2 },
    );
    expect((await worker.run()).reason).toBe('empty');
    monitor.disconnect();
    raw.disconnect();
    expect(reserves.length, 'reserves Redis ran').toBeGreaterThanOrEqual(2);
    // With 2 slots each reserve takes one job: the second went out ahead, with the first job, so
    // Redis ran it while the first job still held the event loop (a reserve written after the
    // job would run only once the loop is free again).
    expect(
      reserves[1]! - blockedFrom!,
      `seconds from the first job’s start to Redis running the reserve sent ahead (the job held the loop ${HELD} s)`,
    ).toBeLessThan(HELD);
  });

  it('a stop mid-run leaves nothing reserved: jobs taken ahead run first', async () => {
    await env.queue.bulkRaw(Array.from({ length: 500 }, (_, n) => payload('App\\Jobs\\Tick', { n })));
    const ran = new Set<number>();
    const worker = env.worker(
      {
        'App\\Jobs\\Tick': async (job) => {
          ran.add(Number(job.command.n));
          if (ran.size === 100) void worker.stop();
          await new Promise((r) => setTimeout(r, 1));
        },
      },
      { concurrency: 16 },
    );
    expect((await worker.run()).reason).toBe('stopped');
    expect(await env.queue.reservedSize()).toBe(0);
    expect(ran.size + (await env.queue.readySize())).toBe(500);
  });
});

describe('more of queue:work’s options', () => {
  it('--max-time stops the loop, --memory stops it with status 12', async () => {
    const started = Date.now();
    expect(await env.worker({}, { maxTime: 0.3 }).run()).toEqual({ status: 0, reason: 'max-time' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    const memory = await env.worker({}, { memory: 1 }).run();
    expect(memory, 'the stop for memory').toMatchObject({ status: 12, reason: 'memory' });
    expect(memory.detail, 'the stop does not say how much the heap holds').toMatch(/hold \d+ MB\b.*, at or past the memory limit of 1 MB$/);
  });

  it('pause takes no job until resume, and the job waits in the queue meanwhile', async () => {
    const ran: number[] = [];
    const worker = env.worker({ 'App\\Jobs\\Tick': async (job) => void ran.push(Number(job.command.n)) }, {});
    worker.pause();
    const running = worker.run();
    await env.queue.pushRaw(payload('App\\Jobs\\Tick', { n: 1 }));
    await new Promise((r) => setTimeout(r, 200));
    expect(ran).toEqual([]);
    expect(await env.queue.readySize()).toBe(1);
    worker.resume();
    while (ran.length === 0) await new Promise((r) => setTimeout(r, 20));
    void worker.stop();
    expect((await running).reason).toBe('stopped');
    expect(ran).toEqual([1]);
  });

  it('block_for waits on :notify and takes a job pushed during the wait', async () => {
    // block_for long beside any delay a busy machine makes: a pop back before it ran out was woken by the push.
    const blockFor = 60;
    const blocking = new (env.queue.constructor as typeof import('../../src/redis/index.js').RedisQueue)(env.client, { blockFor });
    const started = Date.now();
    setTimeout(() => void env.queue.pushRaw(payload('App\\Jobs\\Tick', { n: 7 })), 300);
    const job = await blocking.pop();
    expect(Date.now() - started, `ms the pop waited: woken by the push, not by block_for's ${blockFor} s running out`).toBeLessThan(
      blockFor * 1000 - 1000,
    );
    expect(job?.payload.name).toBe('App\\Jobs\\Tick');
    await blocking.close();
  });
});
