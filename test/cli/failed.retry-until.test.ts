/**
 * `lqb retry` of jobs with a retryUntil, beside Laravel 8.83's own `queue:retry`
 * (php-fixture-gen/laravel-failed.php) on the same failed_jobs table. Laravel dispatches the
 * jobs (guards-dispatch.php: WindowJob has a retryUntil() method, WindowPropJob a $retryUntil
 * property); their payloads are recorded as failed; each side retries them; Laravel's worker
 * then runs what was pushed back.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { HorizonRecorder } from '../../src/horizon/index.js';
import type { ShapesFile } from '../../src/shapes/shape.js';
import { lqb, php, scratchPerTest } from '../helpers/processes.js';
import { rawClient } from '../helpers/redis.js';

const current = scratchPerTest('retry-until');
const WINDOW = 'App\\Jobs\\Bridge\\WindowJob';
const PROP = 'App\\Jobs\\Bridge\\WindowPropJob';

/** Laravel dispatches one job of `kind`; its payload, taken off the queue, is recorded as failed. */
async function failedFromLaravel(kind: string, options: object = {}): Promise<{ uuid: string; payload: string }> {
  const result = await php('guards-dispatch.php', [kind, JSON.stringify(options)], current.s.env);
  expect(result.status, result.stderr).toBe(0);
  const raw = rawClient();
  const payload = (await raw.lpop(`${current.prefix}queues:default`))!;
  raw.disconnect();
  await logFailed(payload);
  return { uuid: JSON.parse(payload).uuid, payload };
}

async function logFailed(payload: string): Promise<void> {
  const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
  await failer.log('redis', 'default', payload, 'Exception: failed');
  await failer.close();
}

async function failedIds(): Promise<string[]> {
  const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
  const ids = (await failer.all()).map((job) => job.uuid);
  await failer.close();
  return ids;
}

/** The payloads on the queue, taken off it. */
async function pushed(): Promise<Record<string, any>[]> {
  const raw = rawClient();
  const key = `${current.prefix}queues:default`;
  const all = await raw.lrange(key, 0, -1);
  await raw.del(key);
  raw.disconnect();
  return all.map((payload) => JSON.parse(payload));
}

/** A shapes file as `lqb shapes` writes it, for the two classes. */
function shapesFile(): string {
  const shape = (name: string, methods: string[]) => ({
    name,
    kind: 'job',
    parent: null,
    interfaces: ['Illuminate\\Contracts\\Queue\\ShouldQueue'],
    traits: [],
    serializer: 'SerializesModels',
    properties: [],
    declared: {},
    methods,
  });
  const shapes: ShapesFile = {
    version: 1,
    laravel: '8.83.26',
    php: '8.2',
    classes: { [WINDOW]: shape(WINDOW, ['retryUntil']) as never, [PROP]: shape(PROP, []) as never },
  };
  const file = join(current.s.dir, 'lqb-shapes.json');
  writeFileSync(file, JSON.stringify(shapes));
  return file;
}

const now = () => Math.floor(Date.now() / 1000);

/**
 * What `act` pushes back, with the window it should carry: `seconds` past the clock as it read
 * while `act` ran. The clock is read just before and just after, so the window is checked against
 * the moment of that push, however long a busy machine takes over it.
 */
async function windowBracketed<T>(act: () => Promise<T>): Promise<{ result: T; earliest: number; latest: number }> {
  const before = now();
  const result = await act();
  return { result, earliest: before, latest: now() };
}

/** Checks a pushed window against the clock bracketing its push, naming the push when it is outside. */
function expectWindow(retryUntil: number, seconds: number, push: { earliest: number; latest: number }, what: string): void {
  const [low, high] = [push.earliest + seconds, push.latest + seconds];
  expect(
    retryUntil >= low && retryUntil <= high,
    `${what}: retryUntil ${retryUntil} should be ${seconds} s past the push, within [${low}, ${high}]`,
  ).toBe(true);
}
const withoutWindow = ({ retryUntil: _, ...rest }: Record<string, any>) => rest;

