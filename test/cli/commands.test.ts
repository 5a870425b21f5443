/**
 * The `lqb` commands as a user runs them, on real Redis and a SQLite failed_jobs file: what
 * they print, what they change, and their exit status (0, 1 with a reason, 2 for usage).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { php } from '../helpers/php.js';
import { HANDLERS, START_LINE_ONLY, UNSHAPED_ONLY, lqb, scratchPerTest } from '../helpers/processes.js';
import { prefixedClient, rawClient } from '../helpers/redis.js';
import { startRedisServer } from '../../src/testing/index.js';
import { Redis } from 'ioredis';

const current = scratchPerTest('cli');

const job = (n: number) =>
  buildPayload(buildJob({ className: 'App\\Jobs\\Bridge\\RecordJob', properties: { n, label: 'cli', ratio: 0.5, items: [] } })).raw;

describe('lqb dispatch --laravel=13', () => {
  it('writes 13.x’s envelope (deleteWhenMissingModels after retryUntil, createdAt, delay, data.batchId)', async () => {
    const dispatched = await lqb(['dispatch', 'App\\Jobs\\X', '--props={"n":1}', '--laravel=13.26.1', '--delay=5'], current.s.env);
    expect(dispatched.stderr, 'what lqb dispatch App\\Jobs\\X said on standard error').toBe(UNSHAPED_ONLY('App\\Jobs\\X'));
    const raw = rawClient();
    const [payload] = await raw.zrange(`${current.prefix}queues:default:delayed`, 0, -1);
    raw.disconnect();
    const envelope = JSON.parse(payload!);
    expect(Object.keys(envelope)).toEqual([
      'uuid',
      'displayName',
      'job',
      'maxTries',
      'maxExceptions',
      'failOnTimeout',
      'backoff',
      'timeout',
      'retryUntil',
      'deleteWhenMissingModels',
      'data',
      'createdAt',
      'id',
      'attempts',
      'delay',
    ]);
    expect(envelope).toMatchObject({ deleteWhenMissingModels: false, delay: 5, data: { batchId: null } });
    // As make:job writes it (SerializesModels): Queueable's properties that hold their defaults are left out.
    expect(envelope.data.command).toBe('O:10:"App\\Jobs\\X":2:{s:1:"n";i:1;s:5:"delay";i:5;}');
  });
});

describe('lqb dispatch --props', () => {
  it('turns each JSON number into what PHP’s json_decode then serialize() write', async () => {
    const numbers = [
      '1.0',
      '1e2',
      '1e-7',
      '1.5e300',
      '123456789012345678.5',
      '-0.0',
      '-0',
      '0.1',
      '2.5E-5',
      '9223372036854775807',
      '9223372036854775808',
      '-9223372036854775809',
      '123456789012345678901234567890',
    ];
    const props = `{${numbers.map((n, i) => `"p${i}":${n}`).join(',')}}`;
    const phpBytes = php(`echo serialize(json_decode(${JSON.stringify(props)}, true));`).toString('latin1');
    const dispatched = await lqb(['dispatch', 'App\\Jobs\\X', `--props=${props}`], current.s.env);
    expect(dispatched.stderr, 'what lqb dispatch App\\Jobs\\X said on standard error').toBe(UNSHAPED_ONLY('App\\Jobs\\X'));
    const raw = rawClient();
    const [payload] = await raw.lrange(`${current.prefix}queues:default`, 0, -1);
    raw.disconnect();
    const command = JSON.parse(payload!).data.command as string;
    // Each property as PHP writes it in an array: the command's own properties come first, in order.
    const ours = numbers.map((_, i) => command.match(new RegExp(`s:${`p${i}`.length}:"p${i}";([^;]*;)`))![1]);
    const theirs = numbers.map((_, i) => phpBytes.match(new RegExp(`s:${`p${i}`.length}:"p${i}";([^;]*;)`))![1]);
    expect(ours).toEqual(theirs);
  });
});

describe('lqb size and clear', () => {
  it('count ready, delayed and reserved jobs, and clear a queue', async () => {
    const client = prefixedClient(current.prefix);
    const queue = new RedisQueue(client, { defaultQueue: 'mail' });
    await queue.bulkRaw([job(1), job(2)]);
    await queue.laterRaw(60, job(3));
    await queue.pop();
    client.disconnect();
    expect((await lqb(['size', '--queue=mail'], current.s.env)).stdout.trim()).toBe('mail  3');
    expect((await lqb(['size', '--queue=mail,notifications'], current.s.env)).stdout, 'sizes beside their queue names').toBe(
      'mail           3\nnotifications  0\n',
    );
    const size = await lqb(['size', '--queue=mail,other', '--json'], current.s.env);
    expect(
      size.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { queue: 'mail', size: 3, ready: 1, delayed: 1, reserved: 1 },
      { queue: 'other', size: 0, ready: 0, delayed: 0, reserved: 0 },
    ]);
    expect((await lqb(['clear', '--queue=mail'], current.s.env)).stdout.trim()).toBe('Cleared 3 jobs from the [mail] queue');
    // queue:clear's own command line: a connection name and --force.
    expect((await lqb(['clear', 'redis', '--force', '--queue=mail'], current.s.env)).stdout.trim()).toBe(
      'Cleared 0 jobs from the [mail] queue',
    );
    expect((await lqb(['size', '--queue=mail'], current.s.env)).stdout.trim()).toBe('mail  0');
  });
});

describe('lqb failed, forget and flush', () => {
  it('list, forget one, flush the rest', async () => {
    const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
    const ids = [job(1), job(2), job(3)];
    const uuids: string[] = [];
    for (const payload of ids) uuids.push(await failer.log('redis', 'default', payload, 'Error: x'));
    await failer.close();
    const table = await lqb(['failed'], current.s.env);
    expect(table.stdout).toMatch(/\| ID +\| Connection \| Queue +\| Class +\| Failed At +\|/);
    expect(table.stdout).toContain('App\\Jobs\\Bridge\\RecordJob');
    expect(
      (await lqb(['failed', '--json'], current.s.env)).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual([...uuids].reverse());
    expect((await lqb(['forget', uuids[0]!], current.s.env)).stdout.trim()).toBe('Failed job deleted successfully!');
    const again = await lqb(['forget', uuids[0]!], current.s.env);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/No failed job matches/);
    // The wording is artisan's, checked against Laravel's own commands in failed.test.ts.
    expect((await lqb(['flush'], current.s.env)).status).toBe(0);
    expect((await lqb(['failed', '--json'], current.s.env)).stdout.trim()).toBe('');
  });

  it('retry of an unknown id, or of a queue with no failed jobs, exits 1 and says which', async () => {
    const result = await lqb(['retry', 'no-such-id'], current.s.env);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/Unable to find failed job with ID \[no-such-id\]/);
    const byQueue = await lqb(['retry', '--queue=nothing-failed-here'], current.s.env);
    expect(byQueue.status).toBe(1);
    expect(byQueue.stderr).toMatch(/Unable to find failed jobs for queue \[nothing-failed-here\]/);
  });
});

describe('lqb work --json', () => {
  it('prints one JSON object per event', async () => {
    const client = prefixedClient(current.prefix);
    await new RedisQueue(client).pushRaw(job(1));
    client.disconnect();
    const result = await lqb(['work', `--handlers=${HANDLERS}`, '--stop-when-empty', '--sleep=0', '--json'], current.s.env);
    // The start line of a worker without shapes (unique locks of uniqueId() methods cannot be known) aside.
    const events = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => !String(e.reason ?? '').startsWith('without class shapes'));
    expect(events.map((e) => e.event)).toEqual(['processing', 'processed', 'stopping']);
    expect(events[1]).toMatchObject({ job: 'App\\Jobs\\Bridge\\RecordJob', queue: 'default', attempts: 1 });
    expect(events[1].durationMs).toBeGreaterThanOrEqual(0);
  });
});

describe('usage and failures', () => {
  it.each([
    [['nope'], /unknown command "nope"/],
    [['work'], /--handlers=FILE is required/],
    [['work', `--handlers=${HANDLERS}`, '--tries=x'], /--tries must be a number/],
    [['dispatch'], /dispatch takes one job CLASS/],
    [['dispatch', 'App\\Jobs\\X', '--props=[1]'], /--props must be a JSON object/],
    [['dispatch', 'App\\Jobs\\X', '--laravel=4'], /--laravel must be one of/],
    // Queueable's own properties: never a value silently replaced by the trait's, or a queue the push ignores.
    [
      ['dispatch', 'App\\Jobs\\X', '--props={"n":1,"queue":"emails"}'],
      /--props: App\\Jobs\\X: \$queue is Laravel's Queueable .*; use --queue/,
    ],
    [['dispatch', 'App\\Jobs\\X', '--props={"delay":5}'], /\$delay is Laravel's Queueable .*; use --delay/],
    [['dispatch', 'App\\Jobs\\X', '--props={"job":1}'], /\$job is Laravel's Queueable .*; leave it out/],
    [['forget'], /forget takes one failed job ID/],
    // Counts and whole seconds take no fractions (a job with maxTries 2.5 is no job PHP writes).
    ...['tries', 'timeout', 'max-jobs', 'memory', 'concurrency'].map(
      (flag) => [['work', `--handlers=${HANDLERS}`, `--${flag}=2.5`], new RegExp(`--${flag} must be a whole number`)] as [string[], RegExp],
    ),
    [['dispatch', 'App\\Jobs\\X', '--tries=2.5'], /--tries must be a whole number/],
    [['dispatch', 'App\\Jobs\\X', '--timeout=0.5'], /--timeout must be a whole number/],
    [['work', `--handlers=${HANDLERS}`, '--no-such-flag'], /Unknown option '--no-such-flag'/],
    // As artisan's "Too many arguments": `lqb flush 48` must not flush everything.
    ...['flush', 'failed', 'size', 'restart'].map((command) => [[command, 'extra'], /Unexpected argument 'extra'/] as [string[], RegExp]),
    [['help', 'bogus'], /unknown command "bogus"/],
    [['size', '--redis=notaurl'], /"notaurl" is not a redis:\/\/ or rediss:\/\/ URL/],
    [['restart', '--redis=http://x'], /"http:\/\/x" is not a redis:\/\//],
    // Redis numbers its databases: /abc is refused before anything runs, not an unhandled SELECT NaN.
    [['size', '--redis=redis://127.0.0.1:6379/abc'], /the database of "redis:\/\/127.0.0.1:6379\/abc" must be a whole number, not "abc"/],
    [['restart', '--cache-db=abc'], /the cache database \(--cache-db, REDIS_CACHE_DB\) must be a whole number, not "abc"/],
  ])('%j exits 2 with the reason, on one line', async (args, reason) => {
    const result = await lqb(args, current.s.env);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(reason);
    expect(result.stderr).toMatch(/^[^\n]+\n$/);
  });

  it('--help, -h and lqb help COMMAND print the usage and exit 0; --version names the package', async () => {
    for (const args of [
      ['work', '--help'],
      ['work', '-h'],
      ['help', 'work'],
    ]) {
      const result = await lqb(args, current.s.env);
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(/^usage: lqb work \[CONNECTION\] --handlers=FILE .*\[--concurrency=N\]/);
      expect(result.stdout).toMatch(/\n {2}--concurrency=N +jobs run at once in this process \[default: 1\]\n/);
    }
    const overview = await lqb(['--help'], current.s.env);
    expect(overview.status).toBe(0);
    expect(overview.stdout).toMatch(
      /commands: work, dispatch, decode, find, size, clear, restart, pause, resume, failed, retry, forget, flush, cancel, fixtures, check, port, record, ui, shapes, horizon:snapshot, demo/,
    );
    const version = await lqb(['--version'], current.s.env);
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(version.stdout.trim()).toBe(`laravel-queue-bridge ${manifest.version}`);
  });

  it("takes queue:work's command line: the connection name goes into failed_jobs, --delay is the backoff", async () => {
    const client = prefixedClient(current.prefix);
    const queue = new RedisQueue(client, { defaultQueue: 'default' });
    const failing = buildPayload(buildJob({ className: 'App\\Jobs\\Bridge\\FailingJob', properties: { n: 1, message: 'no' } })).raw;
    await queue.pushRaw(failing);
    const ran = await lqb(
      ['work', 'redis-long', `--handlers=${HANDLERS}`, '--name=worker-1', '--force', '--daemon', '--stop-when-empty', '--sleep=0'],
      current.s.env,
    );
    expect(ran.status).toBe(0);
    // A job's lines carry its id as artisan prints them; the worker's own line has none.
    expect(ran.stdout).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]\[\w+\] Processing: App\\Jobs\\Bridge\\FailingJob$/m);
    expect(ran.stdout).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] Stopping: +empty$/m);
    const [record] = (await lqb(['failed', '--json'], current.s.env)).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { connection: string });
    expect(record!.connection).toBe('redis-long');

    const flaky = buildPayload(buildJob({ className: 'App\\Jobs\\Bridge\\FlakyJob', properties: { n: 2, failTimes: 1 } }), {
      maxTries: 3,
    }).raw;
    await queue.pushRaw(flaky);
    const before = Date.now() / 1000;
    expect((await lqb(['work', `--handlers=${HANDLERS}`, '--delay=30', '--once'], current.s.env)).status).toBe(0);
    const [, score] = await client.zrange('queues:default:delayed', 0, -1, 'WITHSCORES');
    expect(Number(score) - before).toBeGreaterThanOrEqual(29);
    expect(Number(score) - before).toBeLessThan(40);
    client.disconnect();
  });

  it('--quiet says no line per job, but still a job that failed (as queue:work --quiet runs, errors kept)', async () => {
    const client = prefixedClient(current.prefix);
    const queue = new RedisQueue(client, { defaultQueue: 'default' });
    const job = (className: string, properties: Record<string, unknown>) => buildPayload(buildJob({ className, properties })).raw;
    await queue.pushRaw(job('App\\Jobs\\Bridge\\RecordJob', { n: 1, label: 'quiet' }));
    await queue.pushRaw(job('App\\Jobs\\Bridge\\FailingJob', { n: 2, message: 'said even when quiet' }));
    const ran = await lqb(['work', `--handlers=${HANDLERS}`, '--quiet', '--stop-when-empty', '--sleep=0'], current.s.env);
    expect(ran.status, `lqb work --quiet: exit status (stderr: ${ran.stderr})`).toBe(0);
    expect(await queue.size(), 'jobs left on the queue').toBe(0);
    const lines = ran.stdout.trim().split('\n');
    const progress = lines.filter((line) => /\] (Processing|Processed):/.test(line));
    expect(progress, 'no Processing or Processed line').toEqual([]);
    const failed = lines.filter((line) => / Failed: /.test(line));
    expect(failed, `the failed job's line, in ${ran.stdout}`).toHaveLength(1);
    expect(failed[0], "the failed job's line").toMatch(
      /^\[[^\]]+\]\[\w+\] Failed: +App\\Jobs\\Bridge\\FailingJob \([\d.]+ms\): said even when quiet$/,
    );
    expect(ran.stderr, 'stderr: the start line').toMatch(START_LINE_ONLY);
    client.disconnect();
  });

  it('an empty --queue is no --queue; --backoff and --delay together take the larger, as artisan does', async () => {
    const client = prefixedClient(current.prefix);
    const queue = new RedisQueue(client, { defaultQueue: 'default' });
    await queue.pushRaw(job(1));
    // `--queue=$QUEUES` that expanded to nothing: artisan falls back to the connection's queue.
    expect((await lqb(['size', '--queue='], current.s.env)).stdout.trim()).toBe('default  1');
    expect((await lqb(['clear', '--queue='], current.s.env)).stdout.trim()).toBe('Cleared 1 jobs from the [default] queue');
    const flaky = buildPayload(buildJob({ className: 'App\\Jobs\\Bridge\\FlakyJob', properties: { n: 2, failTimes: 1 } }), {
      maxTries: 3,
    }).raw;
    await queue.pushRaw(flaky);
    const before = Date.now() / 1000;
    expect((await lqb(['work', `--handlers=${HANDLERS}`, '--backoff=0', '--delay=30', '--once', '--queue='], current.s.env)).status).toBe(
      0,
    );
    const [, score] = await client.zrange('queues:default:delayed', 0, -1, 'WITHSCORES');
    expect(Number(score) - before).toBeGreaterThanOrEqual(29);
    client.disconnect();
    const badDelay = await lqb(['work', `--handlers=${HANDLERS}`, '--delay=abc', '--once'], current.s.env);
    expect(badDelay.stderr).toMatch(/--delay\[0\] must be/);
  });

  it('a dispatch Redis does not take is reported, exit 1, never silently dropped', async () => {
    const result = await lqb(['dispatch', 'App\\Jobs\\X', '--redis=redis://127.0.0.1:1'], current.s.env, { timeoutMs: 30_000 });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/the job was not pushed: Redis at redis:\/\/127\.0\.0\.1:1 did not take it/);
  });
});

describe('lqb demo', () => {
  it('runs both directions against real Laravel and leaves no key of its prefix in Redis', async () => {
    // The keys the demo writes are seen while it runs, so the check after it ends is not of nothing.
    const seen = new Set<string>();
    const watcher = rawClient();
    let running = true;
    const watching = (async () => {
      while (running) {
        for (const key of await watcher.keys('lqb-demo-*')) seen.add(key);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const result = await lqb(['demo', '--jobs=2'], current.s.env, { timeoutMs: 60_000 });
    running = false;
    await watching;
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Node handler: App\\Jobs\\Bridge\\RecordJob n=2/);
    expect(result.stdout).toMatch(/PHP handle\(\): n=102 \(int\) ratio=2 \(float\)/);
    expect(result.stdout).toMatch(/Done: 0 jobs left on the queue, 0 failed\./);
    const prefix = /keys under (lqb-demo-[0-9a-f]+:)/.exec(result.stdout)?.[1];
    expect(prefix, `the demo names its key prefix: ${result.stdout.split('\n')[0]}`).toBeDefined();
    expect(
      [...seen].some((key) => key.startsWith(prefix!)),
      `no key under ${prefix} was seen while the demo ran`,
    ).toBe(true);
    const left = await watcher.keys(`${prefix}*`);
    watcher.disconnect();
    expect(left, `keys the demo left under ${prefix}`).toEqual([]);
  });
});

describe('lqb demo --redis', () => {
  it('runs against the Redis it is given (password, database): both sides use it, and it is left clean', async () => {
    const server = await startRedisServer();
    // A server of this test's own, so its password may be set.
    const admin = new Redis(server.port, '127.0.0.1');
    await admin.config('SET', 'requirepass', 'demo-secret');
    admin.disconnect();
    const url = `redis://:demo-secret@127.0.0.1:${server.port}/3`;
    const watcher = new Redis(url);
    const seen = new Set<string>();
    let running = true;
    const watching = (async () => {
      while (running) {
        for (const key of await watcher.keys('lqb-demo-*')) seen.add(key);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      const result = await lqb(['demo', '--jobs=1', `--redis=${url}`], current.s.env, { timeoutMs: 60_000 });
      running = false;
      await watching;
      expect(result.stderr, 'what lqb demo --redis said on stderr').toBe('');
      expect(result.stdout.split('\n')[0]).toMatch(
        new RegExp(`^Using Redis at 127\\.0\\.0\\.1:${server.port}/3, keys under lqb-demo-[0-9a-f]+:$`),
      );
      expect(result.stdout, "the password in the demo's output").not.toContain('demo-secret');
      expect(result.stdout).toMatch(/PHP handle\(\): n=101 \(int\)/);
      expect(result.stdout).toMatch(/Done: 0 jobs left on the queue, 0 failed\./);
      const prefix = /keys under (lqb-demo-[0-9a-f]+:)/.exec(result.stdout)![1]!;
      // Laravel's side wrote to database 3 of the given server too: its queue keys were seen there.
      expect(
        [...seen].filter((key) => key.startsWith(`${prefix}queues:`)).length,
        `keys under ${prefix} seen in database 3`,
      ).toBeGreaterThan(0);
      expect(await watcher.keys(`${prefix}*`), 'keys the demo left').toEqual([]);
    } finally {
      running = false;
      watcher.disconnect();
      server.stop();
    }
  });

  it('refuses a --redis that is not a redis:// URL, naming it (exit 2)', async () => {
    const result = await lqb(['demo', '--redis=rediss://127.0.0.1:6380'], current.s.env);
    expect(result.stderr).toBe(
      'lqb demo: --redis must be a redis://host:port URL (the demo\'s PHP side speaks plain Redis), not "rediss://127.0.0.1:6380" (lqb demo --help for usage)\n',
    );
    expect(result.status).toBe(2);
  });
});

describe('a mistyped flag or command', () => {
  it.each([
    [['size', '--queu=mail'], "lqb size: Unknown option '--queu'; did you mean --queue? (lqb size --help for usage)\n"],
    [['work', '--handler=x.mjs'], "lqb work: Unknown option '--handler'; did you mean --handlers? (lqb work --help for usage)\n"],
    [
      ['work', '--stop-when-emtpy'],
      "lqb work: Unknown option '--stop-when-emtpy'; did you mean --stop-when-empty? (lqb work --help for usage)\n",
    ],
    [['size', '--zzz'], "lqb size: Unknown option '--zzz' (lqb size --help for usage)\n"],
  ])('lqb %j names the nearest flag the command takes, exit 2', async (args, stderr) => {
    const result = await lqb(args, current.s.env);
    expect(result.stderr).toBe(stderr);
    expect(result.status).toBe(2);
  });

  it('lqb sise names the nearest command', async () => {
    const result = await lqb(['sise'], current.s.env);
    expect(result.stderr).toMatch(/^lqb: unknown command "sise"; did you mean "size"\? \(commands: work, /);
    expect(result.status).toBe(2);
  });
});
