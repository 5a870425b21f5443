/**
 * Reading a job: decodePayload (JSON envelope + lossless command + typed view) against what a
 * PHP worker does, json_decode + unserialize, on the same payloads in the same run.
 *
 *   npx tsx bench/payload.ts           (SECONDS=2 for longer runs)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { decodePayload, encodePayload } from '../src/index.js';
import { opsPerSecond, seconds } from './timing.js';

const root = new URL('..', import.meta.url).pathname;

function php(payloads: string[], classes: string): number {
  const out = execFileSync('php', [`${root}php-fixture-gen/bench-payload.php`, String(seconds), classes], {
    input: payloads.join('\n'),
    encoding: 'utf8',
  });
  const result = JSON.parse(out) as { ops: number; seconds: number };
  return result.ops / result.seconds;
}

const sets: [string, string[], string][] = [
  [
    'Laravel 8.83 payloads (Debian, classes loaded in PHP)',
    execFileSync('php', [`${root}php-fixture-gen/laravel-commands.php`, '200'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean),
    'jobs',
  ],
];
const versions = readFileSync(`${root}fixtures/laravel/versions-5.8-to-12.jsonl`, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => (JSON.parse(line) as { payload: string }).payload);
sets.push(['Laravel 5.8–12 payloads (fixtures/laravel, classes absent in PHP)', versions, '']);

const rows = [
  '| payloads | PHP 8.2 json_decode + unserialize (ops/s) | decodePayload (ops/s) | ratio | encodePayload (ops/s) |',
  '|---|---:|---:|---:|---:|',
];
for (const [name, payloads, classes] of sets) {
  const bytes = payloads.reduce((sum, p) => sum + Buffer.byteLength(p), 0);
  const decoded = payloads.map((p) => decodePayload(p));
  const theirs = php(payloads, classes);
  const ours = opsPerSecond((i) => decodePayload(payloads[i]!), payloads.length);
  const encode = opsPerSecond((i) => encodePayload(decoded[i]!), payloads.length);
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  rows.push(
    `| ${name}, ${payloads.length} × ${Math.round(bytes / payloads.length)} B | ${fmt(theirs)} | ${fmt(ours)} | ${(ours / theirs).toFixed(2)}× | ${fmt(encode)} |`,
  );
}
console.log(rows.join('\n'));
