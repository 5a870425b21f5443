/**
 * What Horizon's records cost per job, measured on the real thing: `connect().worker()` running
 * the same no-op jobs with and without `horizon` (the worker's records: reserved, then completed
 * with its metrics; the supervisor's heartbeat), and `connect().dispatch()` pushing them with and
 * without it (prepare and the pending record). Prints, for each mode, jobs per second and CPU
 * time per job, the process's and its main thread's alone (V8's compiler and collector threads
 * left out), and Horizon's share paired round by round: each horizon run against the plain run
 * beside it, for the worker, for dispatch, and for a job's whole life (dispatched, then run).
 * The issue's goal is under 15% of per-job CPU.
 * A third mode, layout, runs Horizon's payloads (pushed with `horizon`) by a worker without it,
 * which parts what the payload's layout costs the worker from what the records cost. A fourth,
 * loaded, runs the plain worker with its deletes made to keep Redis busy about as long as
 * Horizon's records keep it (LOADED_SPIN, Redis's CPU per job printed beside): on a machine where
 * a worker's CPU follows Redis's, it parts the records' own cost from that of the load. Each run
 * is a process of its own (a process that ran one mode's payloads and code would run the next
 * mode's with V8's code fitted to both), and runs alternate between the modes, so a machine
 * whose speed drifts slows all alike. Redis's own CPU
 * per job is printed too (INFO's used_cpu), noisy on a server others share. For the records
 * alone, without a worker around them, see bench/horizon-records.ts; for each part of a push
 * counted alone (a call's arguments, the layout), bench/horizon-calls.ts.
 *
 * A fifth mode, neighbour, runs the plain worker beside a process that only spins on Redis's core
 * (NEIGHBOUR_CORE, 1 by default) at Linux's idle priority (SCHED_IDLE: it runs only when that
 * core has nothing else, and gives way to Redis at once). The spinner reads and writes no memory
 * to speak of, so what it costs the worker is the hardware's (a core of the host shared by both
 * vCPUs, a boost clock that drops when both work), not the worker's code: on such a machine,
 * Horizon's records, doubling Redis's work on that core, cost the worker more than their code.
 * BUSY_NEIGHBOUR=1 runs every mode beside the spinner, so that core is as busy in all of them
 * and the shares are those of the worker's own work, as where Redis is a machine of its own.
 *
 * Each run's worker is timed once it has warmed up: it runs WARMUP + JOBS jobs, and its CPU (and
 * Redis's) are counted from its handler's call for the (WARMUP + 1)th job, since V8's optimizing
 * compiler works on a worker's code, on threads of its own, through its first tens of thousands
 * of jobs (see bench/worker-inprocess.ts). WARMUP=0 times each worker from its start, as this
 * bench did before 2026-11-26.
 *
 * JOBS is 100,000 by default: 20,000 no-op jobs are timed in under half a second, shorter than
 * this machine's swings of speed (their shares moved by 20 points between two runs of the bench).
 *
 *   npx tsx bench/horizon.ts            JOBS=100000 WARMUP=20000 RUNS=5 CONCURRENCY=16 HANDLER_US=0
 *   HANDLER_US=50 npx tsx bench/horizon.ts
 *       each job's handler busy for 50 µs (the CPU a small real job takes): the share of a job
 *       whose own work is not nothing, and a worker that Redis no longer holds back
 *   taskset -c 1 redis-server --port 6390 --save '' --daemonize yes
 *   REDIS_URL=redis://127.0.0.1:6390 taskset -c 0 npx tsx bench/horizon.ts
 *       Redis on a core of its own and the worker on the other, as where Redis is another
 *       machine's: Redis's CPU then no longer takes the worker's core
 *   BUSY_NEIGHBOUR=1 REDIS_URL=redis://127.0.0.1:6390 taskset -c 0 npx tsx bench/horizon.ts
 *       the same, every run beside the spinner on Redis's core: that core as busy in every mode
 *   INSTRUCTIONS=1 MODES=plain,layout,horizon RUNS=2 npx tsx bench/horizon.ts    JOBS=5000 WARMUP=20000
 *       instructions per job counted by Valgrind's callgrind (apt-get install valgrind), the
 *       warm-up uncounted: a count this machine's noise does not move (see bench/instructions.ts);
 *       the main thread's is the worker's own code, the process's adds V8's compiler threads,
 *       still at work on Horizon's code after 20,000 jobs
 *   MODES=plain,horizon npx tsx bench/horizon.ts
 *       only the modes named (plain and horizon among them), in less time
 *   PROFILE=/tmp/hz npx tsx bench/horizon.ts
 *       one run without Horizon and one with it, their worker profiled after its warm-up: V8's
 *       CPU profile (/tmp/hz.plain.cpuprofile, /tmp/hz.horizon.cpuprofile, for Chrome's
 *       DevTools), a sampling heap profile of what it allocates (….heapprofile), and a table of
 *       the functions taking the most CPU
 */
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { underValgrind } from './instructions.js';
import { median, percentMore, signedPercent } from './stats.js';
import { CONCURRENCY, HANDLER_US, JOBS, WARMUP, type Mode, type Result } from './horizon-run.js';

