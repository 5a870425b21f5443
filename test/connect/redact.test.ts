/**
 * No password and no APP_KEY printed, by any command, on any path: a push Redis refuses (wrong
 * password, an ACL user without the right), a Redis that is down, a usage error for a bad URL, a
 * .env's REDIS_PASSWORD and DB_PASSWORD, a failed-jobs database URL, the worker's log and its
 * --json lines. Runs the built `lqb` against a redis-server of its own that has a password.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepSecret, redactSecrets, redactUrl } from '../../src/connect/redact.js';
import { freePort } from '../../src/testing/index.js';
import { HANDLERS, UNSHAPED_ONLY, lqb, scratchPerTest, type RunResult } from '../helpers/processes.js';
import { root } from '../helpers/php.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis.js';

const PASSWORD = 'Pa55-w0rd!secret';
const USER_PASSWORD = 'pusher-Secret-9';
const WRONG_PASSWORD = 'wrong-Secret-1';
const DB_PASSWORD = 'db-Secret-77';
const APP_KEY = `base64:${Buffer.alloc(32, 7).toString('base64')}`;
const SECRETS = [PASSWORD, encodeURIComponent(PASSWORD), USER_PASSWORD, WRONG_PASSWORD, DB_PASSWORD, APP_KEY, APP_KEY.slice(7)];

const current = scratchPerTest('redact');
let server: OwnRedis;
let closedPort: number;

beforeAll(async () => {
  // A password for the default user; `pusher` may do anything but run scripts, which every push does.
  server = await startOwnRedis(['--requirepass', PASSWORD, '--user', 'pusher', 'on', `>${USER_PASSWORD}`, '~*', '+@all', '-@scripting']);
  closedPort = await freePort();
});
afterAll(() => server?.stop());

/** The run printed none of the secrets, on either stream; the failing check names which and where. */
/**
 * `lqb work` run until its standard output has a line matching `line` (or a generous deadline
 * passes), then stopped; what it printed, both streams, is returned. A busy machine may take
 * seconds to start it: the test waits on the line, not on a clock.
 */
