/**
 * The in-process worker's throughput on no-op jobs, for this tree, and optionally for a second
 * checkout of the repository side by side:
 *   - `connect`: the worker `connect().worker()` makes (cache, unique locks, batches on), the
 *     way a library user runs it, with no shapes;
 *   - `bare`: `new Worker(queue, handlers)` with nothing around it.
 * Each run is a process of its own: one worker runs WARMUP + JOBS jobs (`stopWhenEmpty`), and
 * the last JOBS are timed, from the handler's call for the (WARMUP + 1)th job to run()'s end,
 * against REDIS_URL (else 127.0.0.1:6379) under a prefix of its own. The warm-up is long because V8's optimizing
 * compiler keeps compiling the worker's code, on threads of its own, for its first 50,000 jobs
 * or so (`--trace-opt` shows under a millisecond of compiling per 10,000 jobs after 60,000): a
 * shorter one puts that one-off cost in the per-job figure. WARMUP_WORKER=1 measures as this
 * bench did before 2026-11-26 (a worker of its own for the warm-up, then a second one timed from
 * run(), which V8 compiles again for: 20 to 30 µs a job of it in a 20,000-job run).
 *
 *   npx tsx bench/worker-inprocess.ts                     this tree, RUNS runs of each mode
 *   BASE=/path/to/other/checkout npx tsx bench/worker-inprocess.ts
 *       both trees, runs alternating (this tree, BASE, this tree, …), so a machine whose speed
 *       drifts slows both alike; each run is this tree's bench/worker-inprocess-dist.mjs.
 *   JOBS=40000 WARMUP=60000 RUNS=7 CONCURRENCY=32 MODES=connect,bare
 *   NODE_FLAGS='--max-semi-space-size=64': Node flags for each run's process, in both trees
 *   BUILD=dist: each tree's dist/ (`npm run build` there first) run by plain node, rather than
 *       its src/ through tsx
 *   TIMEOUT=60: the jobs' timeout in seconds (0, none, unless said; lqb work's default is 60)
 *   ATTEMPTS=1: jobs pushed as retried ones (their envelopes say one attempt made; no tries limit)
 *   LQB_TREE=$PWD LQB_BENCH_CHILD=connect PROFILE=FILE.cpuprofile node bench/worker-inprocess-dist.mjs
 *       one run of the build, its timed part profiled (V8's CPU profile, for Chrome's DevTools)
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median } from './stats.js';
import { REDIS_URL } from './redis-target.js';

const JOBS = Number(process.env.JOBS ?? 40_000);
const WARMUP = Number(process.env.WARMUP ?? 60_000);
const RUNS = Number(process.env.RUNS ?? 7);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const ATTEMPTS = Number(process.env.ATTEMPTS ?? 0);
/** The jobs' timeout in seconds (0: none, the default here; `lqb work`'s default is 60). */
const TIMEOUT = Number(process.env.TIMEOUT ?? 0);
const MODES = (process.env.MODES ?? 'connect,bare').split(',') as Mode[];
/** Node flags for every run, in both trees (`--max-semi-space-size=64`: a young generation that is collected less often). */
const NODE_FLAGS = (process.env.NODE_FLAGS ?? '').split(' ').filter(Boolean);
/** `dist`: the trees' compiled builds, run by plain node (see runChild); else their sources through tsx. */
const BUILD = process.env.BUILD ?? 'src';
type Mode = 'connect' | 'bare';

interface RunResult {
  jobsPerSecond: number;
  /** Node's own CPU time (user + system) per job, in µs: less swayed by a busy machine than the wall clock. */
  cpuPerJob: number;
  /** The same, of the main thread alone (the rest is V8's compiler and collector threads); NaN off Linux. */
  mainPerJob: number;
  bytes: number;
}

