/**
 * phpStringOfFloat against PHP's own string conversion of a float (`(string) $f`, precision 14),
 * the form lock keys, tags and displayNames built by concatenation carry. Each value PHP prints
 * is the expected one; fast-check adds random doubles beside the edge cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { phpStringOfFloat } from '../../src/php/index.js';
import { php } from '../helpers/php.js';

/** PHP's (string) of each double, given by its exact bits so that nothing is lost on the way in. */
function phpStrings(values: number[]): string[] {
  const hex = values.map((value) => Buffer.from(new Float64Array([value]).buffer).toString('hex')).join(',');
  const code = `foreach (explode(',', '${hex}') as $h) { echo (string) unpack('e', hex2bin($h))[1], "\\n"; }`;
  return php(code).toString('utf8').split('\n').slice(0, values.length);
}

describe('phpStringOfFloat', () => {
  it('spells each value as PHP 8.2 converts it to a string', () => {
    const edges = [
      0,
      -0,
      1,
      -1,
      0.1,
      1.5,
      2.5e-5,
      1e-4,
      1e-5,
      123456789012345,
      1e14,
      1e15,
      99999999999999.9,
      1 / 3,
      -2 / 3,
      1e100,
      5e-324,
      1.7976931348623157e308,
      100000000001005,
      100000000001004,
      12345678901234.5,
      12345678901230.5,
      1000000000000.25,
      1000000000000.75,
      999999999999995,
      12345678901235.5,
      Infinity,
      -Infinity,
      NaN,
      0.30000000000000004,
    ];
    const random = fc.sample(fc.double({ noNaN: true }), { numRuns: 300, seed: 23 });
    // Ties at the 15th digit (15-digit integers ending in 5, and their tenths): PHP rounds them to even.
    const ties = fc
      .sample(fc.integer({ min: 1e13, max: 1e14 - 1 }), { numRuns: 100, seed: 5 })
      .flatMap((n) => [n * 10 + 5, (n * 10 + 5) / 10]);
    const values = [...edges, ...random, ...ties];
    const expected = phpStrings(values);
    const mismatches = values
      .map((value, i) => ({ value, php: expected[i], node: phpStringOfFloat(value) }))
      .filter((row) => row.php !== row.node);
    expect(mismatches, 'doubles whose string differs from PHP’s (value, php, node)').toEqual([]);
  });
});
