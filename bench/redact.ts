/**
 * Scrubbing secrets out of a line, before and after issue 42: the old patterns (copied here) and
 * the walk in src/connect/redact.ts, on texts built to make a backtracking pattern retry, 10 KB to
 * 1 MB. The old one is skipped at a size once the size before took over OLD_BUDGET_MS (it grows
 * with the square: the table says what it would have taken, roughly).
 *
 *   npx tsx bench/redact.ts            (SIZES=10000,1048576 to choose the sizes)
 */
import { performance } from 'node:perf_hooks';
import { keepSecret, redactSecrets } from '../src/connect/redact.js';

/** The scrubber before issue 42, as it was: kept secrets by split/join, URLs by three patterns. */
function oldRedactSecrets(line: string, kept: string[]): string {
  let text = line;
  if (line.includes('@') || line.includes('=')) {
    text = text.replace(/([a-z][a-z0-9+.-]*:\/\/)([^:@/\s"']*):[^\s"']*@/gi, '$1$2:***@');
    text = text.replace(/(^|[\s"'/=(])([^:@/\s"'=]*):[^/\s"']*@/g, '$1$2:***@');
    text = text.replace(/([?&](?:password|pass|pwd)=)[^&\s"']*/gi, '$1***');
  }
  for (const secret of kept) if (text.includes(secret)) text = text.split(secret).join('***');
  return text;
}

const SECRETS = ['Pa55-w0rd!secret', `base64:${Buffer.alloc(32, 7).toString('base64')}`, 'aaaaaaaaaaab'];
for (const secret of SECRETS) keepSecret(secret);
const KEPT = [...new Set(SECRETS.flatMap((s) => [s, encodeURIComponent(s)]))].sort((a, b) => b.length - a.length);

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function base64Run(size: number): string {
  let out = '';
  let state = 42;
  while (out.length < size) {
    state = (state * 1103515245 + 12345) >>> 0;
    out += BASE64[state & 63];
  }
  return out;
}

const CASES: [string, (size: number) => string][] = [
  ['JSON pad + "b=c" (the issue)', (n) => `{"pad":"${'x'.repeat(n)}","a":"b=c"}`],
  ['base64 with "=" every 4 KB', (n) => base64Run(n).replace(/(.{4096})/g, '$1=')],
  ['"a://" repeated, "@" at the end', (n) => `${'a://'.repeat(n / 4)} @`],
  ['"(" repeated, ":" then "="', (n) => `${'('.repeat(n)}:=`],
  ['"a" repeated (secret aaa…b near it)', (n) => `${'a'.repeat(n)}=`],
];

const OLD_BUDGET_MS = 3000;
const sizes = (process.env.SIZES ?? '10000,20000,40000,100000,1048576').split(',').map(Number);

/** The median of three runs, in ms. */
function timed(run: () => unknown): number {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[1]!;
}

const rows: string[][] = [['case', 'characters', 'old (ms)', 'new (ms)']];
for (const [name, make] of CASES) {
  let lastOld: { size: number; ms: number } | undefined;
  for (const size of sizes) {
    const text = make(size);
    let old: string;
    if (lastOld && lastOld.ms > OLD_BUDGET_MS) {
      old = `skipped (~${Math.round((lastOld.ms * (size / lastOld.size) ** 2) / 1000)} s)`;
    } else {
      // One run only when a run is long: the old patterns at 100 KB take seconds each.
      const started = performance.now();
      const expected = oldRedactSecrets(text, KEPT);
      const first = performance.now() - started;
      const ms = first > 500 ? first : timed(() => oldRedactSecrets(text, KEPT));
      if (redactSecrets(text) !== expected) throw new Error(`${name} at ${size}: the new scrubber's line differs from the old one's`);
      lastOld = { size, ms };
      old = ms.toFixed(1);
    }
    rows.push([name, String(text.length), old, timed(() => redactSecrets(text)).toFixed(1)]);
  }
}

const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
for (const row of rows) console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
