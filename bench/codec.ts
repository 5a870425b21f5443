/**
 * Codec throughput, side by side in one run: ours, the `php-serialize` package, and PHP's
 * native functions (timed by php-fixture-gen/bench-codec.php on the same inputs).
 *
 *   npm run bench            (ROUNDS=15 pairs of windows, SECONDS=0.25 a window,
 *                            SETS=jobs,shared for only those of corpus, jobs, shared)
 *
 * Inputs: the PHP corpus in fixtures/php/, job commands Debian's Laravel 8.83 pushes here, and
 * the commands of fixtures/laravel/versions-5.8-to-12.jsonl (Laravel 5.8 to 12). PHP unserializes into real classes
 * where it has them, as a worker does.
 *
 * Each thing timed lives in a process of its own for the whole run, warmed up once: PHP (one
 * process for a set, one for the part php-serialize reads), ours reading, ours writing, ours
 * reading that part, and php-serialize. A process that first chewed through other work would
 * keep code tuned to it, and pay for its garbage. The processes then take turns, a short window
 * each, and each ratio is taken between two windows run one right after the other: this machine
 * is shared, and its speed drifts by a third from one second to the next, for PHP as for Node,
 * so windows seconds apart compare the drift more than the code.
 */
import { spawn, execFileSync, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import phpSerialize from 'php-serialize';
import { serialize, unserialize } from '../src/php/index.js';
import { repeat, warmup } from './timing.js';
import { median } from './stats.js';

const root = new URL('..', import.meta.url).pathname;
const ROUNDS = Number(process.env.ROUNDS ?? 15);
const WINDOW = Number(process.env.SECONDS ?? 0.25);

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

/** The 200 commands of fixtures/laravel/versions-5.8-to-12.jsonl, whose classes PHP does not have here. */
function sharedCommands(): Buffer[] {
  return readFileSync(`${root}fixtures/laravel/versions-5.8-to-12.jsonl`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => commandOf((JSON.parse(line) as { payload: string }).payload));
}

function commandOf(payload: string): Buffer {
  return Buffer.from((JSON.parse(payload) as { data: { command: string } }).data.command, 'utf8');
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

/** What a Node timing process does over all its inputs, once. */
type NodePart = 'read' | 'write' | 'theirs';

function workOf(part: NodePart, inputs: Buffer[]): () => void {
  if (part === 'read') return () => inputs.forEach((bytes) => unserialize(bytes));
  if (part === 'write') {
    const values = inputs.map((bytes) => unserialize(bytes));
    return () => values.forEach((value) => serialize(value));
  }
  const texts = inputs.map((bytes) => bytes.toString('utf8'));
  return () => texts.forEach((text) => phpSerialize.unserialize(text, {}, { strict: false }));
}

/**
 * The child's side of a Timer (this script with --serve PART FILE): warm up, say `ready`, then
 * time one window for each line read, and answer with {"ops", "seconds"}, as bench-codec.php does.
 */
async function serve(part: NodePart, file: string): Promise<void> {
  const inputs = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => Buffer.from(line, 'base64'));
  const work = workOf(part, inputs);
  repeat(work, 1, warmup);
  console.log('ready');
  for await (const line of createInterface({ input: process.stdin })) {
    const { ops, elapsed } = repeat(work, 1, Number(line.split(' ')[1]));
    console.log(JSON.stringify({ ops: ops * inputs.length, seconds: elapsed }));
  }
}

/** A process that times one thing, a window at a time, on request. */
class Timer {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly lines: AsyncIterator<string>;

  constructor(command: string, args: string[]) {
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
  }

  async ready(): Promise<void> {
    const { value } = await this.lines.next();
    if (value !== 'ready') throw new Error(`a timing process said ${JSON.stringify(value)} instead of ready`);
  }

  /** Operations per second over one window of `operation`. */
  async window(operation: string): Promise<number> {
    this.child.stdin.write(`${operation} ${WINDOW}\n`);
    const { value } = await this.lines.next();
    const { ops, seconds } = JSON.parse(value as string) as { ops: number; seconds: number };
    return ops / seconds;
  }

  close(): void {
    this.child.stdin.end();
  }
}

function nodeTimer(part: NodePart, file: string): Timer {
  return new Timer(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, '--serve', part, file]);
}

function phpTimer(file: string, classes: string): Timer {
  return new Timer('php', [`${root}php-fixture-gen/bench-codec.php`, file, classes]);
}

/** One window of something timed: its ops/s. */
type Window = () => Promise<number>;

/** Two things timed one right after the other: `ours` and what it is compared with. */
interface Pair {
  ours: Window;
  base: Window;
  /** Each side's ops/s, one per round, and ours ÷ base of each round. */
  oursRates: number[];
  baseRates: number[];
  ratios: number[];
}

function pair(ours: Window, base: Window): Pair {
  return { ours, base, oursRates: [], baseRates: [], ratios: [] };
}

/** Runs every pair once a round; every other round the base goes first, so a drift favours neither. */
async function runRounds(pairs: Pair[]): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    for (const p of pairs) {
      const oursFirst = round % 2 === 0;
      const first = await (oursFirst ? p.ours : p.base)();
      const second = await (oursFirst ? p.base : p.ours)();
      const [ours, base] = oursFirst ? [first, second] : [second, first];
      p.oursRates.push(ours);
      p.baseRates.push(base);
      p.ratios.push(ours / base);
    }
  }
}

