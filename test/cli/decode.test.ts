/**
 * `lqb decode` as a user runs it: the built CLI, on a payload real Laravel 8.83 (Debian's)
 * pushed into Redis, and on bad input.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { php, root, runPhpScript } from '../helpers/php.js';

function lqb(args: string[], input?: string | Buffer) {
  // The time limit only ends a run that would never finish (a regression to expanding references).
  const result = spawnSync('node', [`${root}dist/cli/main.js`, ...args], { input, encoding: 'utf8', timeout: 60_000, maxBuffer: 1 << 30 });
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
    expect(shown.envelope.data.command).toMatchObject({
      userId: 42,
      email: 'ada@example.com',
      tags: ['welcome', 'ünïcödé'],
      score: 0.5,
      tries: 3,
    });
    expect(shown.laravel).toBe('8');
    expect(shown.view.kind).toBe('job');
    expect(shown.view.properties.find((p: { name: string }) => p.name === 'tags')).toEqual({
      name: 'tags',
      visibility: 'protected',
      value: ['welcome', 'ünïcödé'],
    });
  });

  it('reads a serialized string from a file', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const dir = mkdtempSync('/tmp/lqb-decode-');
    writeFileSync(`${dir}/value.txt`, 'a:1:{s:1:"k";d:INF;}\n');
    const { status, stdout } = lqb(['decode', `${dir}/value.txt`]);
    expect(status).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ k: 'INF' });
  });

  it('shows the floats JSON cannot hold (INF, -INF, NAN, -0) as PHP spells them', () => {
    const input = php('echo serialize([INF, -INF, NAN, -0.0, 0.0, 1.5]);');
    const spelled = [...input.toString().matchAll(/d:([^;]+);/g)].map((m) => m[1]);
    const { status, stdout } = lqb(['decode'], input);
    expect(status).toBe(0);
    expect(JSON.parse(stdout)).toEqual([...spelled.slice(0, 4), Number(spelled[4]), Number(spelled[5])]);
  });

  it('fails with status 1 and one line naming the byte for malformed input', () => {
    const { status, stderr } = lqb(['decode'], 'a:1:{i:0;');
    expect(status).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/lqb decode: expected a value at byte 9/);
  });

  it('fails with status 1 and one line naming the FILE it cannot read, and why', async () => {
    const { mkdtempSync } = await import('node:fs');
    const dir = mkdtempSync('/tmp/lqb-decode-');
    for (const [path, why] of [
      [`${dir}/missing.txt`, 'there is no such file'],
      [dir, 'it is a directory'],
    ]) {
      const { status, stderr } = lqb(['decode', path!]);
      expect(status, path).toBe(1);
      expect(stderr, path).toBe(`lqb decode: cannot read ${path}: ${why}\n`);
    }
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

describe('lqb decode of hostile values', () => {
  it('prints a reference bomb (each level two R: to the one before) with each reference as a reference', () => {
    const input = php('$b = [[]]; for ($i = 1; $i <= 32; $i++) { $b[$i] = [&$b[$i - 1], &$b[$i - 1]]; } echo serialize($b);');
    expect(input.length, 'the bomb is a few hundred bytes').toBeLessThan(1000);
    const { status, stdout, stderr } = lqb(['decode'], input);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    // Expanded, it would name 2^32 arrays; as references, the output stays near the input's size.
    expect(stdout.length, 'output length').toBeLessThan(40 * input.length);
    const shown = JSON.parse(stdout) as Record<string, unknown>[];
    expect(shown[0], 'the first level, named by slot 2').toEqual({ '@slot': 2 });
    expect(shown[1], 'the second level, named by slot 3').toEqual({ '0': { '@ref': 2 }, '1': { '@ref': 2 }, '@slot': 3 });
    expect(shown[32], 'the last level, named by none').toEqual([{ '@ref': 33 }, { '@ref': 33 }]);
    expect(shown[31]!['@slot'], 'the level the last one names').toBe(33);
  });

  it('prints objects shared by r:, an object holding itself, and a reference to a string', () => {
    const input = php(`$o = new stdClass; $b = [$o];
      for ($i = 1; $i <= 40; $i++) { $x = new stdClass; $x->a = $b[$i - 1]; $x->b = $b[$i - 1]; $b[$i] = $x; }
      $s = new stdClass; $s->self = $s; $s->text = str_repeat('t', 100); $s->alias = &$s->text;
      echo serialize([$b, $s]);`);
    const { status, stdout } = lqb(['decode'], input);
    expect(status).toBe(0);
    expect(stdout.length, 'output length').toBeLessThan(40 * input.length);
    const [levels, self] = JSON.parse(stdout) as [Record<string, { '@ref': number }>[], Record<string, unknown>];
    // PHP numbers each r: too: the object a level names is the one marked with that slot.
    for (let i = 1; i <= 40; i++) {
      expect(levels[i]!.a, `level ${i}'s a`).toEqual(levels[i]!.b);
      expect(levels[i - 1]!['@slot'], `level ${i - 1} is named by level ${i}`).toBe(levels[i]!.a!['@ref']);
    }
    expect(self.self, 'the object holding itself').toEqual({ '@ref': self['@slot'] });
    expect(self.alias, 'a reference to a long string shows its start').toEqual({
      '@ref': expect.any(Number),
      '@value': 't'.repeat(64) + '…',
    });
  });

  it('prints a job whose command holds a reference bomb, its view numbering references as the command does', () => {
    const payload = php(`$b = [[]]; for ($i = 1; $i <= 32; $i++) { $b[$i] = [&$b[$i - 1], &$b[$i - 1]]; }
      class Bomb { public $b; public $job = null; } $j = new Bomb; $j->b = $b;
      echo json_encode(['uuid' => 'u', 'displayName' => 'Bomb', 'job' => 'Illuminate\\Queue\\CallQueuedHandler@call', 'maxTries' => null, 'maxExceptions' => null,
        'failOnTimeout' => false, 'backoff' => null, 'timeout' => null, 'retryUntil' => null, 'data' => ['commandName' => 'Bomb', 'command' => serialize($j)], 'id' => 'x', 'attempts' => 0]);`);
    const { status, stdout, stderr } = lqb(['decode'], payload);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(stdout.length, 'output length').toBeLessThan(40 * payload.length);
    const shown = JSON.parse(stdout);
    expect(shown.envelope.data.command.b[32], 'the last level in the command').toEqual([{ '@ref': 34 }, { '@ref': 34 }]);
    expect(shown.view.properties.find((p: { name: string }) => p.name === 'b').value, 'the same in the view').toEqual(
      shown.envelope.data.command.b,
    );
  });

  it('prints arrays and objects nested as deep as PHP reads them', () => {
    const depth = 4096;
    const input = php(`$v = 'core'; for ($i = 0; $i < ${depth}; $i++) { $v = $i % 2 ? [$v] : (object) ['in' => $v]; } echo serialize($v);`);
    const { status, stdout, stderr } = lqb(['decode'], input);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(stdout.length, 'output length, indentation bounded').toBeLessThan(100 * input.length);
    let shown = JSON.parse(stdout) as unknown;
    for (let i = 0; i < depth; i++) shown = Array.isArray(shown) ? shown[0] : (shown as { in: unknown }).in;
    expect(shown, 'the innermost value').toBe('core');
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
    expect(JSON.parse(lqb(['decode', `--env=${dir}/.env`], record.payload).stdout).envelope.data.command['@class']).toBe(
      record.expect.commandName,
    );

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
      const shown = decodeInput(Buffer.from(record.payload), { appKey: record.appKey, cipher: record.cipher }) as {
        view: { kind: string };
      };
      expect(() => JSON.stringify(shown)).not.toThrow();
      kinds.add(shown.view.kind);
    }
    expect(kinds).toEqual(new Set(['job', 'listener', 'notification', 'mailable', 'closure', 'string']));
  });

  it('prints each of them as JSON.stringify would', async () => {
    const { decodeInput } = await import('../../src/cli/decode.js');
    const { formatJson } = await import('../../src/cli/readable.js');
    const { debianPayloads, versionPayloads } = await import('../helpers/laravel.js');
    const differ = [...debianPayloads(), ...versionPayloads()].filter((record) => {
      const shown = decodeInput(Buffer.from(record.payload), { appKey: record.appKey, cipher: record.cipher });
      return formatJson(shown) !== JSON.stringify(shown, null, 2);
    });
    expect(differ.map((record) => record.name).slice(0, 3), 'payloads printed otherwise').toEqual([]);
  });
});
