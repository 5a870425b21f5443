/**
 * What `connect().dispatch()` costs a job, as a library user has it (telemetry by default:
 * `@opentelemetry/api` present, no SDK registered; no shapes): App\Jobs\Bridge\RecordJob (the
 * class of bridgeRecordJob in src/cli/demo.ts) dispatched by name with the properties
 * php-fixture-gen/bench-push.php gives it (a payload of about 1.5 KB), one at a time each awaited
 * (`awaited`), and with IN_FLIGHT (1,000) pending at once (`in-flight`); beside them, Laravel
 * 8.83's own push loop of the same job (`laravel`, bench-push.php). Per run: jobs/s, Node's (or
 * PHP's) CPU µs per job (process.cpuUsage, user + system; and the main thread's) and Redis's
 * (INFO cpu deltas, on a redis-server of the bench's own unless REDIS_URL is given). Each Node
 * run is a process of its own (bench/dispatch-run.ts) that dispatches WARMUP jobs untimed first
 * (V8 compiles the hot code), then JOBS timed. Rounds alternate the modes and, with BASE, the
 * trees (the order turning each round), so a machine whose speed drifts slows all alike.
 *
 *   npm run build && npx tsx bench/dispatch.ts          ROUNDS=5 JOBS=20000 WARMUP=20000 IN_FLIGHT=1000
 *   BASE=/path/to/other/checkout npx tsx bench/dispatch.ts      (build BASE first, too)
 *   LQB_BUILD=src: the trees' src/ through tsx rather than their dist/
 *   MODES=awaited,in-flight: the modes named only (awaited, in-flight, laravel)
 *   INSTRUCTIONS=1 JOBS=2000 ROUNDS=2: instructions per dispatch counted by Valgrind's callgrind
 *       (bench/instructions.ts), the warm-up uncounted: a figure a busy machine does not move,
 *       where CPU µs move by a third
 *   PROFILE=/tmp/dispatch: one run per mode of this tree, its timed part profiled
 *       (/tmp/dispatch.awaited.cpuprofile, …), and its functions with the most self time
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startRedisServer } from '../src/testing/index.js';
import { underValgrind } from './instructions.js';
import { median } from './stats.js';
import type { Mode, RunResult } from './dispatch-run.js';
import { cpuSecondsOfInfo } from './redis-target.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const INSTRUCTIONS = process.env.INSTRUCTIONS === '1';
const MODES = (process.env.MODES ?? 'awaited,in-flight,laravel').split(',') as Mode[];
const RUN = fileURLToPath(new URL('./dispatch-run.ts', import.meta.url));
const here = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const trees = [here, ...(process.env.BASE ? [process.env.BASE.replace(/\/$/, '')] : [])];

/**
 * Laravel 8.83's own push loop (php-fixture-gen/bench-push.php: `$queue->push(new RecordJob(…))`
 * one at a time, the same job) on the same Redis: jobs/s as it times its loop, PHP's CPU per job
 * (GNU time's user + system, less what booting Laravel takes, measured once by a run of no jobs)
 * and Redis's.
 */
function runLaravel(url: string): RunResult {
  const where = new URL(url);
  const env = { ...process.env, REDIS_HOST: where.hostname, REDIS_PORT: where.port || '6379', QUEUE_NAME: 'default' };
  const php = (jobs: number) => {
    const run = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', 'php', `${here}/php-fixture-gen/bench-push.php`, String(jobs)], {
      env: { ...env, REDIS_PREFIX: `lqb-bench-laravel-${randomBytes(4).toString('hex')}_` },
      encoding: 'utf8',
    });
    const [, user, system] = /cpu ([\d.]+) ([\d.]+)/.exec(run.stderr) ?? [];
    if (run.status !== 0 || user === undefined) throw new Error(`bench-push.php failed: ${run.stderr}`);
    return { ...(JSON.parse(run.stdout) as { jobs: number; seconds: number }), cpu: (Number(user) + Number(system!)) * 1e6 };
  };
  bootCpu ??= php(0).cpu;
  const jobs = Number(process.env.JOBS ?? 20_000);
  const redisBefore = redisCpuSeconds(url);
  const result = php(jobs);
  const redisCpu = ((redisCpuSeconds(url) - redisBefore) * 1e6) / jobs;
  return {
    jobsPerSecond: result.jobs / result.seconds,
    nodeCpu: (result.cpu - bootCpu) / jobs,
    nodeSystem: Number.NaN,
    nodeMain: Number.NaN,
    redisCpu,
    instructions: Number.NaN,
    mainInstructions: Number.NaN,
    bytes: Number.NaN,
  };
}
let bootCpu: number | undefined;

/** Redis's CPU seconds so far (INFO cpu, user + system), asked through redis-cli. */
function redisCpuSeconds(url: string): number {
  return cpuSecondsOfInfo(execFileSync('redis-cli', ['-u', url, 'info', 'cpu'], { encoding: 'utf8' }));
}

