/**
 * fast-check generators of lossless PHP values, and a comparison that treats two values as the
 * same when PHP would (a string and the same bytes, an object and a back-reference to it).
 */
import fc from 'fast-check';
import { isUtf8 } from 'node:buffer';
import {
  PhpArray,
  PhpEnum,
  PhpFloat,
  PhpObject,
  PhpRef,
  PhpSerializable,
  mangle,
  type PhpKey,
  type PhpValue,
} from '../../src/php/index.js';

const classNames = ['stdClass', 'App\\Jobs\\ImportCsv', 'App\\Models\\User', 'Lqb_Plain', 'Ünïcode\\Klass'];
const propNames = fc.oneof(
  fc.constantFrom('id', 'name', 'job', 'queue', '__proto__', 'constructor', 'prototype', '0', ''),
  fc.string({ maxLength: 8 }),
);

const int = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc
    .bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n })
    .map((n) => (n >= -BigInt(Number.MAX_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n)),
);
const float = fc
  .oneof(
    fc.double(),
    fc.constantFrom(0, -0, Infinity, -Infinity, NaN, 0.1, 1e25, 1e-7, 1e15, 1e16, 1.5e16, 1e17, 1e-4, 1e-5, 1.234e-4, 5e-324),
  )
  .map((x) => new PhpFloat(x));
const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }).map(wellFormed));
const bytes = fc.uint8Array({ maxLength: 24 }).map((b): string | Uint8Array => (isUtf8(b) ? Buffer.from(b).toString('utf8') : b));
const key: fc.Arbitrary<PhpKey> = fc.oneof(
  int,
  text.filter((s) => !/^(?:0|-?[1-9][0-9]*)$/.test(s)),
);

/** Lone surrogates have no UTF-8 form; PHP strings come from bytes, so generated text must be well formed. */
function wellFormed(s: string): string {
  return s.replace(/[\ud800-\udfff]/g, (c, i: number) => {
    const code = s.charCodeAt(i);
    const next = s.charCodeAt(i + 1);
    const prev = s.charCodeAt(i - 1);
    const paired = (code < 0xdc00 && next >= 0xdc00 && next <= 0xdfff) || (code >= 0xdc00 && prev >= 0xd800 && prev < 0xdc00);
    return paired ? c : '?';
  });
}

export interface PhpArbitraryOptions {
  /** Include enums and Serializable objects of the classes `reserialize.php` defines. */
  phpClasses?: boolean;
}

export function phpValue(options: PhpArbitraryOptions = {}): fc.Arbitrary<PhpValue> {
  const leaves: fc.Arbitrary<PhpValue>[] = [fc.constant(null), fc.boolean(), int, float, text, bytes];
  if (options.phpClasses) leaves.push(fc.constantFrom(new PhpEnum('Lqb\\Test\\Suit', 'Hearts'), new PhpEnum('Lqb\\Test\\Flag', 'Off')));
  else leaves.push(fc.constant(new PhpSerializable('Lqb_Custom', new Uint8Array(Buffer.from('x:{};"')))));
  const { value } = fc.letrec<{ value: PhpValue; array: PhpArray; object: PhpObject }>((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, ...leaves, tie('array'), tie('object'), tie('object').map(shareTwice)),
    array: fc.array(fc.tuple(key, tie('value')), { maxLength: 5 }).map((entries) => PhpArray.from(entries)),
    object: fc
      .tuple(
        fc.constantFrom(...classNames),
        fc.array(fc.tuple(propNames, fc.constantFrom('public', 'protected', 'private') as fc.Arbitrary<'public'>, tie('value')), {
          maxLength: 5,
        }),
      )
      .map(([className, props]) => {
        const object = new PhpObject(className);
        for (const [name, visibility, item] of props) object.set(name, item, visibility);
        return object;
      }),
  }));
  return value;
}

/** The same object twice in one array: PHP writes the second as `r:N;`. */
function shareTwice(object: PhpObject): PhpValue {
  return PhpArray.list([object, object]);
}

/** Structural equality as PHP sees it. */
export function samePhp(a: PhpValue, b: PhpValue, seen = new Map<object, object>()): boolean {
  if (a instanceof PhpRef && a.kind === 'r') a = a.target;
  if (b instanceof PhpRef && b.kind === 'r') b = b.target;
  if (a instanceof Uint8Array && isUtf8(a)) a = Buffer.from(a).toString('utf8');
  if (b instanceof Uint8Array && isUtf8(b)) b = Buffer.from(b).toString('utf8');
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return a === b;
  if (seen.get(a) === b) return true;
  seen.set(a, b);
  if (a instanceof PhpFloat && b instanceof PhpFloat) return Object.is(a.value, b.value);
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b));
  if (a instanceof PhpEnum && b instanceof PhpEnum) return a.className === b.className && a.caseName === b.caseName;
  if (a instanceof PhpSerializable && b instanceof PhpSerializable)
    return a.className === b.className && Buffer.from(a.data).equals(Buffer.from(b.data));
  if (a instanceof PhpRef && b instanceof PhpRef) return a.kind === b.kind && a.index === b.index;
  if (a instanceof PhpObject && b instanceof PhpObject) return a.className === b.className && sameArray(a.props, b.props, seen);
  if (a instanceof PhpArray && b instanceof PhpArray) return sameArray(a, b, seen);
  return false;
}

function sameArray(a: PhpArray, b: PhpArray, seen: Map<object, object>): boolean {
  if (a.size !== b.size) return false;
  for (let i = 0; i < a.size; i++) {
    const ka = a.keys[i]!;
    const kb = b.keys[i]!;
    if (!samePhp(typeof ka === 'bigint' ? ka : ka, typeof kb === 'bigint' ? kb : kb, seen)) return false;
    if (!samePhp(a.values[i]!, b.values[i]!, seen)) return false;
  }
  return true;
}

export { mangle };
