/**
 * The PHP corpus (fixtures/php/corpus.jsonl, written by php-fixture-gen/php-corpus.php) and
 * the two views the tests compare it through: PHP's own description of each value, and the
 * same description computed from our decoded value.
 */
import { readFileSync } from 'node:fs';
import { PhpArray, PhpEnum, PhpFloat, PhpObject, PhpRef, PhpSerializable, type PhpKey, type PhpValue } from '../../src/php/index.js';
import { root } from './php.js';

export interface CorpusEntry {
  name: string;
  bytes: Buffer;
  describe: unknown;
}

/** JSON numbers past 2^53 would round: keys of 16+ digits are read as marked strings instead. */
const BIG_KEY = /\[(-?\d{16,}),/g;
const bigKey = (digits: string) => `#int:${digits}`;

export function loadCorpus(): CorpusEntry[] {
  return readFileSync(`${root}fixtures/php/corpus.jsonl`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const entry = JSON.parse(line.replace(BIG_KEY, (_, digits: string) => `[${JSON.stringify(bigKey(digits))},`)) as {
        name: string;
        b64: string;
        describe: unknown;
      };
      return { name: entry.name, bytes: Buffer.from(entry.b64, 'base64'), describe: entry.describe };
    });
}

/** Our value in the tagged form php-corpus.php writes (see its header for the format). */
export function describe(value: PhpValue, open: Set<object> = new Set()): unknown {
  if (value instanceof PhpRef) return describe(value.target, open);
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return { int: String(value) };
  if (typeof value === 'string') return { str: value };
  if (value instanceof Uint8Array) return { bin: Buffer.from(value).toString('base64') };
  if (value instanceof PhpFloat) return { float: floatTag(value.value) };
  if (value instanceof PhpEnum) return { enum: value.className, case: value.caseName };
  if (value instanceof PhpSerializable) {
    const data = Buffer.from(value.data);
    return {
      custom: value.className,
      data: describe(data.toString('utf8') === data.toString('latin1') || isUtf8(data) ? data.toString('utf8') : new Uint8Array(data)),
    };
  }
  if (value instanceof PhpObject && open.has(value)) return { cycle: value.className };
  open.add(value);
  try {
    const entries = (value instanceof PhpArray ? value : value.props).keys.map((key, i) => [
      describeKey(key),
      describe((value instanceof PhpArray ? value : value.props).values[i]!, open),
    ]);
    return value instanceof PhpArray ? { array: entries } : { object: value.className, props: entries };
  } finally {
    open.delete(value);
  }
}

function isUtf8(data: Buffer): boolean {
  return Buffer.from(data.toString('utf8'), 'utf8').equals(data);
}

function describeKey(key: PhpKey): unknown {
  if (typeof key === 'string') return key;
  if (key instanceof Uint8Array) return Buffer.from(key).toString('latin1');
  return String(key).replace('-', '').length >= 16 ? bigKey(String(key)) : Number(key);
}

function floatTag(x: number): number | string {
  if (Number.isNaN(x)) return 'NAN';
  if (x === Infinity) return 'INF';
  if (x === -Infinity) return '-INF';
  if (Object.is(x, -0)) return '-0';
  return x;
}
