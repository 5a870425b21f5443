/**
 * Hostile input: lengths and counts that lie, nesting without end, names that would reach a
 * prototype. Each must end in a PhpUnserializeError at once, or in a value that touches nothing.
 */
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  PhpUnserializeError,
  toJS,
  unserialize,
  phpClassOf,
  PhpIncompleteObject,
  serialize,
  PhpObject,
  type PhpArray,
  type PhpRef,
  type PhpSerializable,
} from '../../src/php/index.js';
import { php } from '../helpers/php.js';

function errorOf(input: string | Uint8Array, options = {}): PhpUnserializeError {
  try {
    unserialize(input, options);
  } catch (error) {
    expect(error).toBeInstanceOf(PhpUnserializeError);
    return error as PhpUnserializeError;
  }
  throw new Error(`no error for ${JSON.stringify(String(input))}`);
}

describe('claims larger than the input', () => {
  it.each([
    ['a:2147483647:{', 2],
    ['s:999999999:"a"', 2],
    ['O:999999999:"', 2],
    ['C:3:"Foo":99999999999:{', 10],
    ['a:99999999999999999999999999999999:{}', 2],
  ])('%s fails where the claim is, naming it', (input, offset) => {
    const error = errorOf(input);
    expect(error.offset).toBe(offset);
    expect(error.message).toMatch(/more than the input could hold|runs past the end/);
  });

  it('a string whose length is one byte short or long is caught at the closing quote', () => {
    expect(errorOf('s:2:"abc";').offset).toBe(7);
    expect(errorOf('s:4:"abc";').message).toMatch(/expected '"'/);
  });
});

describe('nesting', () => {
  it('beyond maxDepth is an error at the array that went too deep', () => {
    const deep = 'a:1:{i:0;'.repeat(20) + 'N;' + '}'.repeat(20);
    expect(() => unserialize(deep, { maxDepth: 20 })).not.toThrow();
    const error = errorOf(deep, { maxDepth: 19 });
    expect(error.message).toMatch(/maxDepth 19/);
    expect(error.offset).toBe(19 * 9 + 5);
  });

  it('a million open arrays end in the typed error, not a stack overflow', () => {
    const input = 'a:1:{i:0;'.repeat(1_000_000);
    expect(errorOf(input).message).toMatch(/maxDepth 4096/);
    const unlimited = errorOf(input, { maxDepth: Infinity });
    expect(unlimited.message).toMatch(/expected a value/);
    expect(unlimited.offset).toBe(input.length);
  });

  it('a value nested a million deep is read and written without recursion', () => {
    const deep = 'a:1:{i:0;'.repeat(1_000_000) + 'N;' + '}'.repeat(1_000_000);
    const value = unserialize(deep, { maxDepth: Infinity });
    expect(Buffer.from(serialize(value, { maxDepth: Infinity })).toString()).toBe(deep);
  });

  it('Serializable payloads nested in one another are read as deep as PHP writes them here, then refused', () => {
    // Each payload is tried as serialized values, by recursion: PHP writes 500 levels in a breeze.
    const chain = php(`error_reporting(0);
      class Wrap implements Serializable {
        public $x;
        function __construct($x = null) { $this->x = $x; }
        function serialize() { return serialize($this->x); }
        function unserialize($s) { $this->x = unserialize($s); }
      }
      $v = 1; for ($i = 0; $i < 500; $i++) $v = new Wrap([$v]);
      echo serialize(['head', $v]);`);
    expect(Buffer.compare(serialize(unserialize(chain)), chain)).toBe(0);
    // Twenty thousand levels are past any call stack: a typed error at the first payload's C:.
    let deep = 'i:1;';
    for (let i = 0; i < 20_000; i++) deep = `C:1:"S":${deep.length}:{${deep}}`;
    const input = `a:2:{i:0;s:4:"head";i:1;${deep}}`;
    const error = errorOf(input);
    expect(error.message).toMatch(/nested deeper than the call stack allows/);
    expect(error.offset).toBe(input.indexOf('C:'));
  });

  it('Serializable payloads nested in one another are views of one copy, not a copy per level', () => {
    // 1,000 levels around 100 KB: a copy per level would hold 100 MB; views of one copy hold 100 KB.
    const levels = 1000;
    let chain = `s:${100_000}:"${'x'.repeat(100_000)}";`;
    for (let i = 0; i < levels; i++) chain = `C:1:"S":${chain.length}:{${chain}}`;
    // The root takes slot 1, the payloads 2 to levels + 1, outermost first: r: names the innermost.
    const input = `a:2:{i:0;${chain}i:1;r:${levels + 1};}`;
    const value = unserialize(input) as PhpArray;
    const outer = value.values[0] as PhpSerializable;
    const innermost = (value.values[1] as PhpRef).target as PhpSerializable;
    expect(Buffer.from(innermost.data).toString(), 'the innermost payload').toBe(`s:${100_000}:"${'x'.repeat(100_000)}";`);
    expect(innermost.data.buffer, "the innermost payload shares the outermost one's memory").toBe(outer.data.buffer);
    expect(outer.data.buffer.byteLength, 'one copy, the size of the outermost payload').toBeLessThan(2 * chain.length);
    // Read from a string, the input's bytes sit in a buffer the next call reuses: the payloads must not.
    unserialize(`s:${input.length}:"${'y'.repeat(input.length)}";`);
    expect(Buffer.from(innermost.data).toString(), 'the innermost payload after another call').toBe(
      `s:${100_000}:"${'x'.repeat(100_000)}";`,
    );
    expect(Buffer.from(serialize(value)).toString() === input, 'written back byte for byte').toBe(true);
  });

  it("the default depth is PHP's: 4096 levels read, 4097 refused at the offset PHP names", () => {
    const nested = (n: number) => 'a:1:{i:0;'.repeat(n) + 'N;' + '}'.repeat(n);
    const ok = nested(4096);
    expect(Buffer.from(serialize(unserialize(ok))).toString()).toBe(php(`echo serialize(unserialize('${ok}'));`).toString());
    const phpSays = php(`@unserialize('${nested(4097)}'); echo error_get_last()['message'];`).toString();
    expect(phpSays).toMatch(/Error at offset \d+/);
    expect(errorOf(nested(4097)).offset).toBe(Number(/offset (\d+)/.exec(phpSays)![1]));
  });
});