/** The value a quarter and three quarters of the way up. */
function quartiles(values: number[]): [number, number] {
  const sorted = [...values].sort((a, b) => a - b);
  return [sorted[Math.floor((sorted.length - 1) / 4)]!, sorted[Math.ceil(((sorted.length - 1) * 3) / 4)]!];
}

/** `0.61× (0.55–0.66)`: the median ratio, then the middle half of the rounds' ratios. */
function ratioText(ratios: number[], digits: number): string {
  const [low, high] = quartiles(ratios);
  const range = ratios.length > 1 ? ` (${low.toFixed(digits)}–${high.toFixed(digits)})` : '';
  return `${median(ratios).toFixed(digits)}×${range}`;
}

/** One table row: the median rate, with MB/s from the set's average size. */
function row(set: string, impl: string, op: string, rates: number[], averageBytes: number, ratio: string): string {
  const ops = median(rates);
  return `| ${set} | ${impl} | ${op} | ${Math.round(ops).toLocaleString('en-US')} | ${((ops * averageBytes) / 1e6).toFixed(1)} | ${ratio} |`;
}

async function benchSet(name: string, inputs: Buffer[], classes: string, folder: string): Promise<string[]> {
  const readable = readableByPhpSerialize(inputs);
  const write = (name: string, set: Buffer[]) => {
    const file = join(folder, name);
    writeFileSync(file, set.map((b) => b.toString('base64')).join('\n'));
    return file;
  };
  const all = write('all', inputs);
  const part = write('readable', readable);
  const timers = {
    php: phpTimer(all, classes),
    phpOnReadable: phpTimer(part, classes),
    read: nodeTimer('read', all),
    write: nodeTimer('write', all),
    readOnReadable: nodeTimer('read', part),
    theirs: nodeTimer('theirs', part),
  };
  // One at a time: on two cores, warm-ups side by side would slow each other.
  for (const timer of Object.values(timers)) await timer.ready();
  const read = pair(
    () => timers.read.window('read'),
    () => timers.php.window('unserialize'),
  );
  const written = pair(
    () => timers.write.window('write'),
    () => timers.php.window('serialize'),
  );
  const readOnReadable = pair(
    () => timers.readOnReadable.window('read'),
    () => timers.phpOnReadable.window('unserialize'),
  );
  const overTheirs = pair(
    () => timers.readOnReadable.window('read'),
    () => timers.theirs.window('read'),
  );
  await runRounds([read, written, readOnReadable, overTheirs]);
  Object.values(timers).forEach((timer) => timer.close());

  const average = (set: Buffer[]) => set.reduce((sum, b) => sum + b.length, 0) / set.length;
  const [size, partSize] = [average(inputs), average(readable)];
  const label = `${name} (${inputs.length}, ${size.toFixed(0)} B avg)`;
  const subset = `${name}, the ${readable.length} php-serialize reads`;
  // php-serialize against PHP: windows of one round, though not side by side (each is beside ours).
  const theirsVsPhp = overTheirs.baseRates.map((rate, i) => rate / readOnReadable.baseRates[i]!);
  return [
    row(label, 'PHP 8.2 native', 'unserialize', read.baseRates, size, '1.00×'),
    row(label, 'laravel-queue-bridge', 'unserialize', read.oursRates, size, ratioText(read.ratios, 2)),
    row(label, 'PHP 8.2 native', 'serialize', written.baseRates, size, '1.00×'),
    row(label, 'laravel-queue-bridge', 'serialize', written.oursRates, size, ratioText(written.ratios, 2)),
    row(subset, 'PHP 8.2 native', 'unserialize', readOnReadable.baseRates, partSize, '1.00×'),
    row(subset, 'laravel-queue-bridge', 'unserialize', readOnReadable.oursRates, partSize, ratioText(readOnReadable.ratios, 2)),
    row(subset, 'php-serialize 5', 'unserialize', overTheirs.baseRates, partSize, ratioText(theirsVsPhp, 2)),
    `|  | ours ÷ php-serialize | unserialize | ${ratioText(overTheirs.ratios, 1)} |  |  |`,
  ];
}

if (process.argv[2] === '--serve') {
  await serve(process.argv[3] as NodePart, process.argv[4]!);
} else {
  const lines = ['| inputs | implementation | operation | ops/s | MB/s | vs PHP native |', '|---|---|---|---:|---:|---:|'];
  // SETS=jobs,shared times only those sets (corpus, jobs, shared).
  const only = process.env.SETS?.split(',');
  const sets: [string, string, () => Buffer[], string][] = [
    ['corpus', 'PHP corpus', corpus, 'corpus'],
    ['jobs', 'Laravel 8.83 job commands', laravelCommands, 'jobs'],
    ['shared', 'Laravel 5.8–12 commands, classes absent in PHP', sharedCommands, 'jobs'],
  ];
  const folder = mkdtempSync(join(tmpdir(), 'lqb-bench-'));
  try {
    for (const [id, name, load, classes] of sets) {
      if (only && !only.includes(id)) continue;
      const inputs = load();
      if (inputs.length > 0) lines.push(...(await benchSet(name, inputs, classes, folder)));
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  console.log(lines.join('\n'));
}
