/**
 * Codec throughput, side by side in one run: ours, the `php-serialize` package, and PHP's
 * native functions (timed by php-fixture-gen/bench-codec.php on the same inputs).
 *
 *   npm run bench            (SECONDS=2 for longer windows, ROUNDS=5 for more of them,
 *                            SETS=jobs,shared for only those of corpus, jobs, shared)
 *
 * Inputs: the PHP corpus in fixtures/php/, job commands Debian's Laravel 8.83 pushes here, and
 * the commands of ../shared/fixtures (Laravel 5.8 to 12). PHP unserializes into real classes
 * where it has them, as a worker does.
 *
 * Each set is timed in fresh processes on both sides, as a worker runs one kind of input: PHP
 * already was, and a Node process that first chewed through the corpus keeps code tuned to it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import phpSerialize from 'php-serialize';
import { serialize, unserialize } from '../src/php/index.js';
import { opsPerSecond, seconds } from './timing.js';

const root = new URL('..', import.meta.url).pathname;

function corpus(): Buffer[] {
  return readFileSync(`${root}fixtures/php/corpus.jsonl`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => Buffer.from((JSON.parse(line) as { b64: string }).b64, 'base64'));
}

/** Job commands real Laravel 8.83 (Debian's) pushed to Redis; PHP's side has their classes loaded. */
function laravelCommands(): Buffer[] {
  const payloads = execFileSync('php', [`${root}php-fixture-gen/laravel-commands.php`, '200'], { encoding: 'utf8' });
  return payloads.split('\n').filter(Boolean).map(commandOf);
}

/** The 200 commands of ../shared/fixtures (Laravel 5.8 to 12), whose classes PHP does not have here. */
function sharedCommands(): Buffer[] {
  const shared = `${root}../shared/fixtures/laravel-payloads.jsonl`;
  if (!existsSync(shared)) return [];
  return readFileSync(shared, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => commandOf((JSON.parse(line) as { payload: string }).payload));
}

function commandOf(payload: string): Buffer {
  return Buffer.from((JSON.parse(payload) as { data: { command: string } }).data.command, 'utf8');
}

interface Rate {
  opsPerSecond: number;
  mbPerSecond: number;
}

function time(work: (index: number) => void, count: number, bytes: number): Rate {
  const ops = opsPerSecond(work, count);
  return { opsPerSecond: ops, mbPerSecond: (bytes * ops) / count / 1e6 };
}