/** Count instructions (bench/instructions.ts) rather than time: each run under Valgrind, some 50 times slower. */
const INSTRUCTIONS = process.env.INSTRUCTIONS === '1';
const RUNS = Number(process.env.RUNS ?? 5);
/** The core the neighbour mode's spinner (and BUSY_NEIGHBOUR's) runs on: Redis's, when it is pinned. */
const NEIGHBOUR_CORE = process.env.NEIGHBOUR_CORE ?? '1';
const BUSY_NEIGHBOUR = process.env.BUSY_NEIGHBOUR === '1';
/** The run itself, a process per run. */
const RUN = fileURLToPath(new URL('./horizon-run.ts', import.meta.url));

/**
 * One run of `mode` in a process of its own (bench/horizon-run.ts, HORIZON_BENCH_CHILD=mode,
 * PROFILE as given to this one): its result, after what it printed (a profile's table). The neighbour mode,
 * and every mode under BUSY_NEIGHBOUR, runs beside the spinner, which lives as long as the run.
 */
function runChild(mode: Mode): Result {
  const spinner = mode === 'neighbour' || BUSY_NEIGHBOUR ? startSpinner() : undefined;
  try {
    const args = ['--import', 'tsx', RUN];
    const env = { ...process.env, HORIZON_BENCH_CHILD: mode };
    const child = INSTRUCTIONS ? underValgrind(args, env) : { command: process.execPath, args, env };
    const out = execFileSync(child.command, child.args, { env: child.env, encoding: 'utf8' });
    const lines = out.trim().split('\n');
    if (lines.length > 1) console.log(lines.slice(0, -1).join('\n'));
    return JSON.parse(lines.at(-1)!) as Result;
  } finally {
    spinner?.kill('SIGKILL');
  }
}