describe('lqb retry of a job whose class has a retryUntil() method', () => {
  it('refuses without --retry-until, naming why; with it, pushes what queue:retry pushes, a fresh window Laravel’s worker honours', async () => {
    const dispatch = await windowBracketed(() => failedFromLaravel('window'));
    const job = dispatch.result;
    // guards-dispatch.php's WindowJob::retryUntil() gives the dispatch's second + 1.
    expectWindow(JSON.parse(job.payload).retryUntil, 1, dispatch, 'the window Laravel dispatched the job with');
    const shapes = shapesFile();

    // Laravel's queue:retry: the method, called again, gives now + 30.
    const artisan = await windowBracketed(() =>
      php('laravel-failed.php', ['retry', job.uuid], { ...current.s.env, LQB_RETRY_WINDOW: '30' }),
    );
    expect(artisan.result.status, artisan.result.stderr).toBe(0);
    const [fromLaravel] = await pushed();
    expectWindow(fromLaravel!.retryUntil, 30, artisan, 'queue:retry’s fresh window');

    await logFailed(job.payload);
    const refused = await lqb(['retry', job.uuid, `--shapes=${shapes}`], current.s.env);
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([
      `The failed job [${job.uuid}] was not retried: ${WINDOW} has a retryUntil() method, which queue:retry calls for a fresh window and Node cannot; say the new window with --retry-until=SECONDS, or --retry-until=none or keep.`,
    ]);
    expect(await pushed()).toEqual([]);
    expect(await failedIds()).toEqual([job.uuid]);

    const retried = await windowBracketed(() => lqb(['retry', job.uuid, '--retry-until=30'], { ...current.s.env, LQB_SHAPES: shapes }));
    expect(retried.result.status, retried.result.stderr).toBe(0);
    const [fromNode] = await pushed();
    expect(withoutWindow(fromNode!), 'lqb retry’s push, its window aside, as queue:retry’s').toEqual(withoutWindow(fromLaravel!));
    // The same rule as queue:retry's: 30 s past its own push (the two pushes are apart in time).
    expectWindow(fromNode!.retryUntil, 30, retried, 'lqb retry --retry-until=30’s fresh window');
    expect(await failedIds()).toEqual([]);

    // Laravel's worker runs the job Node pushed back, within its new window.
    const raw = rawClient();
    await raw.rpush(`${current.prefix}queues:default`, JSON.stringify(fromNode));
    raw.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 1500)); // past the window the job was dispatched with
    const worker = await php('laravel-worker.php', ['--once'], current.s.env);
    expect(worker.status, worker.stderr).toBe(0);
    expect(current.s.phpRuns().map((run) => `${run.class} ${run.props.n} attempt ${run.attempts}`)).toEqual([`${WINDOW} 1 attempt 1`]);
    expect(await failedIds()).toEqual([]);
  });

  it('--retry-until=keep pushes the closed window back, which Laravel’s worker fails at once; none takes the window away', async () => {
    const job = await failedFromLaravel('window');
    // The window is the dispatch's whole second + 1, and Laravel fails only once it is past: 2.1 s
    // after the dispatch it is, whatever fraction of a second the dispatch fell in.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const kept = await lqb(['retry', job.uuid, '--retry-until=keep'], current.s.env);
    expect(kept.status, kept.stderr).toBe(0);
    const [fromNode] = await pushed();
    expect(fromNode!.retryUntil).toBe(JSON.parse(job.payload).retryUntil);
    const raw = rawClient();
    await raw.rpush(`${current.prefix}queues:default`, JSON.stringify(fromNode));
    raw.disconnect();
    const worker = await php('laravel-worker.php', ['--once'], current.s.env);
    expect(worker.stdout).toMatch(/Failed: +App\\Jobs\\Bridge\\WindowJob/);
    expect(current.s.phpRuns()).toEqual([]);

    const again = await failedFromLaravel('window', { n: 2 });
    const none = await lqb(['retry', again.uuid, '--retry-until=none', `--shapes=${shapesFile()}`], current.s.env);
    expect(none.status, none.stderr).toBe(0);
    expect((await pushed()).map((payload) => payload.retryUntil)).toEqual([null]);
  });
});

