/**
 * A payload with some of its command's properties masked, for fixtures copied off a live queue
 * (`lqb record --mask`): each property named, at any depth of the command (its own, a nested
 * object's, an array's string key), gets a value of the same PHP type — a string `***`, an int
 * 0, a float 0.0, false, an empty array — so that PHP still reads the payload as it read the
 * original. Everything else is written back as it was: the envelope's fields and order, its
 * escaping, the rest of the command byte for byte. An encrypted command is decrypted, masked and
 * encrypted again (a new IV) when the APP_KEY is at hand, and left as it was when not.
 */
import { PhpArray, PhpFloat, PhpObject, PhpRef, demangle, serialize, type PhpValue } from '../php/index.js';
import type { Encrypter } from './encrypter.js';
import type { JsonObject } from './json.js';
import { decodePayload, encodePayload } from './payload.js';

export interface MaskedPayload {
  payload: string;
  /** How many values were masked. */
  masked: number;
  /** The command is encrypted and no key was given: nothing in it could be masked. */
  encryptedUnmasked?: boolean;
}

/** `raw` with the properties `names` masked (see above). A payload with nothing to mask is given back unchanged. */
export function maskPayload(raw: string, names: ReadonlySet<string>, encrypter?: Encrypter): MaskedPayload {
  if (names.size === 0) return { payload: raw, masked: 0 };
  const decoded = decodePayload(raw);
  const data = decoded.envelope.data as JsonObject | undefined;
  if (!data || typeof data.command !== 'string') return { payload: raw, masked: 0 };
  let command: PhpValue | undefined;
  if (decoded.encrypted) {
    if (!encrypter) return { payload: raw, masked: 0, encryptedUnmasked: true };
    command = encrypter.decryptCommand(data.command);
  } else command = decoded.command;
  if (command === undefined) return { payload: raw, masked: 0 };
  const counter = { masked: 0 };
  maskWithin(command, names, counter, new Set());
  if (counter.masked === 0) return { payload: raw, masked: 0 };
  const serialized = serialize(command).toString('utf8');
  data.command = decoded.encrypted ? encrypter!.encryptCommand(serialized) : serialized;
  return { payload: encodePayload(decoded), masked: counter.masked };
}

/** Masks the named properties and keys inside `value`, each container visited once (PHP references may loop). */
function maskWithin(value: PhpValue, names: ReadonlySet<string>, counter: { masked: number }, seen: Set<object>): void {
  const target = value instanceof PhpRef ? value.target : value;
  const entries = target instanceof PhpObject ? target.props : target instanceof PhpArray ? target : undefined;
  if (!entries || seen.has(entries)) return;
  seen.add(entries);
  const { keys, values } = entries;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const name = typeof key === 'string' && key.charCodeAt(0) === 0 ? demangle(key).name : key;
    if (typeof name === 'string' && names.has(name)) {
      const masked = maskedLike(values[i]!);
      if (masked !== undefined) {
        values[i] = masked;
        counter.masked++;
        continue;
      }
    }
    maskWithin(values[i]!, names, counter, seen);
  }
}

/** A value of the same PHP type that tells nothing; undefined for an object (masked inside, not replaced: its class stays). */
function maskedLike(value: PhpValue): PhpValue | undefined {
  // A reference shares another value: that one is masked where it stands, if named there.
  if (value instanceof PhpRef) return undefined;
  if (value === null) return null;
  if (typeof value === 'string' || value instanceof Uint8Array) return '***';
  if (typeof value === 'number') return 0;
  if (typeof value === 'bigint') return 0n;
  if (typeof value === 'boolean') return false;
  if (value instanceof PhpFloat) return new PhpFloat(0);
  if (value instanceof PhpArray) return new PhpArray();
  return undefined;
}
