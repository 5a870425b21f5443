/**
 * What a busy neighbour core costs the worker on this machine, with no Horizon at all: the plain
 * worker of bench/horizon.ts (its `plain` mode, the same jobs and clock) run alone and beside a
 * process that only spins on the other core, at Linux's idle priority (SCHED_IDLE: it runs only
 * when that core has nothing else, and gives way to Redis at once). The spinner reads and writes
 * no memory to speak of, so whatever it costs the worker is the hardware's (a shared core's
 * execution units, a boost clock that drops when both cores work), not the worker's code. That
 * is the effect through which Horizon's records, doubling Redis's work, cost the worker more CPU
 * per job than the records' own code does (docs/horizon.md, "Cost").
 *
 * Runs alternate, spinner or not, each in a process of its own pinned to core 0; Redis should be
 * on core 1 (the spinner's core):
 *
 *   taskset -c 1 redis-server --port 6390 --save '' --daemonize yes
 *   REDIS_URL=redis://127.0.0.1:6390 npx tsx bench/horizon-neighbour.ts      RUNS=5 JOBS=100000
 */
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const RUNS = Number(process.env.RUNS ?? 5);
const BENCH = fileURLToPath(new URL('./horizon.ts', import.meta.url));

interface Run {
  workerCpu: number;
  workerJobsPerSecond: number;
  workerRedisCpu: number;
}

/** One run of bench/horizon.ts's plain worker on core 0. */
function plainRun(): Run {
  const out = execFileSync('taskset', ['-c', '0', process.execPath, '--import', 'tsx', BENCH], {
    env: { ...process.env, HORIZON_BENCH_CHILD: 'plain' },
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as Run;
}

/** The same, beside a spinner on core 1 at idle priority. */
function besideSpinner(): Run {
  const spinner = spawn('taskset', ['-c', '1', 'chrt', '-i', '0', process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' });
  try {
    return plainRun();
  } finally {
    spinner.kill('SIGKILL');
  }
}

const alone: Run[] = [];
const beside: Run[] = [];
for (let i = 0; i < RUNS; i++) {
  // The order turns each round, so a machine whose speed drifts slows both alike.
  if (i % 2 === 0) {
    alone.push(plainRun());
    beside.push(besideSpinner());
  } else {
    beside.push(besideSpinner());
    alone.push(plainRun());
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
const row = (label: string, runs: Run[]) =>
  `| ${label} | ${median(runs.map((r) => r.workerJobsPerSecond)).toFixed(0)} | ${median(runs.map((r) => r.workerCpu)).toFixed(1)} µs | ${median(runs.map((r) => r.workerRedisCpu)).toFixed(1)} µs |`;
console.log(`bench/horizon.ts's plain worker (no Horizon) on core 0, ${RUNS} runs each, alternating; medians\n`);
console.log('| the other core | worker jobs/s | worker CPU/job | Redis CPU/job |');
console.log('|---|---:|---:|---:|');
console.log(row('Redis alone', alone));
console.log(row('Redis and an idle-priority spinner', beside));
const shares = beside.map((r, i) => r.workerCpu / alone[i]!.workerCpu - 1).sort((a, b) => a - b);
console.log(
  `\nThe spinner's share of the worker's CPU per job, paired by round: ${pct(median(shares))} (${pct(shares[0]!)} to ${pct(shares.at(-1)!)})`,
);
