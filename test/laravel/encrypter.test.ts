/**
 * Encrypted commands both ways against Laravel's own Encrypter (Debian's 8.83): what Laravel
 * encrypts we decrypt, what we encrypt Laravel decrypts, and a wrong key or a changed byte is
 * a clear error, never garbage.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DecryptError, Encrypter, type Cipher } from '../../src/laravel/index.js';
import { serialize } from '../../src/php/index.js';
import { runPhpScript } from '../helpers/php.js';

const ciphers: [Cipher, number][] = [
  ['AES-256-CBC', 32],
  ['AES-128-CBC', 16],
  ['AES-256-GCM', 32],
  ['AES-128-GCM', 16],
];
const commands = [
  'O:25:"App\\Jobs\\SendWelcomeEmail":2:{s:6:"userId";i:42;s:5:"email";s:15:"ada@example.com";}',
  `O:8:"stdClass":1:{s:4:"note";s:${Buffer.byteLength('ünïcödé 😀')}:"ünïcödé 😀";}`,
];

describe.each(ciphers)('%s', (cipher, keyLength) => {
  const appKey = `base64:${randomBytes(keyLength).toString('base64')}`;
  const ours = new Encrypter(appKey, cipher);

  it('decrypts what Laravel encrypts, to the command itself', () => {
    const encrypted = runPhpScript('encrypter.php', commands.map((c) => Buffer.from(c).toString('base64')).join('\n') + '\n', [
      'encrypt',
      appKey,
      cipher,
    ])
      .trim()
      .split('\n');
    expect(encrypted).toHaveLength(commands.length);
    encrypted.forEach((payload, i) => {
      expect(payload.startsWith('O:')).toBe(false);
      expect(Buffer.from(serialize(ours.decryptCommand(payload))).toString()).toBe(commands[i]);
    });
  });

  it('encrypts what Laravel decrypts', () => {
    const payloads = commands.map((c) => ours.encryptCommand(c));
    const decrypted = runPhpScript('encrypter.php', payloads.join('\n') + '\n', ['decrypt', appKey, cipher])
      .trim()
      .split('\n');
    expect(decrypted.map((line) => Buffer.from(line, 'base64').toString())).toEqual(commands);
  });

  it('refuses a wrong key and a changed byte with a DecryptError, as Laravel does', () => {
    const payload = ours.encryptCommand(commands[0]!);
    const other = new Encrypter(`base64:${randomBytes(keyLength).toString('base64')}`, cipher);
    expect(() => other.decryptCommand(payload)).toThrow(DecryptError);
    const fields = JSON.parse(Buffer.from(payload, 'base64').toString());
    const value = Buffer.from(fields.value, 'base64');
    value.writeUInt8(value[0]! ^ 1, 0);
    const tampered = Buffer.from(JSON.stringify({ ...fields, value: value.toString('base64') })).toString('base64');
    expect(() => ours.decryptCommand(tampered)).toThrow(cipher.endsWith('GCM') ? /tag does not match/ : /MAC is invalid/);
    const laravelSays = runPhpScript('encrypter.php', `${tampered}\n`, ['decrypt', appKey, cipher]);
    expect(laravelSays).toMatch(/^ERROR .*DecryptException/);
    expect(() => ours.decryptCommand('not-encrypter-output')).toThrow(/not Encrypter output/);
  });
});

it('a key of the wrong length is refused up front', () => {
  expect(() => new Encrypter(`base64:${randomBytes(16).toString('base64')}`, 'AES-256-CBC')).toThrow(/32-byte key/);
  expect(() => new Encrypter('base64:AAAA', 'AES-999')).toThrow(/unsupported cipher/);
});
