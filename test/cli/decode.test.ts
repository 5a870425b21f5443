/**
 * `lqb decode` as a user runs it: the built CLI, on a payload real Laravel 8.83 (Debian's)
 * pushed into Redis, and on bad input.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { root, runPhpScript } from '../helpers/php.js';

function lqb(args: string[], input?: string | Buffer) {
  const result = spawnSync('node', [`${root}dist/cli/main.js`, ...args], { input, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('lqb decode', () => {
  it('shows a real Laravel payload with its command decoded', () => {
    const payload = runPhpScript('laravel-payload.php', '', ['42', 'ada@example.com']);
    const { status, stdout, stderr } = lqb(['decode'], payload);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const shown = JSON.parse(stdout);
    expect(shown.envelope.displayName).toBe('App\\Jobs\\SendWelcomeEmail');
    expect(shown.envelope.data.command['@class']).toBe('App\\Jobs\\SendWelcomeEmail');
    expect(shown.envelope.data.command).toMatchObject({ userId: 42, email: 'ada@example.com', tags: ['welcome', 'ünïcödé'], score: 0.5, tries: 3 });
    expect(shown.laravel).toBe('8');
    expect(shown.view.kind).toBe('job');
    expect(shown.view.properties.find((p: { name: string }) => p.name === 'tags')).toEqual({ name: 'tags', visibility: 'protected', value: ['welcome', 'ünïcödé'] });
  });

  it('reads a serialized string from a file', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const dir = mkdtempSync('/tmp/lqb-decode-');
    writeFileSync(`${dir}/value.txt`, 'a:1:{s:1:"k";d:INF;}\n');
    const { status, stdout } = lqb(['decode', `${dir}/value.txt`]);
    expect(status).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ k: 'INF' });
  });

  it('fails with status 1 and one line naming the byte for malformed input', () => {
    const { status, stderr } = lqb(['decode'], 'a:1:{i:0;');
    expect(status).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/lqb decode: expected a value at byte 9/);
  });

  it('shows a string job that carries no data', () => {
    const { status, stdout } = lqb(['decode'], '{"job":"App\\\\Legacy","attempts":0}');
    expect(status).toBe(0);
    expect(JSON.parse(stdout).view).toEqual({ kind: 'string', handler: 'App\\Legacy', data: null });
  });

  it('fails with status 2 and one line on a flag it does not know', () => {
    const { status, stderr } = lqb(['decode', '--nope']);
    expect(status).toBe(2);
    expect(stderr).toMatch(/^lqb decode: Unknown option '--nope'[^\n]* \(lqb decode --help for usage\)\n$/);
  });
});

describe('lqb decode of an encrypted job', () => {
  it('decrypts with --key, or with the APP_KEY of a Laravel .env, and says so without either', async () => {
    const { debianPayloads } = await import('../helpers/laravel.js');
    const record = debianPayloads().find((r) => r.name === 'encrypted/cbc')!;
    const withKey = lqb(['decode', `--key=${record.appKey}`], record.payload);
    expect(withKey.stderr).toBe('');
    const shown = JSON.parse(withKey.stdout);
    expect(shown.encrypted).toBe(true);
    expect(shown.envelope.data.command['@class']).toBe(record.expect.commandName);
    expect(shown.view.kind).toBe('job');

    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const dir = mkdtempSync('/tmp/lqb-env-');
    writeFileSync(`${dir}/.env`, `APP_NAME="Shop"\nAPP_KEY=${record.appKey}\n`);
    expect(JSON.parse(lqb(['decode', `--env=${dir}/.env`], record.payload).stdout).envelope.data.command['@class']).toBe(record.expect.commandName);

    const without = JSON.parse(lqb(['decode'], record.payload).stdout);
    expect(without.envelope.data.command).toMatch(/encrypted: give --key/);
    const wrong = lqb(['decode', '--key=base64:' + Buffer.alloc(32).toString('base64')], record.payload);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toMatch(/MAC is invalid/);
  });
});

describe('decodeInput on every real payload', () => {
  it('shows each of them (jobs, listeners, notifications, mailables, closures, string jobs, encrypted) as JSON', async () => {
    const { decodeInput } = await import('../../src/cli/decode.js');
    const { debianPayloads, versionPayloads } = await import('../helpers/laravel.js');
    const kinds = new Set<string>();
    for (const record of [...debianPayloads(), ...versionPayloads()]) {
      const shown = decodeInput(Buffer.from(record.payload), { appKey: record.appKey, cipher: record.cipher }) as { view: { kind: string } };
      expect(() => JSON.stringify(shown)).not.toThrow();
      kinds.add(shown.view.kind);
    }
    expect(kinds).toEqual(new Set(['job', 'listener', 'notification', 'mailable', 'closure', 'string']));
  });
});