describe('prototypes', () => {
  it('keys named __proto__, constructor and prototype stay own data', () => {
    const input = php(
      `$o = new stdClass; $o->{'__proto__'} = ['polluted' => true]; $o->constructor = 1; $o->prototype = 2;` +
        `echo serialize(['__proto__' => ['polluted' => true], 'o' => $o]);`,
    );
    const js = toJS(unserialize(input)) as Record<string, Record<string, unknown>>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(js)).toBeNull();
    expect(Object.keys(js)).toEqual(['__proto__', 'o']);
    expect(js['__proto__']).toEqual({ polluted: true });
    expect(Object.keys(js.o!)).toEqual(['__proto__', 'constructor', 'prototype']);
    expect(phpClassOf(js.o)).toBe('stdClass');
  });
});

describe('allowedClasses', () => {
  it('keeps classes not allowed out the way PHP does, and writes them back unchanged', () => {
    const input = php(`echo serialize([new ArrayObject([1]), (object) ['a' => 1]]);`);
    const value = unserialize(input, { allowedClasses: ['stdclass'] });
    const [first, second] = (value as { values: PhpObject[] }).values;
    expect(first).toBeInstanceOf(PhpIncompleteObject);
    expect((first as PhpIncompleteObject).originalClassName).toBe('ArrayObject');
    expect(second).not.toBeInstanceOf(PhpIncompleteObject);
    expect(
      php(
        `var_dump(unserialize(${JSON.stringify(input.toString('latin1'))}, ['allowed_classes' => ['stdClass']])[0] instanceof __PHP_Incomplete_Class);`,
      ).toString(),
    ).toContain('true');
    // Written back as it was read, under its own class name.
    expect(Buffer.compare(serialize(value), input)).toBe(0);
  });

  it('writes an incomplete object back under its class name, as PHP does', () => {
    const input = php(`class Shipment { public $id = 7; protected $note = 'x'; } echo serialize([new Shipment, (object) ['a' => 1]]);`);
    const value = unserialize(input, { allowedClasses: false });
    const phpAgain = php(`echo serialize(unserialize(base64_decode('${input.toString('base64')}'), ['allowed_classes' => false]));`);
    expect(Buffer.compare(serialize(value), phpAgain)).toBe(0);
    expect(Buffer.compare(serialize(value), input)).toBe(0);
  });
});

describe('trailing bytes', () => {
  it('are an error unless allowed, as PHP would ignore them', () => {
    expect(errorOf('i:1;junk').offset).toBe(4);
    expect(unserialize('i:1;junk', { allowTrailing: true })).toBe(1);
  });
});

describe('size', () => {
  it('an input over maxBytes is refused before it is read', () => {
    expect(errorOf('s:3:"abc";', { maxBytes: 5 }).message).toMatch(/over the limit of 5/);
  });
});

