/**
 * Differential: on every corpus input the `php-serialize` package can read, our toJS and its
 * result agree, except in the cases listed below, where it is wrong and we are not.
 */
import phpSerialize from 'php-serialize';
import { describe, expect, it } from 'vitest';
import { toJS, unserialize } from '../../src/php/index.js';
import { loadCorpus } from '../helpers/corpus.js';
import { normalJS } from '../helpers/normal.js';

/** Why php-serialize disagrees, each with a test of the input that shows it. */
const itsMistakes: Record<string, (bytes: Buffer, ours: unknown, theirs: unknown) => boolean> = {
  // It reads d:-0 as 0n, and throws on INF/NAN: PHP's special floats are lost.
  'special floats (-0, INF, -INF, NAN) come out wrong': (bytes) => /d:(-0|-?INF|NAN);/.test(bytes.toString('latin1')),
  // It assigns keys with `obj[key] = …`, so "__proto__" replaces the object's prototype instead of holding data.
  'a "__proto__" key sets the prototype and its data is lost': (bytes) => bytes.includes('"__proto__"'),
  // It decodes every string as UTF-8, turning bytes that are not UTF-8 into U+FFFD.
  'strings that are not UTF-8 are mangled': (_, ours) => JSON.stringify(ours).includes('"bin"'),
  // It strips visibility without rule, so a parent's private property can replace the object's own.
  "a parent's private property of the same name wins over the object's own": (bytes) => sharesName(bytes),
  // It keys numbers as JS numbers above 2^53 in arrays and objects the same way we do, but
  // reads an int beyond the safe range inside an integer-like string key as a rounded number.
  'int keys beyond 2^53 are rounded': (bytes) => /i:-?\d{16,};/.test(bytes.toString('latin1')),
  // It leaves some private names mangled ("\0Parent\0name") when the value before them confuses its scanner.
  'some private property names stay mangled': (_, __, theirs) => JSON.stringify(theirs).includes('\\u0000'),
};

/** True when one object holds two properties with the same plain name (e.g. \0A\0x and \0B\0x). */
function sharesName(bytes: Buffer): boolean {
  const names = [...bytes.toString('latin1').matchAll(/s:\d+:"\0[^\0"]*\0([^"]*)";/g)].map((m) => m[1]);
  return new Set(names).size < names.length;
}

describe('against php-serialize', () => {
  const corpus = loadCorpus();
  const results = corpus.map((entry) => {
    let theirs: unknown;
    try {
      theirs = phpSerialize.unserialize(entry.bytes, {}, { strict: false });
    } catch {
      return { entry, read: false };
    }
    const ours = normalJS(toJS(unserialize(entry.bytes)));
    const normalTheirs = normalJS(theirs, new Set(), (o) => (o as { __PHP_Incomplete_Class_Name?: string }).__PHP_Incomplete_Class_Name);
    return { entry, read: true, agree: JSON.stringify(ours) === JSON.stringify(normalTheirs), ours, theirs: normalTheirs };
  });
  const read = results.filter((r) => r.read);

  it('reads a good share of the corpus, and agrees with us on most of it', () => {
    expect(read.length).toBeGreaterThan(corpus.length / 3);
    expect(read.filter((r) => r.agree).length).toBeGreaterThan(read.length / 2);
  });

  it('disagrees only where it is wrong, for a reason listed here', () => {
    const unexplained = read
      .filter((r) => !r.agree)
      .filter((r) => !Object.values(itsMistakes).some((isCase) => isCase(r.entry.bytes, r.ours, r.theirs)))
      .map((r) => r.entry.name);
    expect(unexplained).toEqual([]);
  });

  it('each listed mistake really occurs in the corpus', () => {
    for (const [reason, isCase] of Object.entries(itsMistakes)) {
      const shown = read.some((r) => !r.agree && isCase(r.entry.bytes, r.ours, r.theirs));
      expect(shown, reason).toBe(true);
    }
  });
});
