/**
 * rediss:// from the command line, on a TLS redis-server of the test's own with a self-signed
 * certificate: a certificate not trusted, TLS against a plain port and plain text against a TLS
 * port each end a one-off command within seconds with the cause in one line; --redis-ca (or
 * REDIS_CA) makes the certificate trusted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANDLERS, UNSHAPED_ONLY, lqb, scratchPerTest, type RunResult } from '../helpers/processes.js';
import { startOwnRedis, selfSignedCertificate, type OwnRedis } from '../helpers/redis.js';

const current = scratchPerTest('tls');
let dir: string;
let ca: string;
let tls: OwnRedis;
let plain: OwnRedis;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lqb-tls-'));
  const { cert, key } = selfSignedCertificate(dir);
  ca = cert;
  tls = await startOwnRedis(['--tls-port', '{port}', '--tls-cert-file', cert, '--tls-key-file', key, '--tls-auth-clients', 'no']);
  plain = await startOwnRedis([]);
});
afterAll(() => {
  tls?.stop();
  plain?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a one-off command that must fail: exit 1, quickly, one line naming the cause. */
async function expectFailure(args: string[], env: NodeJS.ProcessEnv, cause: string): Promise<RunResult> {
  const started = Date.now();
  const result = await lqb(args, env, { timeoutMs: 30_000 });
  const what = `lqb ${args.join(' ')}`;
  expect(result.status, `${what}: exit status (stderr: ${result.stderr})`).toBe(1);
  expect(Date.now() - started, `${what} took too long to give up`).toBeLessThan(7000);
  expect(result.stderr.trim().split('\n'), `${what}: stderr is one line`).toHaveLength(1);
  expect(result.stderr, what).toContain(cause);
  return result;
}

describe('rediss:// for one-off commands', () => {
  it('a certificate not trusted is named as the TLS handshake failing, with where to give a CA', async () => {
    await expectFailure(
      ['size', `--redis=rediss://127.0.0.1:${tls.port}`],
      current.s.env,
      `lqb size: redis: TLS handshake with 127.0.0.1:${tls.port} failed: self-signed certificate (trust its CA with --redis-ca=FILE or REDIS_CA)`,
    );
    const pushed = await expectFailure(
      ['dispatch', 'App\\Jobs\\X', `--redis=rediss://127.0.0.1:${tls.port}`],
      current.s.env,
      `TLS handshake with 127.0.0.1:${tls.port} failed: self-signed certificate`,
    );
    expect(pushed.stderr).toContain(`the job was not pushed: Redis at rediss://127.0.0.1:${tls.port} did not take it`);
  });

  it('--redis-ca, or REDIS_CA, trusts the certificate: jobs go in and are counted', async () => {
    const url = `--redis=rediss://127.0.0.1:${tls.port}`;
    const pushed = await lqb(['dispatch', 'App\\Jobs\\X', url, `--redis-ca=${ca}`], current.s.env);
    expect(pushed.stderr, 'what lqb dispatch said on standard error').toBe(UNSHAPED_ONLY('App\\Jobs\\X'));
    expect(pushed.status).toBe(0);
    const counted = await lqb(['size', url], { ...current.s.env, REDIS_CA: ca });
    expect(counted.stderr).toBe('');
    expect(counted.stdout.trim()).toBe('default  1');
    expect((await lqb(['clear', url, `--redis-ca=${ca}`], current.s.env)).stdout.trim()).toBe('Cleared 1 jobs from the [default] queue');
  });

  it('TLS against a plain port is said to be that, within seconds', async () => {
    await expectFailure(
      ['size', `--redis=rediss://127.0.0.1:${plain.port}`],
      current.s.env,
      `redis: TLS handshake with 127.0.0.1:${plain.port} failed: the server did not answer TLS (is it a plain redis:// port?)`,
    );
  });

  it('plain text against a TLS port is said to be that', async () => {
    await expectFailure(
      ['restart', `--redis=redis://127.0.0.1:${tls.port}`],
      current.s.env,
      `redis: 127.0.0.1:${tls.port} closed the connection before answering (is it a TLS port? then use rediss://)`,
    );
  });

  it('a --redis-ca that names no file is a usage error naming it', async () => {
    const result = await lqb(['size', `--redis=rediss://127.0.0.1:${tls.port}`, `--redis-ca=${join(dir, 'none.pem')}`], current.s.env);
    expect(result.status, result.stderr).toBe(2);
    expect(result.stderr).toContain(`--redis-ca=${join(dir, 'none.pem')} cannot be read: ENOENT`);
  });

  it('every command that talks to Redis shows --redis-ca in its help', async () => {
    for (const command of ['work', 'dispatch', 'size', 'clear', 'restart', 'retry']) {
      expect((await lqb([command, '--help'], current.s.env)).stdout, `lqb ${command} --help`).toContain('--redis-ca=FILE');
    }
  });
});

describe('rediss:// for the worker', () => {
  it('logs the refused certificate as the cause while it reconnects', async () => {
    const result = await lqb(['work', `--handlers=${HANDLERS}`, `--redis=rediss://127.0.0.1:${tls.port}`], current.s.env, {
      timeoutMs: 2500,
    });
    // The worker's own line for the outage, once (test/worker/health.test.ts), on its log.
    expect(result.stdout).toContain(
      `Redis is unreachable: TLS handshake with 127.0.0.1:${tls.port} failed: self-signed certificate; retrying`,
    );
  });
});
