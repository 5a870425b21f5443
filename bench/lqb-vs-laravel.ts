/**
 * `lqb work --concurrency=32` against Laravel 8.83's own Worker looping runNextJob() (no
 * console lines: php-fixture-gen/bench-run-next-job.php), on the same Redis and the same jobs
 * (the RecordJob of bench/worker.ts, about 1.5 KB; PHP's handle() appends a line to /dev/null,
 * Node's handler does nothing), for this tree and optionally a second checkout's build:
 *
 *   npm run build && npx tsx bench/lqb-vs-laravel.ts
 *   BASE=/path/to/other/checkout npx tsx bench/lqb-vs-laravel.ts     (build BASE first, too)
 *   JOBS=20000 RUNS=5 CONCURRENCY=32
 *   QUIET=0: lqb writes its line per job (to /dev/null) in every tree
 *
 * Each run is one process per worker, its queue filled with JOBS jobs first under a prefix of
 * its own; the workers take turns within a round (the order turning each round). `lqb` is the
 * tree's dist/cli/main.js run as the npm bin runs it (its shebang), with --stop-when-empty
 * --sleep=0 --timeout=0 --memory=0, --quiet where the tree has it (Laravel's loop prints no
 * line per job), and the same failed-jobs and batches database as PHP's.
 * jobs/s is JOBS over the process's whole life (boot included); "less boot" takes off the
 * median life of the same process on an empty queue. CPU is the process's user + system time
 * (GNU time) per job.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { RedisQueue, connectRedis } from '../src/redis/index.js';
import { dropPrefix } from './scratch.js';
import { median } from './stats.js';
import { recordPayload as payload } from './record-job.js';
import { REDIS_URL, redisEnv } from './redis-target.js';

const JOBS = Number(process.env.JOBS ?? 20_000);
const RUNS = Number(process.env.RUNS ?? 5);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const QUEUE = 'bench';
const here = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const scratch = mkdtempSync(join(tmpdir(), 'lqb-vs-laravel-'));

interface Measure {
  seconds: number;
  cpuSeconds: number;
}

/** Runs one worker process over `count` jobs (0: an empty queue) under a fresh prefix; its life and CPU. */
async function measure(worker: Worker, count: number): Promise<Measure> {
  const prefix = `lqb-bench-${randomBytes(3).toString('hex')}:`;
  const client = connectRedis({ url: REDIS_URL, prefix });
  const queue = new RedisQueue(client, { defaultQueue: QUEUE });
  try {
    for (let i = 0; i < count; i += 1000) await queue.bulkRaw(Array.from({ length: Math.min(1000, count - i) }, (_, j) => payload(i + j)));
    const timeFile = join(scratch, 'time');
    const [command, ...args] = worker.command(prefix, count);
    const start = performance.now();
    execFileSync('/usr/bin/time', ['-f', '%U %S', '-o', timeFile, command!, ...args], {
      env: {
        ...process.env,
        ...redisEnv,
        REDIS_PREFIX: prefix,
        QUEUE_NAME: QUEUE,
        LQB_RECORD_FILE: '/dev/null',
        LQB_FAILED_DB: join(scratch, 'failed.sqlite'),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const seconds = (performance.now() - start) / 1000;
    const [user, system] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
    const left = await queue.size();
    if (left !== 0) throw new Error(`${worker.name}: ${left} jobs left in the queue after the run`);
    return { seconds, cpuSeconds: user! + system! };
  } finally {
    await queue.close();
    client.disconnect();
    await dropPrefix(prefix);
  }
}

interface Worker {
  name: string;
  command: (prefix: string, count: number) => string[];
}

const laravel: Worker = {
  name: 'Laravel 8.83 Worker::runNextJob loop',
  // 0: it boots, builds its worker, and exits.
  command: (_prefix, count) => ['php', `${here}/php-fixture-gen/bench-run-next-job.php`, String(count)],
};

/** --quiet where the tree's lqb work has it: no line per job, as Laravel's loop prints none. */
const quietFlag = (tree: string): string[] =>
  process.env.QUIET !== '0' && execFileSync(`${tree}/dist/cli/main.js`, ['work', '--help'], { encoding: 'utf8' }).includes('--quiet')
    ? ['--quiet']
    : [];

const lqb = (tree: string, quiet = quietFlag(tree)): Worker => ({
  name: `lqb work --concurrency=${CONCURRENCY}${quiet.length ? ' --quiet' : ''} (${gitName(tree)})`,
  command: (prefix) => [
    `${tree}/dist/cli/main.js`,
    'work',
    `--handlers=${here}/bench/noop-handlers.mjs`,
    `--queue=${QUEUE}`,
    `--prefix=${prefix}`,
    `--concurrency=${CONCURRENCY}`,
    '--stop-when-empty',
    '--sleep=0',
    '--timeout=0',
    '--memory=0',
    `--failed-db=sqlite://${join(scratch, 'failed.sqlite')}`,
    ...quiet,
  ],
});

function gitName(tree: string): string {
  return execFileSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function main(): Promise<void> {
  const workers = [laravel, lqb(here), ...(process.env.BASE ? [lqb(process.env.BASE)] : [])];
  const full = workers.map(() => [] as Measure[]);
  const empty = workers.map(() => [] as number[]);
  for (let run = 0; run < RUNS; run++) {
    const order = run % 2 === 0 ? [...workers.keys()] : [...workers.keys()].reverse();
    for (const w of order) {
      empty[w]!.push((await measure(workers[w]!, 0)).seconds);
      full[w]!.push(await measure(workers[w]!, JOBS));
    }
  }
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(
    `${fmt(JOBS)} no-op jobs of ${Buffer.byteLength(payload(0))} bytes per run, Redis ${REDIS_URL}, ${RUNS} runs per row, the workers taking turns; load average at the end ${load}.\n`,
  );
  console.log(
    '| worker | jobs/s, whole process | jobs/s, less boot | boot s | CPU µs/job | vs Laravel (less boot) | vs Laravel, round by round |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  const rates = workers.map((_, w) => {
    const boot = median(empty[w]!);
    const whole = full[w]!.map((m) => JOBS / m.seconds);
    const lessBoot = full[w]!.map((m) => JOBS / Math.max(1e-3, m.seconds - boot));
    return { boot, whole, lessBoot, cpu: median(full[w]!.map((m) => (m.cpuSeconds * 1e6) / JOBS)) };
  });
  rates.forEach((r, w) => {
    const vs = median(r.lessBoot) / median(rates[0]!.lessBoot);
    // Each round's run against Laravel's in the same round: the machine's speed drifts between
    // rounds (Laravel's loop by up to 3× here) more than between neighbours.
    const paired = r.lessBoot.map((rate, i) => rate / rates[0]!.lessBoot[i]!);
    const range = `${median(paired).toFixed(1)}× (${Math.min(...paired).toFixed(1)}–${Math.max(...paired).toFixed(1)})`;
    console.log(
      `| ${workers[w]!.name} | ${fmt(median(r.whole))} (${fmt(Math.min(...r.whole))}–${fmt(Math.max(...r.whole))}) | ${fmt(median(r.lessBoot))} | ${r.boot.toFixed(2)} | ${r.cpu.toFixed(0)} | ${vs.toFixed(1)}× | ${range} |`,
    );
  });
  rmSync(scratch, { recursive: true, force: true });
}

await main();
