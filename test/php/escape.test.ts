/**
 * Names whose bytes are not UTF-8: PHP allows bytes 0x80 to 0xff in class names (its own tests
 * use Latin-1 ones), reads them and writes them back unchanged. PHP makes every input here.
 */
import fc from 'fast-check';
import { isUtf8 } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { escapeBytes, escapedBytes, hasEscapes } from '../../src/php/escape.js';
import { PhpEnum, PhpObject, PhpSerializable, phpClassOf, serialize, toJS, unserialize, type PhpArray } from '../../src/php/index.js';
import { php } from '../helpers/php.js';

describe('class names in Latin-1', () => {
  it('an unknown one reads as PHP reads it, and PHP writes it back as it was', () => {
    const input = Buffer.from('O:3:"\xe4bc":0:{}', 'latin1');
    const phpSays = php(
      `$v = unserialize(base64_decode('${input.toString('base64')}')); echo get_class($v), "\\n", base64_encode(serialize($v));`,
    )
      .toString()
      .split('\n');
    expect(phpSays[0]).toBe('__PHP_Incomplete_Class');
    expect(Buffer.from(phpSays[1]!, 'base64').equals(input)).toBe(true);
    const value = unserialize(input) as PhpObject;
    expect(value.className).toBe('\udce4bc');
    expect(Buffer.compare(serialize(value), input)).toBe(0);
  });

  it('in O:, C: and E:, as PHP 8.2 writes them, come back byte for byte', () => {
    const input =
      php(`eval("enum \\xe4num { case \\xf6ne; } class \\xe4bc implements Serializable { function serialize() { return 'xy'; } function unserialize(\\$s) {} } class K\\xfc { public \\$p = 1; }");
      echo @serialize([new ("\\xe4bc"), constant("\\xe4num::\\xf6ne"), new ("K\\xfc")]);`);
    expect(input.includes(Buffer.from('O:2:"K\xfc"', 'latin1'))).toBe(true);
    const [custom, enumCase, object] = (unserialize(input) as PhpArray).values as [PhpSerializable, PhpEnum, PhpObject];
    expect([custom.className, enumCase.className, enumCase.caseName, object.className]).toEqual([
      '\udce4bc',
      '\udce4num',
      '\udcf6ne',
      'K\udcfc',
    ]);
    expect(phpClassOf(toJS(object))).toBe('K\udcfc');
    expect(Buffer.compare(serialize(unserialize(input)), input)).toBe(0);
  });

  it('a class name that is UTF-8 stays plain text', () => {
    const input = php('eval("class Ärger {}"); echo serialize(new Ärger);');
    expect((unserialize(input) as PhpObject).className).toBe('Ärger');
    expect(Buffer.compare(serialize(unserialize(input)), input)).toBe(0);
  });
});

describe('the escaped spelling', () => {
  it('gives back every run of bytes, and escapes only what is not UTF-8', () => {
    const byte = fc.constantFrom(
      0x41,
      0x80,
      0xbf,
      0xc2,
      0xc3,
      0xa9,
      0xe0,
      0xe2,
      0x82,
      0xac,
      0xed,
      0xa0,
      0xf0,
      0x9f,
      0x98,
      0x80,
      0xf4,
      0x90,
      0xff,
    );
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 12 }), (run) => {
        const bytes = Buffer.from(run);
        const text = escapeBytes(bytes);
        expect(escapedBytes(text).equals(bytes), `bytes ${bytes.toString('hex')} come back`).toBe(true);
        expect(hasEscapes(text), `escapes in ${bytes.toString('hex')} only when it is not UTF-8`).toBe(!isUtf8(bytes));
        if (isUtf8(bytes)) expect(text).toBe(bytes.toString('utf8'));
      }),
      { numRuns: 3000, seed: 1313 },
    );
  });
});
