/**
 * Hostile payloads stay linear: time and peak memory of the codec on inputs built to make a
 * careless reader copy, recurse or blow up. Each case runs in a process of its own, so its peak
 * RSS (Node's own ~50 MB included) is its own.
 *
 *   npx tsx bench/hostile.ts            (CASES=serializable-1000 for only those)
 *
 * Goal for `Serializable` payloads nested 1,000 deep around 1 MB: under 0.5 s and 200 MB.
 */
import { execFileSync } from 'node:child_process';
import { serialize, unserialize } from '../src/php/index.js';

interface Case {
  name: string;
  what: string;
  input: () => Buffer;
}

/** `levels` of `C:1:"S":N:{…}` around one string of `size` bytes, built without copying it per level. */
function nestedSerializable(levels: number, size: number): Buffer {
  const inner = Buffer.from(`s:${size}:"${'x'.repeat(size)}";`);
  const heads: string[] = [];
  let length = inner.length;
  for (let i = 0; i < levels; i++) {
    const head = `C:1:"S":${length}:{`;
    heads.push(head);
    length += head.length + 1;
  }
  return Buffer.concat([Buffer.from(heads.reverse().join('')), inner, Buffer.from('}'.repeat(levels))]);
}

/** Arrays nested `levels` deep, each holding two `R:` references to the one before it. */
function referenceBomb(levels: number): Buffer {
  let entries = 'i:0;a:0:{}';
  for (let i = 1; i <= levels; i++) entries += `i:${i};a:2:{i:0;R:${i + 1};i:1;R:${i + 1};}`;
  return Buffer.from(`a:${levels + 1}:{${entries}}`);
}

const cases: Case[] = [
  { name: 'serializable-1000', what: 'Serializable nested 1,000 deep around 1 MB', input: () => nestedSerializable(1000, 1 << 20) },
  { name: 'serializable-100', what: 'Serializable nested 100 deep around 1 MB', input: () => nestedSerializable(100, 1 << 20) },
  {
    name: 'arrays-4096',
    what: "arrays nested 4,096 deep (PHP's limit)",
    input: () => Buffer.from('a:1:{i:0;'.repeat(4096) + 'N;' + '}'.repeat(4096)),
  },
  { name: 'reference-bomb-40', what: 'arrays of two R: to the one before, 40 deep', input: () => referenceBomb(40) },
];

/** The child's side: read and write one case, then report seconds and peak RSS as one JSON line. */
function run(name: string): void {
  const input = cases.find((c) => c.name === name)!.input();
  const start = process.hrtime.bigint();
  const value = unserialize(input);
  const read = Number(process.hrtime.bigint() - start) / 1e9;
  const again = process.hrtime.bigint();
  const output = serialize(value);
  const written = Number(process.hrtime.bigint() - again) / 1e9;
  if (!Buffer.from(output).equals(input)) throw new Error(`${name}: serialize(unserialize(x)) is not x`);
  console.log(JSON.stringify({ bytes: input.length, read, written, rss: process.resourceUsage().maxRSS / 1024 }));
}

function main(): void {
  const only = process.env.CASES?.split(',');
  const rows = ['| input | bytes | unserialize (s) | serialize (s) | peak RSS (MB) |', '|---|---:|---:|---:|---:|'];
  for (const c of cases) {
    if (only && !only.includes(c.name)) continue;
    const out = execFileSync(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, '--case', c.name], {
      encoding: 'utf8',
    });
    const { bytes, read, written, rss } = JSON.parse(out) as { bytes: number; read: number; written: number; rss: number };
    rows.push(`| ${c.what} | ${bytes.toLocaleString('en-US')} | ${read.toFixed(3)} | ${written.toFixed(3)} | ${Math.round(rss)} |`);
  }
  console.log(rows.join('\n'));
}

const at = process.argv.indexOf('--case');
if (at >= 0) run(process.argv[at + 1]!);
else main();
