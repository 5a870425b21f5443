/**
 * The worker against what tries to break it, on real Redis and a real SQLite failed_jobs table:
 * odd values thrown, failed() hooks that never settle, a failer that cannot write, payloads
 * Redis cannot read, commands that must not be read, handler names that are Object.prototype's,
 * and handlers that outlive retry_after.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildJob, buildPayload, type PayloadOptions } from '../../src/index.js';
import { DatabaseUuidFailedJobProvider, Worker } from '../../src/worker/index.js';
import { workerSetup, type WorkerSetup } from '../helpers/worker.js';

let env: WorkerSetup;
beforeEach(() => {
  env = workerSetup('hostile');
});
afterEach(() => env.cleanup());

function payload(className: string, props: Record<string, unknown> = {}, options: PayloadOptions = {}): string {
  return buildPayload(buildJob({ className, properties: props, serializesModels: false }), options).raw;
}

/** Every odd value JavaScript lets a handler throw, by name. */
function oddThrowables(): [string, () => unknown][] {
  const cyclic = new Error('cyclic');
  cyclic.cause = cyclic;
  const badMessage = new Error('x');
  Object.defineProperty(badMessage, 'message', {
    get() {
      throw new Error('no message for you');
    },
  });
  const badStack = new Error('stackless');
  Object.defineProperty(badStack, 'stack', {
    get() {
      throw new Error('no stack');
    },
  });
  const trapAll = new Proxy(
    {},
    {
      get() {
        throw new Error('get trap');
      },
      has() {
        throw new Error('has trap');
      },
      getPrototypeOf() {
        throw new Error('prototype trap');
      },
      ownKeys() {
        throw new Error('ownKeys trap');
      },
      getOwnPropertyDescriptor() {
        throw new Error('descriptor trap');
      },
    },
  );
  const named = new Error('odd name');
  Object.defineProperty(named, 'name', { value: { not: 'a string' } });
  return [
    ['null', () => null],
    ['undefined', () => undefined],
    ['0', () => 0],
    ['an empty string', () => ''],
    ['a string', () => 'plain text'],
    ['a Symbol', () => Symbol('sym')],
    ['a bigint', () => 10n ** 30n],
    ['a function', () => function thrown() {}],
    ['an object with no prototype', () => Object.create(null)],
    [
      'an object whose toString throws',
      () => ({
        toString: () => {
          throw new Error('nope');
        },
      }),
    ],
    ['a Proxy whose every trap throws', () => trapAll],
    ['an Error whose message getter throws', () => badMessage],
    ['an Error whose stack getter throws', () => badStack],
    ['an Error that is its own cause', () => cyclic],
    ['an Error whose name is an object', () => named],
    ['an AggregateError', () => new AggregateError([new Error('a'), null], 'many')],
  ];
}

