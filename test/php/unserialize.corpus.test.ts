/**
 * Every value of the PHP corpus (PHP 8.2 serialized it, and described it in its own terms):
 * our decode re-encodes byte for byte, means what PHP says it means, and toJS shows it as the
 * contract says.
 */
import { describe as group, expect, it } from 'vitest';
import { serialize, toJS, unserialize, demangle } from '../../src/php/index.js';
import { describe, loadCorpus } from '../helpers/corpus.js';
import { normalJS } from '../helpers/normal.js';

const corpus = loadCorpus();

group('the PHP corpus', () => {
  it('has the entries and the tokens it promises', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(5000);
    const all = Buffer.concat(corpus.map((e) => e.bytes)).toString('latin1');
    for (const token of [
      'N;',
      'b:',
      'i:',
      'd:',
      's:',
      'a:',
      'O:',
      'C:',
      'E:',
      'r:',
      'R:',
      'd:INF;',
      'd:-INF;',
      'd:NAN;',
      'd:-0;',
      'd:1.0E+25;',
    ]) {
      expect(all, token).toContain(token);
    }
  });

  it('re-encodes byte for byte', () => {
    const failures = corpus.filter((entry) => !Buffer.from(serialize(unserialize(entry.bytes))).equals(entry.bytes)).map((e) => e.name);
    expect(failures).toEqual([]);
  });

  it('decodes to what PHP says it serialized', () => {
    const failures = corpus.filter((entry) => !deepEqual(describe(unserialize(entry.bytes)), entry.describe));
    expect(failures.slice(0, 3).map((e) => ({ name: e.name, ours: describe(unserialize(e.bytes)), php: e.describe }))).toEqual([]);
  });

  it('gives toJS values that agree with PHP’s description', () => {
    const failures = corpus.filter((entry) => !deepEqual(normalJS(toJS(unserialize(entry.bytes))), expectedJS(entry.describe)));
    expect(
      failures.slice(0, 3).map((e) => ({ name: e.name, ours: normalJS(toJS(unserialize(e.bytes))), php: expectedJS(e.describe) })),
    ).toEqual([]);
  });
});

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The contract's toJS, computed from PHP's description: numbers (int and float alike) as
 * {num}, lists as {list}, other arrays and objects as {record} (objects with their class and
 * plain names, the object's own property winning over a parent's private one).
 */
function expectedJS(desc: any): unknown {
  if (desc === null || typeof desc !== 'object') return desc;
  if ('int' in desc) return { num: String(BigInt(desc.int)) };
  if ('float' in desc) return { num: typeof desc.float === 'number' ? String(desc.float) : desc.float };
  if ('str' in desc) return desc.str;
  if ('bin' in desc) return { bin: desc.bin };
  if ('enum' in desc) return { record: [['name', desc.case]], class: desc.enum };
  if ('custom' in desc) return { record: [], class: desc.custom };
  if ('cycle' in desc) return { cycle: desc.cycle };
  if ('array' in desc) {
    const entries = desc.array as [unknown, unknown][];
    if (entries.every(([key], i) => key === i)) return { list: entries.map(([, v]) => expectedJS(v)) };
    return { record: inJSOrder(entries.map(([k, v]) => [keyText(k), expectedJS(v)])) };
  }
  const className = desc.object as string;
  const record = new Map<string, unknown>();
  const foreign = new Set<string>();
  for (const [key, value] of desc.props as [unknown, unknown][]) {
    const prop =
      typeof key === 'string' && !key.startsWith('#int:') ? demangle(key) : { name: keyText(key), visibility: 'public' as const };
    const isForeign = prop.visibility === 'private' && 'declaringClass' in prop && prop.declaringClass !== className;
    if (record.has(prop.name) && (isForeign || !foreign.has(prop.name))) continue;
    if (isForeign) foreign.add(prop.name);
    else foreign.delete(prop.name);
    record.set(prop.name, expectedJS(value));
  }
  return { record: inJSOrder([...record]), class: className };
}

/**
 * A JS object lists integer-like keys first, ascending, whatever order they were set in; PHP's
 * order lives on in the lossless PhpArray. Later duplicates win, as in PHP.
 */
function inJSOrder(entries: [string, unknown][]): [string, unknown][] {
  const object: Record<string, unknown> = Object.create(null);
  for (const [key, value] of entries) object[key] = value;
  return Object.keys(object).map((key) => [key, object[key]]);
}

function keyText(key: unknown): string {
  return typeof key === 'string' && key.startsWith('#int:') ? key.slice(5) : String(key);
}
