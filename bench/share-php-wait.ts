/**
 * Issue 44's side-by-side run: do PHP's jobs wait longer when a Node worker shares their queue?
 * Real Laravel 8.83 (php-fixture-gen) pushes JOBS jobs onto one Redis queue, every EVERY-th a
 * RecordJob moved to Node, the rest FlakyJobs only PHP runs (a no-op that succeeds). Then, from one
 * moment t0, either Laravel's worker alone runs them all (`php-only`), or Laravel's worker and a
 * Node worker (the library's, share on, a handler for RecordJob only) work the queue at once
 * (`shared`), or (`beside`, the control) the same work on two queues none shared: PHP's jobs on
 * theirs, the moved ones on Node's own, so Node's work costs the machine what it costs when
 * shared, and only the sharing differs. For each PHP job, its wait is when its run began (LQB_RECORD_TIME) less t0: p50 and
 * p95 over PHP's jobs, per round, the candidates alternated, each round's ratio printed.
 *
 * With DB (a SQLite file, or a mysql:// or postgres:// URL) the same on Laravel's database queue:
 * a jobs table of the round's own (Laravel's queue:table migration, made by Laravel), Laravel's
 * `queue:work database`, and a Node worker on the library's DatabaseQueue.
 *
 *   npx tsx bench/share-php-wait.ts      ROUNDS=3 JOBS=5500 EVERY=11 [DB=URL]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { RedisQueue, connectRedis } from '../src/redis/index.js';
import { DatabaseQueue } from '../src/database/index.js';
import { startRedisServer } from '../src/testing/index.js';
import { Worker } from '../src/worker/index.js';
import { redisEnv } from './redis-target.js';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const JOBS = Number(process.env.JOBS ?? 5500);
const EVERY = Number(process.env.EVERY ?? 11);
/** Laravel's database queue on this database instead of Redis; a relative SQLite path is made per round. */
const DB = process.env.DB;
const QUEUE = 'moving';
const MOVED = 'App\\Jobs\\Bridge\\RecordJob';
const PHP_ONLY = 'App\\Jobs\\Bridge\\FlakyJob';
const root = new URL('..', import.meta.url).pathname;