describe('any thrown value fails its job with a record, and the worker goes on', () => {
  it('from the handler and from its failed() hook alike', async () => {
    const cases = oddThrowables();
    const raws = cases.map(([label]) => payload('App\\Jobs\\Odd', { label }));
    await env.queue.bulkRaw([...raws, payload('App\\Jobs\\Last')]);
    const thrower = (label: unknown) => {
      throw cases.find(([name]) => name === label)![1]();
    };
    let lastRan = false;
    const odd = Object.assign(async (job: { command: Record<string, unknown> }) => thrower(job.command.label), {
      failed: async (job: { command: Record<string, unknown> }) => thrower(job.command.label),
    });
    const stop = await env
      .worker(
        { 'App\\Jobs\\Odd': odd, 'App\\Jobs\\Last': async () => void (lastRan = true) },
        {
          stopWhenEmpty: true,
          concurrency: 4,
        },
      )
      .run();
    expect(stop.reason).toBe('empty');
    expect(lastRan, 'the job after the odd ones ran').toBe(true);
    const records = new Map((await env.failer.all()).map((r) => [JSON.parse(r.payload).data.command as string, r]));
    for (const [i, [label]] of cases.entries()) {
      const command = JSON.parse(raws[i]!).data.command as string;
      const record = records.get(command);
      expect(record, `failed_jobs record for a handler throwing ${label}`).toBeDefined();
      // `Class: message`, or only `Class` for an empty one, as PHP writes it.
      expect(record!.exception, `exception text for ${label}`).toMatch(/^\S+(?:: [^]*)?\nStack trace:\n[^]*#\d+ \{main\}/);
    }
    expect(await env.queue.size(), 'jobs left in Redis').toBe(0);
    // Every hook's throw was said in one line, none took the worker down.
    expect(env.events.filter((e) => e.event === 'error' && e.error?.startsWith('failed() hook threw')).length).toBe(cases.length);
    expect(env.events.filter((e) => e.event === 'failed').length).toBe(cases.length);
  });

  it('a failed() hook that never settles is cut off at the job’s timeout, after the record is written', async () => {
    await env.queue.pushRaw(payload('App\\Jobs\\Stuck', {}, { timeout: 1 }));
    const stuck = Object.assign(
      async () => {
        throw new Error('handler failed');
      },
      { failed: () => new Promise(() => undefined) },
    );
    const stop = await env.worker({ 'App\\Jobs\\Stuck': stuck }, { stopWhenEmpty: true }).run();
    expect(stop.reason).toBe('empty');
    const [record] = await env.failer.all();
    expect(record?.exception, 'the record of the job whose hook hung').toMatch(/^Error: handler failed/);
    expect(await env.queue.size()).toBe(0);
    expect(env.events.find((e) => e.event === 'error')?.error).toBe(
      'failed() hook did not finish within 1 seconds; the failure is recorded',
    );
  });
});

describe('a failure is recorded before its job is deleted', () => {
  it('a failer that cannot write leaves the job reserved, to come back after retry_after, and says why', async () => {
    // A real MariaDB URL on a port nothing listens on: the record cannot be written.
    const failer = DatabaseUuidFailedJobProvider.fromUrl('mysql://root@127.0.0.1:1/test');
    const raw = payload('App\\Jobs\\Fails');
    await env.queue.pushRaw(raw);
    const events: string[] = [];
    const worker = new Worker(
      env.queue,
      {
        'App\\Jobs\\Fails': async () => {
          throw new Error('boom');
        },
      },
      { stopWhenEmpty: true, sleep: 0.05 },
      { failer, log: (e) => events.push(`${e.event}: ${e.error ?? ''}`) },
    );
    await worker.run();
    await failer.close();
    expect(await env.queue.reservedSize(), 'the job stays reserved').toBe(1);
    expect(events.find((e) => e.startsWith('error: could not record the failure'))).toMatch(/comes back after retry_after/);
    expect(events).not.toContain('failed: boom');
  });

  it('failing the same job twice (a worker killed between record and delete) keeps one record, the first', async () => {
    const raw = payload('App\\Jobs\\Twice');
    await env.failer.log('redis', 'default', raw, 'Error: first');
    await env.failer.log('redis', 'default', raw, 'Error: second');
    const records = await env.failer.all();
    expect(records.map((r) => r.exception)).toEqual(['Error: first']);
  });
});

describe('jobs judged before their command is read', () => {
  it('a payload Redis’s cjson cannot read (a lone surrogate) is failed with the reason, never looped on', async () => {
    const good = payload('App\\Jobs\\Surrogate', { text: 'x' });
    const poison = good.replace('"displayName"', '"lone":"\\ud800","displayName"');
    await env.queue.pushRaw(poison);
    let runs = 0;
    const stop = await env
      .worker(
        {
          'App\\Jobs\\Surrogate': async () => {
            runs++;
            throw new Error('never');
          },
        },
        { stopWhenEmpty: true, tries: 3 },
      )
      .run();
    expect(stop.reason).toBe('empty');
    expect(runs, 'handler runs of the unreadable job').toBe(0);
    const [record] = await env.failer.all();
    expect(record?.payload).toBe(poison);
    expect(record?.exception).toMatch(/UndecodableJobException: the job cannot be read: Redis’s cjson cannot read this payload/);
    expect(await env.queue.size()).toBe(0);
  });

  it('a job out of attempts is failed for that, its command never read (a broken one does not matter)', async () => {
    const broken = payload('App\\Jobs\\Poison', {}, { maxTries: 1 }).replace(/"command":"O:/, '"command":"O:999999999:');
    const envelope = JSON.parse(broken);
    envelope.attempts = 1; // its second attempt: one too many for maxTries 1
    await env.queue.pushRaw(JSON.stringify(envelope));
    const stop = await env.worker({ 'App\\Jobs\\Poison': async () => undefined }, { stopWhenEmpty: true }).run();
    expect(stop.reason).toBe('empty');
    const [record] = await env.failer.all();
    expect(record?.exception).toMatch(
      /^Illuminate\\Queue\\MaxAttemptsExceededException: App\\Jobs\\Poison has been attempted too many times/,
    );
    expect(await env.queue.size()).toBe(0);
  });

  it('a job out of attempts whose command reads still gets its failed() hook', async () => {
    const envelope = JSON.parse(payload('App\\Jobs\\Spent', { n: 7 }, { maxTries: 2 }));
    envelope.attempts = 2;
    await env.queue.pushRaw(JSON.stringify(envelope));
    const hooked: unknown[] = [];
    const spent = Object.assign(async () => undefined, {
      failed: async (job: { command: Record<string, unknown> }, error: unknown) => void hooked.push([job.command.n, (error as Error).name]),
    });
    await env.worker({ 'App\\Jobs\\Spent': spent }, { stopWhenEmpty: true }).run();
    expect(hooked).toEqual([[7, 'Illuminate\\Queue\\MaxAttemptsExceededException']]);
  });
});

describe('handler names are the module’s own', () => {
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    it(`a job of class ${name} finds no handler: failed, or left where it is under --share`, async () => {
      await env.queue.pushRaw(payload(name));
      await env.worker({}, { stopWhenEmpty: true }).run();
      const [record] = await env.failer.all();
      expect(record?.exception, `the record of job class ${name}`).toMatch(/NoHandlerException: no handler for/);

      await env.queue.pushRaw(payload(name));
      await env.worker({}, { stopWhenEmpty: true, share: true, shareDelay: 60 }).run();
      expect(
        [await env.queue.readySize(), await env.queue.delayedSize()],
        `job class ${name} not left on the list (ready, delayed) under --share`,
      ).toEqual([1, 0]);
      expect(
        env.events.filter((e) => e.event === 'processed'),
        `job class ${name} reported processed`,
      ).toEqual([]);
    });
  }
});

describe('reservations renewed while handlers run', () => {
  it('with retry_after 1 and 3-second jobs, each of 40 runs once, and the worker finishes', async () => {
    const queue = new (env.queue.constructor as typeof import('../../src/redis/index.js').RedisQueue)(env.client, { retryAfter: 1 });
    await queue.bulkRaw(Array.from({ length: 40 }, (_, n) => payload('App\\Jobs\\Long', { n })));
    const runs = new Map<number, number>();
    const worker = new Worker(
      queue,
      {
        'App\\Jobs\\Long': async (job) => {
          const n = Number(job.command.n);
          runs.set(n, (runs.get(n) ?? 0) + 1);
          await new Promise((resolve) => setTimeout(resolve, 3000));
        },
      },
      { concurrency: 20, stopWhenEmpty: true, sleep: 0.05, timeout: 10, memory: 0 },
      { failer: env.failer },
    );
    expect((await worker.run()).reason).toBe('empty');
    const twice = [...runs].filter(([, count]) => count !== 1).map(([n, count]) => `job ${n} ran ${count} times`);
    expect(twice).toEqual([]);
    expect(runs.size).toBe(40);
    expect(await queue.size()).toBe(0);
  }, 30_000);

  it('warns once at start when --timeout is not below retry_after', async () => {
    await env.worker({}, { stopWhenEmpty: true, timeout: 90 }).run();
    const warnings = env.events.filter((e) => e.event === 'warning');
    expect(warnings.map((w) => w.reason)).toEqual([expect.stringMatching(/^--timeout \(90 s\) is not below --retry-after \(90 s\)/)]);
  });
});