function workUntilPrinted(args: string[], env: NodeJS.ProcessEnv, line: RegExp, ms = 60_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', [join(root, 'dist/cli/main.js'), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const stop = () => child.kill('SIGTERM');
    const deadline = setTimeout(stop, ms);
    child.stdout.on('data', (d) => {
      stdout += d;
      if (line.test(stdout)) stop();
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(deadline);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

function expectNoSecret(result: RunResult, what: string): void {
  for (const [stream, text] of [
    ['stdout', result.stdout],
    ['stderr', result.stderr],
  ] as const) {
    for (const secret of SECRETS)
      expect(text.includes(secret), `${what}: ${stream} shows the secret ${JSON.stringify(secret)}: ${text}`).toBe(false);
  }
}

/** A failure said in one line on standard error, with the given status. */
function expectOneLineFailure(result: RunResult, status: number, what: string): void {
  expect(result.status, `${what}: exit status (stderr: ${result.stderr})`).toBe(status);
  expect(result.stderr.trim().split('\n'), `${what}: stderr is one line`).toHaveLength(1);
}

describe('redactSecrets', () => {
  it('hides a secret kept after lines were already redacted, longest first, in lines with no URL', () => {
    keepSecret('kept-first-secret');
    expect(redactSecrets('job failed: kept-first-secret leaked')).toBe('job failed: *** leaked');
    // Kept later: the order the secrets are applied in is made again, so the longer one is hidden whole.
    keepSecret('kept-first-secret-and-more');
    expect(redactSecrets('[2026-11-26 10:00:00][abc] Failed:     X: kept-first-secret-and-more')).toBe(
      '[2026-11-26 10:00:00][abc] Failed:     X: ***',
    );
    expect(redactSecrets('redis://:pw@host:1 with kept-first-secret')).toBe('redis://:***@host:1 with ***');
    expect(redactSecrets('[2026-11-26 10:00:00][abc] Processed:  App\\Jobs\\X (0.50ms)')).toBe(
      '[2026-11-26 10:00:00][abc] Processed:  App\\Jobs\\X (0.50ms)',
    );
  });
});

describe('redactUrl', () => {
  it('replaces the password, and only the password, of a URL', () => {
    expect(redactUrl('redis://:s3cret@127.0.0.1:6379/0')).toBe('redis://:***@127.0.0.1:6379/0');
    expect(redactUrl('rediss://worker:s3cret@redis.example:6380/2')).toBe('rediss://worker:***@redis.example:6380/2');
    expect(redactUrl('mysql://root:p%40ss@db:3306/app')).toBe('mysql://root:***@db:3306/app');
    // An '@' the user did not encode is part of the password, not the end of it.
    expect(redactUrl('redis://:p@ss@host:1')).toBe('redis://:***@host:1');
    expect(redactUrl('redis://host:1/0?password=s3cret&db=2')).toBe('redis://host:1/0?password=***&db=2');
    expect(redactUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });

  it('finds URLs inside a message, whatever comes around them', () => {
    expect(redactSecrets('cannot reach "postgres://u:pw@h/db" (ECONNREFUSED)')).toBe('cannot reach "postgres://u:***@h/db" (ECONNREFUSED)');
    expect(redactSecrets('"redis//user:pw@127.0.0.1" is not a redis:// URL')).toBe('"redis//user:***@127.0.0.1" is not a redis:// URL');
    expect(redactSecrets('at 10:20:30 in queue default')).toBe('at 10:20:30 in queue default');
  });

  it('hides a password holding a "/" or "@" never encoded (a base64 password), in a URL that therefore does not parse', () => {
    expect(redactUrl('redis://:s3cret/PW@127.0.0.1:6379')).toBe('redis://:***@127.0.0.1:6379');
    expect(redactUrl('rediss://worker:a/b@c+d==@redis.example:6380/2')).toBe('rediss://worker:***@redis.example:6380/2');
    expect(redactSecrets('"redis://:s3cret/PW@127.0.0.1:6379" is not a redis:// or rediss:// URL')).toBe(
      '"redis://:***@127.0.0.1:6379" is not a redis:// or rediss:// URL',
    );
  });
});

describe('a push Redis refuses', () => {
  it('a wrong password: exit 1, the URL printed with ***', async () => {
    const url = `redis://:${WRONG_PASSWORD}@127.0.0.1:${server.port}/0`;
    const result = await lqb(['dispatch', 'App\\Jobs\\X', `--redis=${url}`], current.s.env, { timeoutMs: 20_000 });
    expectOneLineFailure(result, 1, 'dispatch with a wrong password');
    expect(result.stderr).toContain(`Redis at redis://:***@127.0.0.1:${server.port}/0 did not take it`);
    expect(result.stderr).toMatch(/WRONGPASS/);
    expectNoSecret(result, 'dispatch with a wrong password');
  });

  it('an ACL user without the right to run the push: NOPERM, the user named, not the password', async () => {
    const url = `redis://pusher:${USER_PASSWORD}@127.0.0.1:${server.port}/0`;
    const result = await lqb(['dispatch', 'App\\Jobs\\X', `--redis=${url}`], current.s.env, { timeoutMs: 20_000 });
    expectOneLineFailure(result, 1, 'dispatch with NOPERM');
    expect(result.stderr).toContain(`redis://pusher:***@127.0.0.1:${server.port}/0`);
    expect(result.stderr).toMatch(/NOPERM/);
    expectNoSecret(result, 'dispatch with NOPERM');
  });

  it("a .env's REDIS_PASSWORD that is wrong", async () => {
    const env = join(current.s.dir, '.env');
    writeFileSync(
      env,
      [
        'APP_NAME=redact',
        `APP_KEY=${APP_KEY}`,
        'REDIS_HOST=127.0.0.1',
        `REDIS_PORT=${server.port}`,
        `REDIS_PASSWORD="${WRONG_PASSWORD}"`,
      ].join('\n') + '\n',
    );
    const result = await lqb(['dispatch', 'App\\Jobs\\X', `--env=${env}`], current.s.env, { timeoutMs: 20_000 });
    expectOneLineFailure(result, 1, 'dispatch with a .env password');
    expect(result.stderr).toContain(`redis://:***@127.0.0.1:${server.port}/0`);
    expectNoSecret(result, 'dispatch with a .env password');
  });
});

describe('a Redis that is down', () => {
  const commands: [string, string[]][] = [
    ['dispatch', ['dispatch', 'App\\Jobs\\X']],
    ['size', ['size']],
    ['clear', ['clear']],
    ['restart', ['restart']],
  ];
  for (const [name, args] of commands) {
    it(`${name}: exit 1 within seconds, one line naming the cause, no password`, async () => {
      const started = Date.now();
      const result = await lqb([...args, `--redis=redis://:${PASSWORD}@127.0.0.1:${closedPort}/0`], current.s.env, { timeoutMs: 20_000 });
      expectOneLineFailure(result, 1, name);
      expect(result.stderr, name).toMatch(new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${closedPort}`));
      expect(Date.now() - started, `${name} took too long to give up`).toBeLessThan(8000);
      expectNoSecret(result, name);
    });
  }

  // queue:retry opens the connection a failed record names, and only for a record: with none, Redis is not asked.
  it('retry all with no failed job: exit 0 without asking Redis, no password', async () => {
    const result = await lqb(['retry', 'all', `--redis=redis://:${PASSWORD}@127.0.0.1:${closedPort}/0`], current.s.env, {
      timeoutMs: 20_000,
    });
    expect(result.status, `retry all: exit status (stderr: ${result.stderr})`).toBe(0);
    expectNoSecret(result, 'retry all');
  });
});

describe('usage errors', () => {
  it('a --redis that is no Redis URL is named without its password (exit 2)', async () => {
    // The last: a password with a '/' never encoded, which makes the URL unparsable.
    for (const url of [
      `http://:${PASSWORD}@127.0.0.1:6379`,
      `redis//user:${PASSWORD}@127.0.0.1`,
      `redis://:${PASSWORD}/x@127.0.0.1:6379`,
    ]) {
      const result = await lqb(['size', `--redis=${url}`], current.s.env);
      expectOneLineFailure(result, 2, `size --redis=${url}`);
      expectNoSecret(result, `size --redis=${url}`);
    }
  });
});

describe('failed-jobs database passwords', () => {
  it('--failed-db and a .env DB_PASSWORD are printed with ***', async () => {
    const flag = await lqb(['failed', `--failed-db=mysql://root:${DB_PASSWORD}@127.0.0.1:${closedPort}/test`], current.s.env, {
      timeoutMs: 20_000,
    });
    expectOneLineFailure(flag, 1, 'failed --failed-db');
    expectNoSecret(flag, 'failed --failed-db');
    const env = join(current.s.dir, '.env');
    writeFileSync(
      env,
      [
        'DB_CONNECTION=pgsql',
        'DB_HOST=127.0.0.1',
        `DB_PORT=${closedPort}`,
        'DB_USERNAME=app',
        `DB_PASSWORD=${DB_PASSWORD}`,
        `APP_KEY=${APP_KEY}`,
      ].join('\n') + '\n',
    );
    const { LQB_FAILED_DB: _, ...withoutFailedDb } = current.s.env;
    const dotenv = await lqb(
      ['work', `--handlers=${HANDLERS}`, '--stop-when-empty', `--env=${env}`, `--redis=redis://:${PASSWORD}@127.0.0.1:${server.port}/0`],
      withoutFailedDb,
      { timeoutMs: 20_000 },
    );
    expectOneLineFailure(dotenv, 1, 'work with a .env DB_PASSWORD');
    expect(dotenv.stderr).toContain(`postgres://app:***@127.0.0.1:${closedPort}/laravel cannot be reached`);
    expectNoSecret(dotenv, 'work with a .env DB_PASSWORD');
  });
});

describe('the worker', () => {
  it('logs Redis refusing its password without the password', async () => {
    // Whether the worker then waits or ends is its loop's business; what it printed is checked.
    const refused = new RegExp(`Redis is unreachable: 127\\.0\\.0\\.1:${server.port}: WRONGPASS .*; retrying`);
    const result = await workUntilPrinted(
      ['work', `--handlers=${HANDLERS}`, `--redis=redis://:${WRONG_PASSWORD}@127.0.0.1:${server.port}/0`],
      current.s.env,
      refused,
    );
    expect(result.stdout, 'what the worker printed before it was stopped').toMatch(refused);
    expectNoSecret(result, 'work with a wrong password');
  });

  it('prints no secret in a --json log line, even when a job error quotes one', async () => {
    const url = `redis://:${PASSWORD}@127.0.0.1:${server.port}/0`;
    const message = `could not reach ${url} with key ${APP_KEY}`;
    const pushed = await lqb(
      ['dispatch', 'App\\Jobs\\Bridge\\FailingJob', `--props=${JSON.stringify({ message })}`, `--redis=${url}`],
      current.s.env,
    );
    expect(pushed.stderr, 'what lqb dispatch said on standard error').toBe(UNSHAPED_ONLY('App\\Jobs\\Bridge\\FailingJob'));
    const worked = await lqb(['work', `--handlers=${HANDLERS}`, '--once', '--json', `--redis=${url}`, `--key=${APP_KEY}`], current.s.env, {
      timeoutMs: 20_000,
    });
    const events = worked.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; error?: string });
    expect(events.map((e) => e.event)).toContain('failed');
    expect(events.find((e) => e.event === 'failed')?.error).toContain(
      `could not reach redis://:***@127.0.0.1:${server.port}/0 with key ***`,
    );
    expectNoSecret(worked, 'work --json');
  });
});
