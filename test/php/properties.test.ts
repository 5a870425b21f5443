/**
 * Properties of the codec over generated values: it reads back what it writes, it never fails
 * on a mangled input with anything but its own error, and real PHP agrees with what it writes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PhpUnserializeError, serialize, unserialize } from '../../src/php/index.js';
import { phpValue, samePhp } from '../helpers/arbitraries.js';
import { phpReserialize } from '../helpers/php.js';

describe('serialize → unserialize', () => {
  it('gives back the same value, and the same bytes again', () => {
    fc.assert(
      fc.property(phpValue(), (value) => {
        const bytes = serialize(value);
        const back = unserialize(bytes);
        expect(samePhp(value, back)).toBe(true);
        expect(Buffer.compare(serialize(back), bytes)).toBe(0);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('truncated or mutated input', () => {
  const mutated = fc
    .tuple(phpValue(), fc.nat(), fc.nat(255), fc.constantFrom('truncate', 'flip', 'insert', 'delete'))
    .map(([value, at, byte, how]) => {
      const bytes = Buffer.from(serialize(value));
      const i = bytes.length ? at % bytes.length : 0;
      if (how === 'truncate') return bytes.subarray(0, i);
      if (how === 'flip') return Buffer.concat([bytes.subarray(0, i), Buffer.from([byte]), bytes.subarray(i + 1)]);
      if (how === 'insert') return Buffer.concat([bytes.subarray(0, i), Buffer.from([byte]), bytes.subarray(i)]);
      return Buffer.concat([bytes.subarray(0, i), bytes.subarray(i + 1)]);
    });

  it('gives a value or a PhpUnserializeError with an offset inside the input, nothing else', () => {
    fc.assert(
      fc.property(mutated, (bytes) => {
        try {
          unserialize(bytes);
        } catch (error) {
          expect(error).toBeInstanceOf(PhpUnserializeError);
          const offset = (error as PhpUnserializeError).offset;
          expect(offset).toBeGreaterThanOrEqual(0);
          expect(offset).toBeLessThanOrEqual(bytes.length);
        }
      }),
      { numRuns: 20000 },
    );
  });
});

describe('real PHP reads what serialize writes', () => {
  it("and PHP's own serialize() of it gives the same bytes", () => {
    const values = fc.sample(phpValue({ phpClasses: true }), { numRuns: 3000, seed: 20261122 });
    const ours = values.map((value) => serialize(value));
    const theirs = phpReserialize(ours);
    const disagreements = ours
      .map((bytes, i) => ({ ours: Buffer.from(bytes).toString('latin1'), php: theirs[i] instanceof Error ? String(theirs[i]) : theirs[i]!.toString('latin1') }))
      .filter(({ ours, php }) => ours !== php);
    expect(disagreements.slice(0, 3)).toEqual([]);
    expect(theirs).toHaveLength(values.length);
  });
});
