/**
 * Properties of the codec over generated values: it reads back what it writes, it never fails
 * on a mangled input with anything but its own error, and real PHP agrees with what it writes.
 */
import { isUtf8 } from 'node:buffer';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  PhpArray,
  PhpEnum,
  PhpFloat,
  PhpObject,
  PhpUnserializeError,
  formatPhpFloat,
  serialize,
  unserialize,
  type PhpValue,
} from '../../src/php/index.js';
import { phpValue, samePhp } from '../helpers/arbitraries.js';
import { php, phpReserialize } from '../helpers/php.js';

describe('serialize → unserialize', () => {
  it('gives back the same value, and the same bytes again', () => {
    fc.assert(
      fc.property(phpValue(), (value) => {
        const bytes = serialize(value);
        const back = unserialize(bytes);
        expect(samePhp(value, back), 'the value unserialize gave back is not the one serialized').toBe(true);
        expect(Buffer.compare(serialize(back), bytes)).toBe(0);
        // Given as a JS string (as a job payload's command is), the same value comes back.
        if (isUtf8(bytes))
          expect(samePhp(value, unserialize(bytes.toString('utf8'))), 'read from a JS string, the value differs').toBe(true);
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
      .map((bytes, i) => ({
        ours: Buffer.from(bytes).toString('latin1'),
        php: theirs[i] instanceof Error ? String(theirs[i]) : theirs[i]!.toString('latin1'),
      }))
      .filter(({ ours, php }) => ours !== php);
    expect(disagreements.slice(0, 3)).toEqual([]);
    expect(theirs).toHaveLength(values.length);
  });
});

describe('floats written as PHP spells them', () => {
  it('at every power of ten and either side of where the layout changes', () => {
    const doubles: number[] = [];
    const near = (x: number) => {
      const bits = new Float64Array([x]);
      const word = new BigInt64Array(bits.buffer);
      for (const step of [-2n, -1n, 0n, 1n, 2n]) {
        const moved = new BigInt64Array([word[0]! + step]);
        doubles.push(new Float64Array(moved.buffer)[0]!, -new Float64Array(moved.buffer)[0]!);
      }
    };
    for (let k = -323; k <= 308; k++) near(Number(`1e${k}`));
    for (const x of [1e21, 1e-6, 1e17, 1e-4, 1.5e21, 9.999999999999999e20, 5e-324, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 70, 1 / 3])
      near(x);
    const finite = doubles.filter((x) => Number.isFinite(x) && x !== 0);
    const ours = finite.map((x) => serialize(new PhpFloat(x)));
    const theirs = phpReserialize(ours);
    const disagreements = ours
      .map((bytes, i) => ({ ours: bytes.toString('latin1'), php: String(theirs[i]) }))
      .filter(({ ours, php }) => ours !== php);
    expect(disagreements.slice(0, 3)).toEqual([]);
    expect(theirs).toHaveLength(finite.length);
  });
});

describe('floats read as PHP reads them', () => {
  // Decimal spellings of every shape: PHP's own and others (leading and trailing zeros, too many
  // digits, tiny and huge), either side of the 15-digit and 1e-4 lines the quick reader draws.
  const spelling = fc
    .tuple(
      fc.boolean(),
      fc.stringMatching(/^(0|[1-9][0-9]{0,17}|0[0-9]{1,3})$/),
      fc.option(fc.stringMatching(/^[0-9]{1,20}$/), { nil: undefined }),
    )
    .map(([negative, whole, fraction]) => `${negative ? '-' : ''}${whole}${fraction === undefined ? '' : '.' + fraction}`);

  // Scientific spellings: PHP's own (`1.5E-7`, `1.0E+25`) for every size of double, and others
  // near them (lower-case e, no `.0`, no sign, leading zeros in the exponent, digits to spare).
  const scientific = fc
    .tuple(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constantFrom('as is', 'e', 'no .0', 'no +', 'E+0', 'digit', '+', ' after', ' before'),
    )
    .map(([value, change]) => {
      const text = formatPhpFloat(value);
      if (change === 'e') return text.replace('E', 'e');
      if (change === 'no .0') return text.replace('.0E', 'E');
      if (change === 'no +') return text.replace('E+', 'E');
      if (change === 'E+0') return text.replace(/E([+-])/, 'E$10');
      if (change === 'digit') return text.replace('E', '0E');
      if (change === '+' && !text.startsWith('-')) return `+${text}`;
      if (change === ' after') return `${text} `;
      if (change === ' before') return ` ${text}`;
      return text;
    });

  function rejects(bytes: Uint8Array): boolean {
    try {
      unserialize(bytes);
      return false;
    } catch (error) {
      return error instanceof PhpUnserializeError;
    }
  }

  /** The spellings among `texts` that we read otherwise than PHP does. */
  function readOtherwise(texts: string[]) {
    const inputs = texts.map((text) => Buffer.from(`d:${text};`));
    const theirs = phpReserialize(inputs);
    expect(theirs).toHaveLength(inputs.length);
    return inputs
      .map((bytes, i) => {
        const php = String(theirs[i]);
        // What PHP refuses, we refuse too.
        if (theirs[i] instanceof Error) return { text: texts[i], php, agrees: rejects(bytes) };
        const ours = unserialize(bytes) as PhpFloat;
        const spelledAsPhp = `d:${texts[i]};` === php;
        const agrees =
          serialize(new PhpFloat(ours.value)).toString('latin1') === php &&
          (ours.source === undefined) === spelledAsPhp &&
          serialize(ours).equals(bytes);
        return { text: texts[i], php, ours: serialize(new PhpFloat(ours.value)).toString('latin1'), source: ours.source, agrees };
      })
      .filter(({ agrees }) => !agrees);
  }

  it('the same number, PhpFloat.source only where PHP would spell it otherwise, and the same bytes back', () => {
    const texts = [
      ...fc.sample(spelling, { numRuns: 4000, seed: 1122 }),
      ...[
        '0.0001',
        '0.00009999',
        '999999999999999',
        '100000000000000',
        '1000000000000000',
        '0.1',
        '-0.1',
        '0.30000000000000004',
        '123456789012345.6',
        '1.5',
      ],
    ];
    expect(readOtherwise(texts).slice(0, 3)).toEqual([]);
  });

  it("the same for scientific spellings, PHP's own and others, at every size", () => {
    const texts = [
      ...fc.sample(scientific, { numRuns: 4000, seed: 3344 }),
      '1.0E+25',
      '1E+25',
      '1.0e+25',
      '1.0E25',
      '5.0E-324',
      '1.7976931348623157E+308',
      '1.0E+21',
      '1.0E-7',
      '9.9999999999999E-7',
    ];
    expect(readOtherwise(texts).slice(0, 3)).toEqual([]);
  });

  it('the same inside a larger input, whose text the reader keeps, as bytes and as a JS string', () => {
    const texts = fc.sample(spelling, { numRuns: 2000, seed: 2211 });
    const pad = 'x'.repeat(40);
    const differ = texts.filter((text) => {
      const alone = unserialize(Buffer.from(`d:${text};`)) as PhpFloat;
      const wrapped = `a:2:{i:0;s:${pad.length}:"${pad}";i:1;d:${text};}`;
      return [unserialize(Buffer.from(wrapped)), unserialize(wrapped)].some((value) => {
        const float = (value as PhpArray).get(1) as PhpFloat;
        return !Object.is(float.value, alone.value) || float.source !== alone.source;
      });
    });
    expect(differ.slice(0, 3)).toEqual([]);
  });
});

describe('a float keeps the spelling it was read with, out of sight', () => {
  it('compares equal to one built by hand, and both write what PHP writes', () => {
    const texts = ['0.8244264064470429', '1.0E+25', '-1.5E-7', '0.1', '1.2345678901234568E+17', '-0', 'NAN'];
    const theirs = phpReserialize(texts.map((text) => Buffer.from(`d:${text};`)));
    texts.forEach((text, i) => {
      const read = unserialize(`d:${text};`) as PhpFloat;
      const built = new PhpFloat(read.value);
      expect(read).toEqual(built);
      expect(Object.keys(read)).toEqual(Object.keys(built));
      expect(serialize(read).toString('latin1')).toBe(String(theirs[i]));
      expect(serialize(built).toString('latin1')).toBe(String(theirs[i]));
    });
  });
});

describe('input given as a JS string', () => {
  it('reads the same at every size, across the reused buffer and the 64 KB cut-over', () => {
    for (const size of [0, 1, 4095, 4096, 4097, 20_000, 65_536, 70_000]) {
      for (const extra of ['', 'é']) {
        const value = PhpArray.list(['x'.repeat(size), extra, size]);
        expect(
          samePhp(unserialize(serialize(value).toString('utf8')), value),
          `a ${size}-character string${extra ? ' and é' : ''} read back differs`,
        ).toBe(true);
      }
    }
  });
});

describe('what serialize hands out', () => {
  it('writes every digit count PHP writes, up to ±(2^53−1), as PHP does', () => {
    const ints: number[] = [0, 9, 10, 2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1];
    for (let power = 10; power <= 1e15; power *= 10) ints.push(power - 1, power, power + 1);
    const values = [...ints, ...ints.filter((n) => n > 0).map((n) => -n)];
    const ours = values.map((n) => serialize(n));
    // PHP writes back what it read, and what it read is the int meant.
    const theirs = phpReserialize(ours);
    expect(ours.map((bytes) => bytes.toString('latin1'))).toEqual(
      theirs.map((bytes) => String(bytes instanceof Error ? bytes : bytes.toString('latin1'))),
    );
    expect(ours.map((bytes) => unserialize(bytes))).toEqual(values);
  });

  it('writes ints beyond 2^53, as values and as keys, as PHP writes them', () => {
    const edges = [
      2n ** 53n,
      2n ** 53n + 1n,
      2n ** 63n - 1n,
      10n ** 18n,
      10n ** 18n + 5n,
      2n ** 32n * 10n ** 9n,
      4294967296n * 2147483647n,
    ];
    const ints = [...edges, ...edges.map((n) => -n), -(2n ** 63n), 0n, 7n, -7n];
    ints.push(...fc.sample(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { numRuns: 2000, seed: 6364 }));
    // PHP makes each int from its decimal text: an oracle that shares nothing with our writer.
    const theirs = php(
      `foreach (explode(',', '${ints.join(',')}') as $s) { echo serialize((int) $s), serialize([(int) $s => null]), "\\n"; }`,
    )
      .toString('latin1')
      .split('\n');
    const ours = ints.map((n) => serialize(n).toString('latin1') + serialize(new PhpArray([n], [null])).toString('latin1'));
    const wrong = ours.map((bytes, i) => ({ int: String(ints[i]), ours: bytes, php: theirs[i] })).filter(({ ours, php }) => ours !== php);
    expect(wrong.slice(0, 3)).toEqual([]);
    expect(() => serialize(2n ** 63n)).toThrow(/64-bit range/);
    expect(() => serialize(new PhpArray([-(2n ** 63n) - 1n], [null]))).toThrow(/64-bit range/);
  });

  it('writes strings short and long as PHP does, whether all ASCII or not, wherever the other characters stand', () => {
    const texts: string[] = [];
    for (const length of [1, 2, 31, 32, 63, 64, 65, 98, 99, 100, 500, 5000]) {
      const ascii = 'abc\u0000"xyz'.repeat(length).slice(0, length);
      texts.push(ascii);
      for (const odd of ['é', 'Ł', '€', '😀', '\ud800', '\udc00'])
        texts.push(odd + ascii.slice(1), ascii.slice(0, length >> 1) + odd + ascii.slice(length >> 1), ascii + odd);
    }
    // Short text of nothing but one kind of character, encoded by hand below 64, by Node above;
    // and surrogates without their pair, which Node writes as U+FFFD.
    for (const count of [1, 16, 31, 32, 33, 63, 64])
      texts.push('é'.repeat(count), '€'.repeat(count), '😀'.repeat(count), 'a\ud800'.repeat(count), '\udc00\ud800'.repeat(count));
    const ours = texts.map((text) => serialize(PhpArray.list([text, text.length])));
    // PHP reads each back and writes it again: the same bytes only if ours were right.
    const theirs = phpReserialize(ours);
    const wrong = ours
      .map((bytes, i) => ({
        i,
        ours: bytes.toString('latin1'),
        php: theirs[i] instanceof Buffer ? theirs[i].toString('latin1') : String(theirs[i]),
      }))
      .filter(({ ours, php }) => ours !== php);
    expect(wrong.slice(0, 2)).toEqual([]);
    // A surrogate without its pair has no UTF-8: it comes back as U+FFFD, as Node writes it.
    ours.forEach((bytes, i) => expect((unserialize(bytes) as PhpArray).get(0)).toBe(Buffer.from(texts[i]!).toString()));
  });

  it('results share a slab but never each other’s bytes, and a value bigger than the slab stands alone', () => {
    const values = fc.sample(phpValue(), { numRuns: 4000, seed: 7 });
    values.splice(2000, 0, 'x'.repeat(200_000), PhpArray.list(Array.from({ length: 20_000 }, (_, i) => i)));
    const results = values.map((value) => serialize(value));
    const copies = results.map((bytes) => Buffer.from(bytes));
    for (let round = 0; round < 3; round++) for (const value of values) serialize(value);
    results.forEach((bytes, i) => expect(Buffer.compare(bytes, copies[i]!)).toBe(0));
    results.forEach((bytes, i) => expect(samePhp(unserialize(bytes), values[i]!), `value #${i} read back differs`).toBe(true));
  });

  it('a getter that serializes while another value is being written leaves that value whole', () => {
    // Nested on both sides, so that each call has arrays open around the one it writes.
    const inner = PhpArray.list(['inner', PhpArray.list([PhpArray.list([1]), 2]), 3]);
    const withGetter = {
      get nested() {
        return serialize(inner).toString('latin1');
      },
    };
    const plain = { nested: serialize(inner).toString('latin1') };
    // Plain JavaScript inside a lossless array is converted where it stands, after the first
    // string is already written: that is when the getter runs.
    const outer = (entry: object) =>
      PhpArray.list(['x'.repeat(300), PhpArray.list([PhpArray.list([entry as unknown as PhpValue, 'after']), 'later']), 'y'.repeat(300)]);
    expect(Buffer.compare(serialize(outer(withGetter)), serialize(outer(plain)))).toBe(0);
  });

  it('values that fill the slab to its last byte and past it come out whole', () => {
    // Strings whose written size steps one byte at a time, so some value ends at every offset.
    const values = Array.from({ length: 3000 }, (_, i) => PhpArray.list(['z'.repeat(i % 997), i, null]));
    const results = values.map((value) => serialize(value));
    results.forEach((bytes, i) => expect(samePhp(unserialize(bytes), values[i]!), `value #${i} read back differs`).toBe(true));
  });

  it('writes an object or enum case met again as r:N, numbered as PHP numbers it, however many came before', () => {
    for (const count of [1, 2, 5, 9, 10, 30]) {
      // Objects and enum cases, each once, then each again in reverse order, then the first again.
      const theirs = php(`enum Suit { case Hearts; case Spades; case Clubs; }
        $made = [];
        for ($i = 0; $i < ${count}; $i++) { if ($i % 3 === 2) { $made[] = Suit::cases()[$i % 2]; } else { $o = new stdClass; $o->i = $i; $made[] = $o; } }
        echo serialize(array_merge($made, array_reverse($made), [$made[0]]));`);
      const made: PhpValue[] = [];
      for (let i = 0; i < count; i++)
        made.push(i % 3 === 2 ? new PhpEnum('Suit', ['Hearts', 'Spades'][i % 2]!) : new PhpObject('stdClass', PhpArray.from([['i', i]])));
      const ours = serialize(PhpArray.list([...made, ...[...made].reverse(), made[0]!]));
      expect(ours.toString('latin1')).toBe(theirs.toString('latin1'));
    }
  });

  it('is a Buffer to everything that asks, from the slab or not', () => {
    const small = serialize(PhpArray.list(['é', 1]));
    const large = serialize('x'.repeat(100_000));
    for (const bytes of [small, large]) {
      expect(Buffer.isBuffer(bytes)).toBe(true);
      expect(bytes).toBeInstanceOf(Buffer);
      expect(bytes.constructor).toBe(Buffer);
      expect(bytes.toJSON().type).toBe('Buffer');
      expect(inspect(bytes)).toMatch(/^<Buffer 61|^<Buffer 73/);
      // Its own bytes only, not the slab's around it.
      expect(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).equals(bytes)).toBe(true);
      expect(bytes.subarray(0, 2)).toStrictEqual(Buffer.from(bytes.toString('latin1').slice(0, 2), 'latin1'));
      expect(Buffer.concat([bytes, Buffer.from(';')]).length).toBe(bytes.length + 1);
    }
    expect(small.toString('utf8')).toBe('a:2:{i:0;s:2:"é";i:1;i:1;}');
    expect(small).toStrictEqual(Buffer.from('a:2:{i:0;s:2:"é";i:1;i:1;}'));
    expect(structuredClone(small)).toEqual(new Uint8Array(Buffer.from('a:2:{i:0;s:2:"é";i:1;i:1;}')));
  });
});
