/**
 * The no-op closure the worker writes to hand a batch's finish to PHP, against what
 * laravel/serializable-closure itself writes (Debian's, as Laravel 8.83 uses it) under the same
 * key: the same bytes, signature included; and the CallQueuedClosure around it unserializes in
 * real PHP to a command whose closure runs, in the batch it names.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Encrypter } from '../../src/laravel/index.js';
import { batchedNoopCommand, noopClosure } from '../../src/laravel/closure.js';
import { serialize } from '../../src/php/index.js';
import { php, runPhpScript } from '../helpers/php.js';

const keys = () => `base64:${randomBytes(32).toString('base64')}`;

describe('a no-op closure for a batch’s finish', () => {
  it.each([1, 2, 3])('is, byte for byte, what SerializableClosure writes under the same APP_KEY (key %i)', () => {
    const key = keys();
    const fromPhp = JSON.parse(runPhpScript('closure-serialize.php', '', [key])) as { closure: string; self: string };
    const ours = serialize(noopClosure(new Encrypter(key), { self: fromPhp.self })).toString('utf8');
    expect(ours, `the serialized closure under ${key.slice(0, 12)}…`).toBe(fromPhp.closure);
  });

  it('unserializes in real PHP to a CallQueuedClosure in the batch, whose closure runs, only under the key it was signed with', () => {
    const key = keys();
    const command = serialize(batchedNoopCommand('batch-1', new Encrypter(key))).toString('base64');
    const check = (withKey: string) =>
      php(`
        require_once 'Illuminate/autoload.php';
        \\Laravel\\SerializableClosure\\SerializableClosure::setSecretKey(base64_decode(substr(${JSON.stringify(withKey)}, 7)));
        try {
          $command = unserialize(base64_decode(${JSON.stringify(command)}));
          $ran = $command->closure->getClosure()();
          echo json_encode(['class' => get_class($command), 'batchId' => $command->batchId, 'returned' => $ran]);
        } catch (Throwable $e) {
          echo json_encode(['error' => get_class($e)]);
        }
      `).toString('utf8');
    expect(JSON.parse(check(key)), 'the command as PHP reads it under the same key').toEqual({
      class: 'Illuminate\\Queue\\CallQueuedClosure',
      batchId: 'batch-1',
      returned: null,
    });
    expect(JSON.parse(check(keys())), 'the command as PHP reads it under another key').toEqual({
      error: 'Laravel\\SerializableClosure\\Exceptions\\InvalidSignatureException',
    });
  });
});