function runPhp(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('php', [join(root, 'php-fixture-gen', script), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;

interface Round {
  /** When PHP's first job began, ms after t0: its worker's start, and what slowed it. */
  first: number;
  p50: number;
  p95: number;
  phpRanMoved: number;
  seconds: number;
}

type How = 'php-only' | 'shared' | 'beside';

async function round(how: How, port: number | undefined): Promise<Round> {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-bench-wait-'));
  const prefix = `lqb-bench-wait-${randomUUID().slice(0, 8)}:`;
  const where =
    port === undefined ? redisEnv : { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_HOST: '127.0.0.1', REDIS_PORT: String(port) };
  const env = {
    ...process.env,
    ...where,
    REDIS_PREFIX: prefix,
    QUEUE_NAME: QUEUE,
    LQB_FAILED_DB: join(dir, 'failed.sqlite'),
    LQB_RECORD_FILE: join(dir, 'php-runs.jsonl'),
    LQB_RECORD_TIME: '1',
    ...(DB
      ? {
          QUEUE_CONNECTION: 'database',
          LQB_QUEUE_DB: /^[a-z]+:\/\//.test(DB) ? DB : join(dir, DB),
          LQB_JOBS_TABLE: `lqb_bench_${randomUUID().slice(0, 8)}_jobs`,
        }
      : {}),
  };
  if (DB) {
    const made = await runPhp('laravel-database-queue.php', ['create-table'], env);
    if (made.status !== 0) throw new Error(`laravel-database-queue.php create-table: ${made.stderr}`);
  }
  const database = DB ? DatabaseQueue.open(env.LQB_QUEUE_DB!, { table: env.LQB_JOBS_TABLE!, defaultQueue: QUEUE }) : undefined;
  const client = connectRedis({ url: where.REDIS_URL, prefix, log: () => undefined });
  try {
    // beside: the same work on two queues, none shared: PHP's jobs on PHP's, the moved ones on Node's own.
    const moved = Math.floor(JOBS / EVERY);
    const pushes: [string, object][] =
      how === 'beside'
        ? [
            ['flaky', { n: 1, count: JOBS - moved, failTimes: 0, queue: QUEUE }],
            ['record', { n: 1, count: moved, queue: `${QUEUE}-node` }],
          ]
        : [['interleaved', { n: 1, count: JOBS, every: EVERY, queue: QUEUE }]];
    for (const [kind, options] of pushes) {
      const pushed = await runPhp('laravel-dispatch.php', [kind, JSON.stringify(options)], env);
      if (pushed.status !== 0) throw new Error(`laravel-dispatch.php: ${pushed.stderr}`);
    }
    const t0 = Date.now() / 1000;
    const laravel = runPhp('laravel-worker.php', [...(DB ? ['database'] : []), `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], env);
    let node: Promise<unknown> = Promise.resolve();
    if (how !== 'php-only') {
      const queues = [how === 'beside' ? `${QUEUE}-node` : QUEUE];
      const worker = new Worker(
        database ?? new RedisQueue(client, { defaultQueue: queues[0] }),
        { [MOVED]: async () => undefined },
        { queues, sleep: 0.05, memory: 0, stopWhenEmpty: true, ...(DB ? { connectionName: 'database' } : {}) },
        { failer: false, log: () => undefined },
      );
      node = worker.run();
    }
    const [ended] = await Promise.all([laravel, node]);
    if (ended.status !== 0) throw new Error(`laravel-worker.php: ${ended.stderr}`);
    const runs = existsSync(env.LQB_RECORD_FILE)
      ? readFileSync(env.LQB_RECORD_FILE, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { class: string; t: number })
      : [];
    const waits = runs
      .filter((r) => r.class === PHP_ONLY)
      .map((r) => (r.t - t0) * 1000)
      .sort((a, b) => a - b);
    if (waits.length !== JOBS - moved) throw new Error(`${how}: PHP ran ${waits.length} of its jobs`);
    return {
      first: waits[0]!,
      p50: quantile(waits, 0.5),
      p95: quantile(waits, 0.95),
      phpRanMoved: runs.filter((r) => r.class === MOVED).length,
      seconds: Math.max(...runs.map((r) => r.t)) - t0,
    };
  } finally {
    if (database) {
      await database.db.query(`drop table if exists ${env.LQB_JOBS_TABLE}`).catch(() => undefined);
      await database.close();
    }
    const keys = await client.keys('*');
    if (keys.length) await client.del(...keys.map((k) => k.slice(prefix.length)));
    client.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const own = process.env.REDIS_URL ? undefined : await startRedisServer();
  console.log(
    `share-php-wait: ${DB ? `Laravel's database queue on ${DB.replace(/:[^:@/]*@/, ':***@')}` : (process.env.REDIS_URL ?? 'a redis-server of its own')}, ROUNDS=${ROUNDS} JOBS=${JOBS} (${JOBS - Math.floor(JOBS / EVERY)} PHP-only, ${Math.floor(JOBS / EVERY)} moved to Node), Laravel 8.83's worker --sleep=0`,
  );
  try {
    for (let n = 1; n <= ROUNDS; n++) {
      const order: How[] = n % 2 ? ['php-only', 'shared', 'beside'] : ['beside', 'shared', 'php-only'];
      const results: Partial<Record<How, Round>> = {};
      for (const how of order) results[how] = await round(how, own?.port);
      const a = results['php-only']!;
      const b = results.shared!;
      const c = results.beside!;
      console.log(
        `round ${n}: PHP's first job began ${a.first.toFixed(0)} ms / ${b.first.toFixed(0)} ms after t0 (alone / shared); PHP's jobs waited p50 ${a.p50.toFixed(0)} ms / p95 ${a.p95.toFixed(0)} ms with PHP alone (it ran all ${a.phpRanMoved} moved jobs too, ${a.seconds.toFixed(2)} s), p50 ${b.p50.toFixed(0)} ms / p95 ${b.p95.toFixed(0)} ms shared with Node (PHP reached ${b.phpRanMoved} moved jobs first, ${b.seconds.toFixed(2)} s): shared/alone p50 ${(b.p50 / a.p50).toFixed(2)}, p95 ${(b.p95 / a.p95).toFixed(2)}; the same Node work beside on a queue of its own: p50 ${c.p50.toFixed(0)} ms / p95 ${c.p95.toFixed(0)} ms, shared/beside p50 ${(b.p50 / c.p50).toFixed(2)}, p95 ${(b.p95 / c.p95).toFixed(2)}`,
      );
    }
  } finally {
    own?.stop();
  }
}

await main();