/** A process that only spins, on NEIGHBOUR_CORE at idle priority (taskset and chrt, from util-linux). */
function startSpinner() {
  return spawn('taskset', ['-c', NEIGHBOUR_CORE, 'chrt', '-i', '0', process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' });
}

/** The modes run, in turn: MODES (comma-separated) or all; the neighbour mode is every mode's lot under BUSY_NEIGHBOUR. */
const ALL_MODES: Mode[] = ['plain', 'layout', 'horizon', 'loaded', ...(BUSY_NEIGHBOUR ? [] : (['neighbour'] as const))];
const MODES = process.env.MODES ? (process.env.MODES.split(',') as Mode[]) : ALL_MODES;
for (const mode of MODES) if (!ALL_MODES.includes(mode)) throw new Error(`MODES names ${mode}, not one of ${ALL_MODES.join(', ')}`);
for (const needed of ['plain', 'horizon'] as const)
  if (!MODES.includes(needed))
    throw new Error(`MODES must hold ${needed}: every share is of horizon against plain or of a mode against plain`);
if (process.env.PROFILE) {
  console.log('plain:');
  runChild('plain');
  console.log('horizon:');
  runChild('horizon');
  process.exit(0);
}
const results: Record<Mode, Result[]> = { plain: [], layout: [], horizon: [], loaded: [], neighbour: [] };
for (let i = 0; i < RUNS; i++) {
  // The modes take turns, the order turning each round, so a machine whose speed drifts slows all alike.
  const order = MODES.map((_, m) => MODES[(m + i) % MODES.length]!);
  for (const mode of order) results[mode].push(runChild(mode));
}

const of = (mode: Mode, field: keyof Result) => median(results[mode].map((r) => r[field]));
const micros = (value: number) => `${value.toFixed(1)} µs`;
const thousands = (value: number) => `${(value / 1000).toFixed(1)}k`;
console.log(
  `${JOBS} ${HANDLER_US > 0 ? `jobs of ${HANDLER_US} µs each` : 'no-op jobs'} ${INSTRUCTIONS ? 'counted' : 'timed'} after each worker's first ${WARMUP}, concurrency ${CONCURRENCY}, one process per run${INSTRUCTIONS ? ' under Valgrind' : ''}, ${RUNS} runs per mode, the modes taking turns${BUSY_NEIGHBOUR ? `, every run beside an idle-priority spinner on core ${NEIGHBOUR_CORE}` : ''}; medians\n`,
);
if (INSTRUCTIONS) {
  console.log('| mode | worker instructions/job | main thread | dispatch instructions/job | main thread |');
  console.log('|---|---:|---:|---:|---:|');
  for (const mode of MODES)
    console.log(
      `| ${mode} | ${thousands(of(mode, 'workerInstructions'))} | ${thousands(of(mode, 'workerMainInstructions'))} | ${thousands(of(mode, 'dispatchInstructions'))} | ${thousands(of(mode, 'dispatchMainInstructions'))} |`,
    );
} else {
  console.log('| mode | worker jobs/s | worker CPU/job | the kernel’s | main thread | Redis CPU/job | dispatch CPU/job | main thread |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const mode of MODES)
    console.log(
      `| ${mode} | ${of(mode, 'workerJobsPerSecond').toFixed(0)} | ${micros(of(mode, 'workerCpu'))} | ${micros(of(mode, 'workerSystem'))} | ${micros(of(mode, 'workerMain'))} | ${micros(of(mode, 'workerRedisCpu'))} | ${micros(of(mode, 'dispatchCpu'))} | ${micros(of(mode, 'dispatchMain'))} |`,
    );
}

/**
 * Horizon's share, round by round: each round's horizon run against the plain run beside it
 * (the machine's speed drifts between rounds more than between neighbours), as the median and
 * the range of the rounds' shares. A job's share counts its dispatch and its run together.
 */
function share(part: (r: Result) => number, than: Mode = 'plain', mode: Mode = 'horizon'): string {
  const shares = results[mode].map((r, i) => part(r) / part(results[than][i]!) - 1).sort((a, b) => a - b);
  return `${signedPercent(median(shares))} (${signedPercent(shares[0]!)} to ${signedPercent(shares.at(-1)!)})`;
}
/** What the shares compare: CPU time, or under INSTRUCTIONS the instructions counted. */
const field = (name: keyof Result) => (r: Result) => r[name];
const cost = INSTRUCTIONS
  ? {
      worker: field('workerInstructions'),
      workerMain: field('workerMainInstructions'),
      dispatch: field('dispatchInstructions'),
      dispatchMain: field('dispatchMainInstructions'),
    }
  : { worker: field('workerCpu'), workerMain: field('workerMain'), dispatch: field('dispatchCpu'), dispatchMain: field('dispatchMain') };
const both = (r: Result) => cost.dispatch(r) + cost.worker(r);
const bothMain = (r: Result) => cost.dispatchMain(r) + cost.workerMain(r);
console.log(`\n| Horizon’s share, paired by round | ${INSTRUCTIONS ? 'process instructions' : 'process CPU'} | main thread |`);
console.log('|---|---:|---:|');
console.log(`| the worker (lqb work --horizon) | ${share(cost.worker)} | ${share(cost.workerMain)} |`);
console.log(`| dispatch (lqb dispatch --horizon) | ${share(cost.dispatch)} | ${share(cost.dispatchMain)} |`);
console.log(`| a job, dispatched and run | ${share(both)} | ${share(bothMain)} |`);
if (MODES.includes('layout'))
  console.log(`| the worker's records alone (against layout) | ${share(cost.worker, 'layout')} | ${share(cost.workerMain, 'layout')} |`);
if (MODES.includes('loaded'))
  console.log(
    `| the worker's records, against a plain worker with Redis as loaded (loaded) | ${share(cost.worker, 'loaded')} | ${share(cost.workerMain, 'loaded')} |`,
  );
if (MODES.includes('neighbour'))
  console.log(
    `| no Horizon: a spinner on core ${NEIGHBOUR_CORE} (neighbour against plain) | ${share(cost.worker, 'plain', 'neighbour')} | ${share(cost.workerMain, 'plain', 'neighbour')} |`,
  );
if (!INSTRUCTIONS)
  console.log(
    `\nRedis: ${percentMore(of('horizon', 'workerRedisCpu'), of('plain', 'workerRedisCpu'))} CPU per job with the records; worker jobs/s ${percentMore(of('horizon', 'workerJobsPerSecond'), of('plain', 'workerJobsPerSecond'))}.`,
  );