function runChild(tree: string, mode: Mode): RunResult {
  // Each tree's run by this tree's worker-inprocess-dist.mjs: its build (run `npm run build` in
  // each first) by plain node, so no TypeScript loader is in the measure, or its sources under tsx.
  const dist = BUILD === 'dist';
  const script = fileURLToPath(new URL('worker-inprocess-dist.mjs', import.meta.url));
  const out = execFileSync(process.execPath, [...NODE_FLAGS, ...(dist ? [] : ['--import', 'tsx']), script], {
    cwd: tree,
    env: { ...process.env, LQB_BENCH_CHILD: mode, LQB_TREE: tree, LQB_BUILD: dist ? 'dist' : 'src' },
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as RunResult;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function parent(): Promise<void> {
  const here = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
  const base = process.env.BASE;
  const trees = [here, ...(base ? [base] : [])];
  const names = trees.map(gitName);
  // results[mode][tree][run]
  const results = new Map<Mode, RunResult[][]>();
  let bytes = 0;
  for (const mode of MODES) {
    const runs: RunResult[][] = trees.map(() => []);
    results.set(mode, runs);
    for (let run = 0; run < RUNS; run++) {
      // Alternate which tree goes first, so neither always runs on a warmer (or busier) machine.
      const order = run % 2 === 0 ? [...trees.keys()] : [...trees.keys()].reverse();
      for (const t of order) {
        const result = runChild(trees[t]!, mode);
        bytes = result.bytes;
        runs[t]!.push(result);
      }
    }
  }
  console.log(
    `No-op ${ATTEMPTS > 0 ? `retried jobs (attempts ${ATTEMPTS} in the envelope)` : 'jobs'} of ${bytes} bytes, ${fmt(JOBS)} timed per run ${process.env.WARMUP_WORKER ? `in a second worker, after one of its own ran ${fmt(WARMUP)}` : `after the same worker's first ${fmt(WARMUP)}`}, concurrency ${CONCURRENCY}, timeout ${TIMEOUT > 0 ? `${TIMEOUT} s` : 'none'}, one process per run, ${BUILD === 'dist' ? 'dist/ by plain node' : 'src/ through tsx'}, Redis ${REDIS_URL}${NODE_FLAGS.length > 0 ? `, node ${NODE_FLAGS.join(' ')}` : ''}; ${RUNS} runs per row${base ? ', the trees alternating' : ''}.`,
  );
  console.log(
    "jobs/s: median (min–max); Node CPU: the worker process's user + system time per job, median; main thread: the same of the main thread alone, the rest being V8's compiler and collector threads" +
      (base ? "; vs first: the median of the run-by-run ratios of jobs/s to the first tree's run beside it" : '') +
      '.\n',
  );
  console.log(`| worker | tree | jobs/s | Node CPU µs/job | main thread µs/job |${base ? ' vs first |' : ''}`);
  console.log(`|---|---|---:|---:|---:|${base ? '---:|' : ''}`);
  for (const mode of MODES) {
    const runs = results.get(mode)!;
    runs.forEach((xs, t) => {
      const rate = xs.map((r) => r.jobsPerSecond);
      const ratio = median(xs.map((r, i) => r.jobsPerSecond / runs[0]![i]!.jobsPerSecond));
      const label = mode === 'connect' ? 'connect().worker()' : 'new Worker()';
      console.log(
        `| ${label} | ${names[t]} | ${fmt(median(rate))} (${fmt(Math.min(...rate))}–${fmt(Math.max(...rate))}) | ${median(xs.map((r) => r.cpuPerJob)).toFixed(1)} | ${median(xs.map((r) => r.mainPerJob)).toFixed(1)} |${base ? ` ${ratio.toFixed(2)}× |` : ''}`,
      );
    });
  }
}

/** The tree's commit, short, with `+` when its work tree has changes. */
function gitName(tree: string): string {
  const commit = execFileSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const dirty =
    execFileSync('git', ['-C', tree, 'status', '--porcelain', '--untracked-files=no', 'src'], { encoding: 'utf8' }).trim() !== '';
  return dirty ? `${commit}+` : commit;
}

await parent();
