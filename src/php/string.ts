/**
 * PHP's string conversion of a value, as `(string) $v`, `'…' . $v` and `"{$v}"` make it: how a
 * lock key's id, a rate limiter's key or a translated method's concatenation is spelled.
 *
 * Only the values PHP converts without running code are converted. An array becomes "Array"
 * (with a warning), an object runs its `__toString()` and an enum is refused: none of those is
 * what an application means, so each is refused here with the reason.
 */
import { phpStringOfFloat } from './float.js';
import { PhpArray, PhpEnum, PhpFloat, PhpRef, deref, type PhpValue } from './values.js';

/** A value whose string PHP would not make, or would make by running the class's own code. */
export class PhpStringError extends Error {
  override name = 'PhpStringError';
}

/** The largest magnitude a PHP int (64 bits) reaches: a whole JS number past it can only have been a float. */
const INT64_LIMIT = 2 ** 63;

/**
 * `(string) $value`. Ints are JS numbers (whole) or bigints, floats PhpFloat; a JS number that
 * is not whole, or past a PHP int's range, is taken as the float it is (as JSON from a shape's
 * declared value gives one). A reference converts as the value it points at.
 */
export function phpString(value: PhpValue): string {
  // deref() follows a reference to the value it points at, never another reference.
  const v = deref(value) as Exclude<PhpValue, PhpRef>;
  if (v === null || v === false) return '';
  if (v === true) return '1';
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < INT64_LIMIT ? String(v) : phpStringOfFloat(v);
  if (v instanceof PhpFloat) return phpStringOfFloat(v.value);
  // Bytes that are not UTF-8 are PHP's string as it is: one char per byte.
  if (v instanceof Uint8Array) return Buffer.from(v).toString('latin1');
  if (v instanceof PhpArray) throw new PhpStringError('an array has no string form ("Array", with a warning, in PHP)');
  if (v instanceof PhpEnum) throw new PhpStringError(`an enum (${v.className}) has no string form in PHP`);
  throw new PhpStringError(`an object (${v.className}) has no string form Node can know: PHP would run its __toString()`);
}
