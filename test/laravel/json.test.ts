/**
 * JSON as PHP writes it: our encoder against PHP's json_encode on generated strings, in both
 * escaping styles Laravel uses, and the reader keeping ints, floats and key order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeJson, encodeJson, encodeString } from '../../src/laravel/index.js';
import { PhpFloat } from '../../src/php/index.js';
import { php, runPhpScript } from '../helpers/php.js';

describe('encodeString', () => {
  it("matches PHP's json_encode with and without JSON_UNESCAPED_UNICODE", () => {
    const strings = fc
      .sample(
        fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.string({ unit: 'grapheme' }),
          fc.constantFrom('a/b', '\u2028\u2029', '\u0000*\u0000job', '\x7f', '"\\'),
        ),
        {
          numRuns: 2000,
          seed: 7,
        },
      )
      .map((s) =>
        s.replace(/[\ud800-\udfff]/g, (c, i: number, all: string) =>
          /[\ud800-\udbff][\udc00-\udfff]/.test(all.slice(i - 1, i + 1) + all.slice(i, i + 2)) ? c : 'x',
        ),
      );
    const lines = runPhpScript('json-encode.php', strings.map((s) => Buffer.from(s).toString('base64')).join('\n') + '\n').split('\n');
    const mismatches = strings
      .map((s, i) => ({ s, php: lines[i]!.split('\t'), ours: [encodeString(s, false), encodeString(s, true)] }))
      .filter(({ php, ours }) => php[0] !== ours[0] || php[1] !== ours[1]);
    expect(mismatches.slice(0, 3)).toEqual([]);
  });
});

describe('encodeJson and decodeJson', () => {
  it('write what PHP writes for numbers, lists and objects, and read it back the same', () => {
    const phpJson = php(
      `echo json_encode(['i' => 1, 'big' => PHP_INT_MAX, 'f' => 1.5, 'whole' => 10.0, 'e' => 1e25, 'small' => 1e-7, 'neg' => -0.0, 'list' => [1, [], (object) []], '7' => 'x', 'n' => null, 't' => true]);`,
    ).toString();
    const value = decodeJson(phpJson);
    expect(encodeJson(value)).toBe(phpJson);
    expect(value).toBeInstanceOf(Map); // '7' is an integer-like key: a JS object would move it
    const map = value as Map<string, unknown>;
    expect(map.get('big')).toBe(9223372036854775807n);
    expect(map.get('f')).toEqual(new PhpFloat(1.5));
    expect(map.get('whole')).toBe(10); // PHP writes 10.0 as 10, which reads back as an int, as in PHP
  });

  it('keeps a float spelled in a way PHP would not, so it re-encodes unchanged', () => {
    for (const text of [
      '[1.0]',
      '[1.2345678901235e+16]',
      '[1E5]',
      '[0.50]',
      '[1e-7]',
      '[-0.0]',
      '[-0]',
      '[123456789012345678.5]',
      '[9223372036854775808]',
    ])
      expect(encodeJson(decodeJson(text))).toBe(text);
  });

  it('names the character where JSON goes wrong', () => {
    expect(() => decodeJson('{"a":1,}')).toThrow(/at character 7/);
    expect(() => decodeJson('[1 2]')).toThrow(/expected , or \]/);
    expect(() => decodeJson('"abc')).toThrow(/unterminated string/);
    expect(() => decodeJson('['.repeat(600))).toThrow(/deeper than 512/);
  });

  it('keeps key order as PHP does through an integer-like key, "__proto__" and a repeated key', () => {
    for (const text of ['{"a":1,"__proto__":{"x":1},"7":2,"a":3,"b":[]}', '{"a":1,"a":2,"10":3}', '{"0":1,"b":2,"0":3}']) {
      const phpAgain = php(`echo json_encode(json_decode(${JSON.stringify(text)}, true));`).toString();
      expect(encodeJson(decodeJson(text))).toBe(phpAgain);
    }
  });

  it('reads integer-like keys deep inside, long integers and number-like text in strings as PHP does', () => {
    // Text with nothing JSON.parse reads otherwise goes to it; these sit on either side of that line.
    for (const text of [
      '{"a":{"b":{"12":1,"c":2}},"d":[{"0":1}]}',
      '[{"x":123456789012345},{"y":-123456789012345},{"z":1234567890123456},{"w":-9007199254740993}]',
      '{"s":"1.5 and -0 and {\\"7\\":1} and \\\\","n":-12,"m":0,"l":[0,-1,10]}',
    ]) {
      const phpAgain = php(`echo json_encode(json_decode(${JSON.stringify(text)}));`).toString();
      expect(encodeJson(decodeJson(text)), text).toBe(phpAgain);
    }
    expect(decodeJson('{"a":{"12":1,"c":2}}')).toEqual({
      a: new Map<string, unknown>([
        ['12', 1],
        ['c', 2],
      ]),
    });
    expect(decodeJson('[1234567890123456789]')).toEqual([1234567890123456789n]);
  });

  it('reads JSON nested 512 levels deep, as PHP does, and refuses 513', () => {
    expect(() => decodeJson('['.repeat(512) + ']'.repeat(512))).not.toThrow();
    expect(() => decodeJson('['.repeat(513) + ']'.repeat(513))).toThrow(/deeper than 512/);
    expect(() => decodeJson('{"a":'.repeat(513) + '1' + '}'.repeat(513))).toThrow(/deeper than 512/);
    const php513 = php(`var_dump(json_decode(str_repeat('[', 513) . str_repeat(']', 513)), json_last_error_msg());`).toString();
    expect(php513).toContain('Maximum stack depth exceeded');
  });

  it('keeps "__proto__" as data', () => {
    const value = decodeJson('{"__proto__":{"polluted":1}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
