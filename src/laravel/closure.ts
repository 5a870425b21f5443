/**
 * A job only PHP runs, which Node can write: Laravel's CallQueuedClosure of a closure that does
 * nothing. Given a batch id it is a batched job like any other: a PHP worker that runs it
 * records its success in the batch (Batch::recordSuccessfulJob) and so runs the batch's
 * progress, then and finally callbacks where its success is the one that finishes the batch.
 * The worker hands a batch's finish to PHP this way (worker/CallQueuedHandler.ts).
 *
 * The closure is written as laravel/serializable-closure writes it (Laravel 8.62+ on PHP 7.4+,
 * and every later version): a Native serialization of the closure's code, signed with the
 * APP_KEY (Signed: HMAC-SHA256, base64) as every app with a key requires. Only the properties
 * that matter are written: unserialize gives the others the class's defaults, whatever the
 * version's Queueable declares.
 */
import { randomBytes } from 'node:crypto';
import { PhpArray, PhpObject, serialize } from '../php/index.js';
import { CALL_QUEUED_CLOSURE } from './views.js';

const SERIALIZABLE_CLOSURE = 'Laravel\\SerializableClosure\\SerializableClosure';
const SIGNED = 'Laravel\\SerializableClosure\\Serializers\\Signed';
const NATIVE = 'Laravel\\SerializableClosure\\Serializers\\Native';

/** What signs a serialized closure: the APP_KEY's HMAC (Encrypter.signClosure). */
export interface ClosureSigner {
  signClosure(serialized: string): string;
}

/** Where the closure's object hash is fixed (a comparison with PHP's own bytes), else random as spl_object_hash looks. */
export interface ClosureOptions {
  self?: string;
}

/** A serialized no-op closure, signed with the app's key, as SerializableClosure holds it. */
export function noopClosure(signer: ClosureSigner, options: ClosureOptions = {}): PhpObject {
  const native = new PhpObject(NATIVE)
    .set('use', new PhpArray())
    .set('function', 'function () {}')
    .set('scope', null)
    .set('this', null)
    .set('self', options.self ?? randomBytes(16).toString('hex'));
  const serializedNative = serialize(native).toString('utf8');
  const signed = new PhpObject(SIGNED).set('serializable', serializedNative).set('hash', signer.signClosure(serializedNative));
  return new PhpObject(SERIALIZABLE_CLOSURE).set('serializable', signed);
}

/** A CallQueuedClosure that does nothing, in batch `batchId`: a batched job for PHP to run. */
export function batchedNoopCommand(batchId: string, signer: ClosureSigner, options: ClosureOptions = {}): PhpObject {
  return new PhpObject(CALL_QUEUED_CLOSURE).set('closure', noopClosure(signer, options)).set('batchId', batchId);
}