describe('ints at the edges', () => {
  it('either side of 2^53 and up to 2^63, with leading zeros or a plus sign, read as PHP reads them', () => {
    const inputs = [
      '9007199254740991',
      '9007199254740992',
      '-9007199254740993',
      '9223372036854775807',
      '-9223372036854775808',
      '00000000000000000000007',
      '+00000000000000000009007199254740993',
      '-0',
    ];
    const ours = inputs.map((digits) => serialize(unserialize(`i:${digits};`)).toString('latin1'));
    const theirs = inputs.map((digits) => php(`echo serialize(unserialize('i:${digits};'));`).toString('latin1'));
    expect(ours).toEqual(theirs);
    expect(unserialize('i:9007199254740991;')).toBe(Number.MAX_SAFE_INTEGER);
    expect(unserialize('i:9007199254740992;')).toBe(2n ** 53n);
  });

  it('every int64, spelled with leading zeros or a plus sign or neither, reads as PHP reads it', () => {
    const ints = fc.sample(fc.tuple(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.constantFrom('', '0', '000', '+', '+00')), {
      numRuns: 2000,
      seed: 6463,
    });
    const texts = ints.map(([n, prefix]) =>
      prefix.startsWith('+') ? (n < 0n ? String(n) : prefix + String(n)) : n < 0n ? '-' + prefix + String(-n) : prefix + String(n),
    );
    const ours = texts.map((digits) => serialize(unserialize(`i:${digits};`)).toString('latin1'));
    const theirs = php(`foreach (explode(',', '${texts.join(',')}') as $s) { echo serialize(unserialize("i:$s;")), "\\n"; }`)
      .toString('latin1')
      .split('\n')
      .slice(0, texts.length);
    const wrong = texts.map((text, i) => ({ text, ours: ours[i], php: theirs[i] })).filter(({ ours, php }) => ours !== php);
    expect(wrong.slice(0, 3)).toEqual([]);
  });

  it('beyond 64 bits is an error at the int, where PHP would quietly saturate', () => {
    expect(errorOf('a:1:{i:0;i:9223372036854775808;}').offset).toBe(11);
    expect(errorOf('i:-9223372036854775809;').message).toMatch(/64-bit range/);
    for (const digits of [
      '9223372036854775808',
      '18446744073709551615',
      '18446744073709551616',
      '-18446744073709551617',
      '100000000000000000000000000000',
      '0009223372036854775808',
    ]) {
      expect(errorOf(`i:${digits};`).message).toMatch(/64-bit range/);
    }
  });
});

describe('bytes that are not UTF-8', () => {
  it('stay bytes, however close they come to valid text, and valid text stays a string', () => {
    // U+FFFD itself is valid; a lone 0xff, a cut-off sequence, an encoded surrogate are not.
    const input = php(
      `echo serialize(["\\u{FFFD}", "\\xff", "a\\u{FFFD}\\xff", "é\\u{FFFD}", "\\xe2\\x82", "\\xed\\xa0\\x80", "ümlaut"]);`,
    );
    const { values } = unserialize(input) as unknown as { values: unknown[] };
    expect(values.map((v) => typeof v)).toEqual(['string', 'object', 'object', 'string', 'object', 'object', 'string']);
    expect(values[0]).toBe('\ufffd');
    expect(values[3]).toBe('é\ufffd');
    expect(Buffer.compare(serialize(unserialize(input)), input)).toBe(0);
    // A JS string input is read as UTF-8, U+FFFD included.
    expect(unserialize('s:3:"\ufffd";')).toBe('\ufffd');
  });

  it('are told from text as Node tells them, for every short run of bytes, alone or in a larger input', () => {
    // Bytes near every edge of UTF-8: leads, continuations, overlong and surrogate starts, the end of Unicode.
    const byte = fc.oneof(
      fc.integer({ min: 0, max: 255 }),
      fc.constantFrom(0x7f, 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x9f, 0xa0, 0x8f, 0x90),
    );
    const runs = fc.sample(
      fc
        .uint8Array({ minLength: 0, maxLength: 30 })
        .chain((head) => fc.array(byte, { maxLength: 8 }).map((tail) => [...head.slice(0, 20), ...tail])),
      { numRuns: 5000, seed: 7788 },
    );
    runs.push(
      [0xf4, 0x8f, 0xbf, 0xbf],
      [0xf4, 0x90, 0x80, 0x80],
      [0xed, 0x9f, 0xbf],
      [0xed, 0xa0, 0x80],
      [0xe0, 0xa0, 0x80],
      [0xe0, 0x9f, 0xbf],
      [0xf0, 0x90, 0x80, 0x80],
      [0xf0, 0x8f, 0xbf, 0xbf],
      [0xc2, 0x80],
      [0xe2, 0x82],
    );
    const wrong = runs.filter((run) => {
      const bytes = Buffer.from(run);
      const expected = isUtf8(bytes) ? bytes.toString('utf8') : bytes;
      const alone = unserialize(Buffer.concat([Buffer.from(`s:${bytes.length}:"`), bytes, Buffer.from('";')]));
      // In an input long enough to keep its text, after a non-ASCII string and before another.
      const wrapped = unserialize(
        Buffer.concat([
          Buffer.from('a:3:{i:0;s:2:"\xc3\xa9";i:1;s:' + bytes.length + ':"', 'latin1'),
          bytes,
          Buffer.from('";i:2;s:20:"' + 'x'.repeat(20) + '";}'),
        ]),
      ) as unknown as { values: unknown[] };
      return [alone, wrapped.values[1]].some((value) =>
        typeof expected === 'string' ? value !== expected : !(value instanceof Uint8Array) || !Buffer.from(value).equals(expected),
      );
    });
    expect(wrong.slice(0, 3)).toEqual([]);
  });
});