describe('lqb retry of a job whose retryUntil is a $retryUntil property', () => {
  it('keeps it, as queue:retry does, whatever --retry-until says, when the shapes say there is no method', async () => {
    const job = await failedFromLaravel('window-prop', { retryUntil: 5 });
    const artisan = await php('laravel-failed.php', ['retry', job.uuid], current.s.env);
    expect(artisan.status, artisan.stderr).toBe(0);
    const [fromLaravel] = await pushed();
    expect(fromLaravel!.retryUntil).toBe(5);

    await logFailed(job.payload);
    const retried = await lqb(['retry', job.uuid, '--retry-until=30', `--shapes=${shapesFile()}`], current.s.env);
    expect(retried.status, retried.stderr).toBe(0);
    expect(await pushed()).toEqual([fromLaravel]);
  });

  it('without shapes, cannot tell a property from a method, and says so', async () => {
    const job = await failedFromLaravel('window-prop', { retryUntil: 5 });
    const refused = await lqb(['retry', 'all'], current.s.env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(
      `The failed job [${job.uuid}] was not retried: its retryUntil may come from a retryUntil() method of ${PROP}, which queue:retry calls for a fresh window and Node cannot (give --shapes to tell)`,
    );
    expect(await failedIds()).toEqual([job.uuid]);
  });

  it('a bad --retry-until or shapes file is a usage error', async () => {
    const bad = await lqb(['retry', 'all', '--retry-until=soon'], current.s.env);
    expect([bad.status, bad.stderr.trim()]).toEqual([
      2,
      expect.stringContaining('--retry-until must be a whole number of seconds, none or keep; got "soon"'),
    ]);
    const missing = await lqb(['retry', 'all', `--shapes=${join(current.s.dir, 'nope.json')}`], current.s.env);
    expect([missing.status, missing.stderr]).toEqual([2, expect.stringContaining('--shapes: ')]);
    writeFileSync(join(current.s.dir, 'v2.json'), '{"version":2,"laravel":null,"php":"8.2","classes":{}}');
    const wrong = await lqb(['retry', 'all'], { ...current.s.env, LQB_SHAPES: join(current.s.dir, 'v2.json') });
    expect([wrong.status, wrong.stderr]).toEqual([2, expect.stringContaining('LQB_SHAPES: ')]);
    expect(wrong.stderr).toContain('/version');
  });
});

describe('lqb retry --horizon of a job Horizon holds a failed record of', () => {
  it('moves the window as Horizon’s Retry does, refusing nothing; --retry-until says a new one in its place', async () => {
    const hz = `${current.prefix}hz:`;
    const job = await failedFromLaravel('window');
    const closed = Number(JSON.parse(job.payload).retryUntil);
    // Horizon's failed record, as a worker under Horizon writes it: the payload as Horizon's queue
    // laid it out, pushed a minute before its window closed.
    const client = rawClient();
    try {
      const recorder = new HorizonRecorder(client, { prefix: hz, clock: () => closed - 60 });
      await recorder.failed('default', recorder.prepare(job.payload), 'Exception: failed');
    } finally {
      client.disconnect();
    }
    const horizon = ['--horizon', `--horizon-prefix=${hz}`];

    const shapes = shapesFile();
    const moved = await windowBracketed(() => lqb(['retry', job.uuid, `--shapes=${shapes}`, ...horizon], current.s.env));
    expect(moved.result.status, moved.result.stderr).toBe(0);
    const [first] = await pushed();
    expect(first!.retry_of, 'a Horizon retry').toBe(job.uuid);
    expectWindow(first!.retryUntil, 60, moved, 'the window, moved: the retry’s time plus what it was past the push');
    expect(await failedIds()).toEqual([]);

    await logFailed(job.payload);
    const chosen = await windowBracketed(() => lqb(['retry', job.uuid, '--retry-until=30', ...horizon], current.s.env));
    expect(chosen.result.status, chosen.result.stderr).toBe(0);
    const [second] = await pushed();
    expect(second!.retry_of).toBe(job.uuid);
    expectWindow(second!.retryUntil, 30, chosen, 'the window --retry-until says');

    const entries = await withRawClient(async (raw) => JSON.parse((await raw.hget(hz + job.uuid, 'retried_by'))!) as { id: string }[]);
    expect(
      entries.map((entry) => entry.id),
      'retried_by: both retries, in order',
    ).toEqual([first!.uuid, second!.uuid]);
  });
});

async function withRawClient<T>(use: (raw: ReturnType<typeof rawClient>) => Promise<T>): Promise<T> {
  const raw = rawClient();
  try {
    return await use(raw);
  } finally {
    raw.disconnect();
  }
}