function runChild(tree: string, mode: Mode, url: string, extra: NodeJS.ProcessEnv = {}): RunResult {
  if (mode === 'laravel') return runLaravel(url);
  const args = ['--import', 'tsx', RUN];
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra, LQB_TREE: tree, MODE: mode, REDIS_URL: url };
  // Under Valgrind a dispatch runs some 50 times slower: fewer are counted (the count is exact).
  if (INSTRUCTIONS) env.JOBS ??= '2000';
  const child = INSTRUCTIONS ? underValgrind(args, env) : { command: process.execPath, args, env };
  const out = execFileSync(child.command, child.args, { env: child.env, cwd: here, encoding: 'utf8', maxBuffer: 1 << 26 });
  return JSON.parse(out.trim().split('\n').at(-1)!) as RunResult;
}

/** The tree's commit, short, with `+` when its src/ has changes. */
function gitName(tree: string): string {
  try {
    const commit = execFileSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty = execFileSync('git', ['-C', tree, 'status', '--porcelain', '--untracked-files=no', 'src'], { encoding: 'utf8' }).trim();
    return dirty ? `${commit}+` : commit;
  } catch {
    return tree;
  }
}

/** The functions with the most self time in a V8 CPU profile, per job. */
function printTop(file: string, jobs: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
    samples: number[];
    timeDeltas: number[];
  };
  const byNode = new Map<number, number>();
  profile.samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(dist|src|node_modules)\//, '$1/')}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + (byNode.get(node.id) ?? 0));
  }
  for (const [key, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`${(micros / jobs).toFixed(2).padStart(7)} µs/job  ${key}`);
}

const own = process.env.REDIS_URL ? undefined : await startRedisServer();
const url = process.env.REDIS_URL ?? `redis://127.0.0.1:${own!.port}`;
try {
  if (process.env.PROFILE) {
    for (const mode of MODES) {
      const file = `${process.env.PROFILE}.${mode}.cpuprofile`;
      const result = runChild(here, mode, url, { PROFILE: file });
      console.log(
        `\n${mode}: ${Math.round(result.jobsPerSecond)} jobs/s, ${result.nodeCpu.toFixed(1)} µs Node CPU/job (profiled) → ${file}`,
      );
      printTop(file, Number(process.env.JOBS ?? 20_000));
    }
  } else {
    // results[mode][tree][round]
    const results = new Map(MODES.map((mode) => [mode, trees.map((): RunResult[] => [])]));
    for (let round = 0; round < ROUNDS; round++) {
      // Laravel's loop is the same whichever tree: it runs once a round, as the first tree's.
      const runs = MODES.flatMap((mode): [Mode, number][] => (mode === 'laravel' ? [[mode, 0]] : trees.map((_, t) => [mode, t])));
      const order = round % 2 === 0 ? runs : [...runs].reverse();
      for (const [mode, t] of order) {
        const result = runChild(trees[t]!, mode, url);
        results.get(mode)![t]!.push(result);
        console.log(
          `round ${round + 1} ${mode.padEnd(9)} ${(mode === 'laravel' ? 'php' : gitName(trees[t]!)).padEnd(9)} ${Math.round(result.jobsPerSecond).toString().padStart(6)} jobs/s  Node ${result.nodeCpu.toFixed(1).padStart(6)} µs/job (system ${result.nodeSystem.toFixed(1).padStart(5)}, main thread ${result.nodeMain.toFixed(1).padStart(5)})  Redis ${result.redisCpu.toFixed(1).padStart(5)} µs/job${INSTRUCTIONS ? `  ${(result.instructions / 1000).toFixed(1)}k instructions/job (main ${(result.mainInstructions / 1000).toFixed(1)}k)` : ''}`,
        );
      }
    }
    const first = results.get(MODES.find((mode) => mode !== 'laravel') ?? MODES[0]!)![0]![0]!;
    console.log(
      `\nRecordJob by name (${first.bytes} B payload), ${process.env.JOBS ?? (INSTRUCTIONS ? 2000 : 20_000)} timed per run after ${process.env.WARMUP ?? 20_000} untimed, one process per run${INSTRUCTIONS ? ' under Valgrind' : ''}, ${process.env.LQB_BUILD === 'src' ? 'src/ through tsx' : 'dist/'}, Redis ${url}${own ? ' (the bench’s own)' : ''}; medians of ${ROUNDS} rounds; load ${readFileSync('/proc/loadavg', 'utf8').trim()}\n`,
    );
    console.log(
      `| mode | tree | jobs/s | Node CPU µs/job | of it system | main thread | Redis CPU µs/job |${INSTRUCTIONS ? ' instructions/job | main thread |' : ''}`,
    );
    console.log(`|---|---|---:|---:|---:|---:|---:|${INSTRUCTIONS ? '---:|---:|' : ''}`);
    for (const [mode, byTree] of results)
      byTree.forEach((runs, t) => {
        if (runs.length === 0) return;
        const of = (field: keyof RunResult) => median(runs.map((r) => r[field]));
        console.log(
          `| ${mode} | ${mode === 'laravel' ? 'Laravel 8.83 push loop (PHP)' : gitName(trees[t]!)} | ${Math.round(of('jobsPerSecond'))} | ${of('nodeCpu').toFixed(1)} | ${of('nodeSystem').toFixed(1)} | ${of('nodeMain').toFixed(1)} | ${of('redisCpu').toFixed(1)} |${INSTRUCTIONS ? ` ${(of('instructions') / 1000).toFixed(1)}k | ${(of('mainInstructions') / 1000).toFixed(1)}k |` : ''}`,
        );
      });
  }
} finally {
  own?.stop();
}