function phpNative(inputs: Buffer[], classes: string): { unserialize: Rate; serialize: Rate } {
  const out = execFileSync('php', [`${root}php-fixture-gen/bench-codec.php`, String(seconds), classes], {
    input: inputs.map((b) => b.toString('base64')).join('\n'),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const result = JSON.parse(out) as Record<'unserialize' | 'serialize', { ops: number; seconds: number }> & { bytes: number };
  const rate = (r: { ops: number; seconds: number }) => ({
    opsPerSecond: r.ops / r.seconds,
    mbPerSecond: (result.bytes * (r.ops / inputs.length)) / r.seconds / 1e6,
  });
  return { unserialize: rate(result.unserialize), serialize: rate(result.serialize) };
}

/** php-serialize throws on much PHP writes (enums, references, bytes); it is timed on what it reads. */
function readableByPhpSerialize(inputs: Buffer[]): Buffer[] {
  return inputs.filter((bytes) => {
    try {
      phpSerialize.unserialize(bytes.toString('utf8'), {}, { strict: false });
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * One table row. The ratio is the median of each round's own ratio, with the lowest and highest
 * after it: PHP and Node are timed one after the other in each round, so a round that lands in a
 * slow spell of the machine slows both, and its ratio still holds.
 */
function row(set: string, impl: string, op: string, rate: Rate, ratios?: number[]): string {
  const ratio = ratios ? ratioText(ratios, 2) : '';
  return `| ${set} | ${impl} | ${op} | ${Math.round(rate.opsPerSecond).toLocaleString('en-US')} | ${rate.mbPerSecond.toFixed(1)} | ${ratio} |`;
}

const ROUNDS = Number(process.env.ROUNDS ?? 3);

/** `0.61× (0.36–0.67)`: the median ratio, then the lowest and highest when there are several. */
function ratioText(ratios: number[], digits: number): string {
  const range = ratios.length > 1 ? ` (${Math.min(...ratios).toFixed(digits)}–${Math.max(...ratios).toFixed(digits)})` : '';
  return `${median(ratios).toFixed(digits)}×${range}`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The round whose rate is the median one. */
function medianRate(rates: Rate[]): Rate {
  const sorted = [...rates].sort((a, b) => a.opsPerSecond - b.opsPerSecond);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * What the Node side measures, each part in a process of its own: ours on the whole set, ours
 * on the part php-serialize reads, and php-serialize on that part. Sharing a process, each would
 * pay for the garbage and the code tuned to the others.
 */
type NodePart = 'ours' | 'oursOnReadable' | 'theirs';

interface NodeRates {
  oursRead: Rate;
  oursWrite: Rate;
  theirs: Rate;
  oursOnReadable: Rate;
}

function nodePart(part: NodePart, inputs: Buffer[]): Rate[] {
  const bytes = inputs.reduce((sum, b) => sum + b.length, 0);
  if (part === 'ours') {
    const values = inputs.map((b) => unserialize(b));
    return [time((i) => unserialize(inputs[i]!), inputs.length, bytes), time((i) => serialize(values[i]!), values.length, bytes)];
  }
  // The inputs of the last two parts are already the ones php-serialize reads.
  if (part === 'oursOnReadable') return [time((i) => unserialize(inputs[i]!), inputs.length, bytes)];
  const texts = inputs.map((b) => b.toString('utf8'));
  return [time((i) => phpSerialize.unserialize(texts[i]!, {}, { strict: false }), texts.length, bytes)];
}

/** Runs nodePart in a child process (this script with --child PART), the inputs as base64 lines on stdin. */
function nodePartApart(part: NodePart, inputs: Buffer[]): Rate[] {
  const out = execFileSync(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, '--child', part], {
    input: inputs.map((b) => b.toString('base64')).join('\n'),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  return JSON.parse(out) as Rate[];
}

function nodeRatesApart(inputs: Buffer[], readable: Buffer[]): NodeRates {
  const [oursRead, oursWrite] = nodePartApart('ours', inputs) as [Rate, Rate];
  const [oursOnReadable] = nodePartApart('oursOnReadable', readable) as [Rate];
  const [theirs] = nodePartApart('theirs', readable) as [Rate];
  return { oursRead, oursWrite, oursOnReadable, theirs };
}

if (process.argv[2] === '--child') {
  const inputs = readFileSync(0, 'utf8').split('\n').filter(Boolean).map((line) => Buffer.from(line, 'base64'));
  console.log(JSON.stringify(nodePart(process.argv[3] as NodePart, inputs)));
} else {
  const lines = ['| inputs | implementation | operation | ops/s | MB/s | vs PHP native |', '|---|---|---|---:|---:|---:|'];
  // SETS=jobs,shared times only those sets (corpus, jobs, shared).
  const only = process.env.SETS?.split(',');
  const sets: [string, string, () => Buffer[], string][] = [
    ['corpus', 'PHP corpus', corpus, 'corpus'],
    ['jobs', 'Laravel 8.83 job commands', laravelCommands, 'jobs'],
    ['shared', 'Laravel 5.8–12 commands, classes absent in PHP', sharedCommands, 'jobs'],
  ];
  for (const [id, name, load, classes] of sets) {
    if (only && !only.includes(id)) continue;
    const inputs = load();
    if (inputs.length === 0) continue;
    const bytes = inputs.reduce((sum, b) => sum + b.length, 0);
    const label = `${name} (${inputs.length}, ${(bytes / inputs.length).toFixed(0)} B avg)`;
    // PHP and Node take turns, ROUNDS times, and each figure is the median of its rounds: on a
    // shared machine a single window can land in someone else's burst.
    const readable = readableByPhpSerialize(inputs);
    const rounds = Array.from({ length: ROUNDS }, () => ({ native: phpNative(inputs, classes), ours: nodeRatesApart(inputs, readable), nativeOnReadable: phpNative(readable, classes) }));
    const ratios = (ours: (r: (typeof rounds)[number]) => Rate, base: (r: (typeof rounds)[number]) => Rate) =>
      rounds.map((r) => ours(r).opsPerSecond / base(r).opsPerSecond);
    const rate = (pick: (r: (typeof rounds)[number]) => Rate) => medianRate(rounds.map(pick));
    const one = [1];

    lines.push(row(label, 'PHP 8.2 native', 'unserialize', rate((r) => r.native.unserialize), one));
    lines.push(row(label, 'laravel-queue-bridge', 'unserialize', rate((r) => r.ours.oursRead), ratios((r) => r.ours.oursRead, (r) => r.native.unserialize)));
    lines.push(row(label, 'PHP 8.2 native', 'serialize', rate((r) => r.native.serialize), one));
    lines.push(row(label, 'laravel-queue-bridge', 'serialize', rate((r) => r.ours.oursWrite), ratios((r) => r.ours.oursWrite, (r) => r.native.serialize)));
    const subset = `${name}, the ${readable.length} php-serialize reads`;
    lines.push(row(subset, 'PHP 8.2 native', 'unserialize', rate((r) => r.nativeOnReadable.unserialize), one));
    lines.push(row(subset, 'laravel-queue-bridge', 'unserialize', rate((r) => r.ours.oursOnReadable), ratios((r) => r.ours.oursOnReadable, (r) => r.nativeOnReadable.unserialize)));
    lines.push(row(subset, 'php-serialize 5', 'unserialize', rate((r) => r.ours.theirs), ratios((r) => r.ours.theirs, (r) => r.nativeOnReadable.unserialize)));
    const overTheirs = ratios((r) => r.ours.oursOnReadable, (r) => r.ours.theirs);
    lines.push(`|  | ours ÷ php-serialize | unserialize | ${ratioText(overTheirs, 1)} |  |  |`);
  }
  console.log(lines.join('\n'));
}
