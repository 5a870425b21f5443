/**
 * phpString against PHP's own string conversion (`(string) $v`) of the same values: each value
 * is serialized here, unserialized and converted by PHP 8.2, and PHP's output is the expected
 * one. What PHP converts only by running code, or with a warning, is refused with the reason.
 */
import { describe, expect, it } from 'vitest';
import { PhpArray, PhpEnum, PhpFloat, PhpObject, PhpRef, serialize, type PhpValue } from '../../src/php/index.js';
import { PhpStringError, phpString } from '../../src/php/string.js';
import { php } from '../helpers/php.js';

/** PHP's (string) of each value, as it unserializes them, as bytes (one base64 line each, so bytes come back as they are). */
function phpBytes(values: PhpValue[]): Buffer[] {
  const serialized = values.map((value) => Buffer.from(serialize(value)).toString('base64')).join(',');
  const code = `foreach (explode(',', '${serialized}') as $s) { echo base64_encode((string) unserialize(base64_decode($s))), "\\n"; }`;
  return php(code)
    .toString('utf8')
    .split('\n')
    .slice(0, values.length)
    .map((line) => Buffer.from(line, 'base64'));
}

/** PHP's (string) of each value, as text. */
const phpStrings = (values: PhpValue[]): string[] => phpBytes(values).map((bytes) => bytes.toString('utf8'));

describe('phpString', () => {
  it('converts null, bools, ints, floats and strings as PHP 8.2 does', () => {
    const values: PhpValue[] = [
      null,
      false,
      true,
      0,
      -42,
      9007199254740991,
      9223372036854775807n,
      -9223372036854775808n,
      new PhpFloat(1.5),
      new PhpFloat(1),
      new PhpFloat(0.1 + 0.2),
      new PhpFloat(1e25),
      new PhpFloat(-0),
      '',
      'order-7',
      'é',
      new Uint8Array([0xff, 0x00, 0x41]),
    ];
    const expected = phpBytes(values);
    values.forEach((value, i) => {
      // A string is UTF-8 text; bytes that are not come back one char per byte.
      const ours = Buffer.from(phpString(value), value instanceof Uint8Array ? 'latin1' : 'utf8');
      expect(ours.toString('hex'), `phpString of value #${i} (${String(value)})`).toBe(expected[i]!.toString('hex'));
    });
  });

  it('takes a JS number that is not whole, or past a PHP int, as the float it is', () => {
    const [fraction, huge] = phpStrings([new PhpFloat(2.5), new PhpFloat(1e21)]);
    expect(phpString(2.5), 'phpString(2.5)').toBe(fraction);
    expect(phpString(1e21), 'phpString(1e21)').toBe(huge);
  });

  it('converts the value a reference points at', () => {
    expect(phpString(new PhpRef('R', 1, 7)), 'phpString of a reference to 7').toBe('7');
  });

  it('refuses an array, an enum and an object, naming what it was', () => {
    expect(() => phpString(PhpArray.list([1])), 'an array').toThrow(PhpStringError);
    expect(() => phpString(new PhpEnum('App\\Status', 'Paid')), 'an enum').toThrow(/an enum \(App\\Status\)/);
    expect(() => phpString(new PhpObject('App\\Money')), 'an object').toThrow(/an object \(App\\Money\).*__toString/);
  });
});
