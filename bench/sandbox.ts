/**
 * What the watchdog and the sandbox cost per job, in one run: the same no-op jobs (about 1.2 KB,
 * the RecordJob PHP's fixtures push) worked by `new Worker(queue, handlers)`
 *   - `in-process, no timeout`: timeout 0: no timer, nothing watched (the floor);
 *   - `in-process, watchdog off`: timeout 60, `watchdog: false` (the worker's own timer only);
 *   - `in-process`: timeout 60, each job also watched by the watchdog thread (the default);
 *   - `sandboxed`: the handlers module in a pool of worker threads (`sandboxedHandlers`, one
 *     thread per concurrency slot), timeout 60.
 * Modes take turns, RUNS rounds, in reverse order every other round, against REDIS_URL (else 127.0.0.1:6379)
 * under a prefix of their own. The table gives each mode's median jobs/s and its median CPU time
 * per job: the process's user + system time, its threads' included, which a busy machine sways
 * far less than the clock.
 *
 *   npx tsx bench/sandbox.ts
 *   JOBS=5000 WARMUP=1000 RUNS=3 CONCURRENCY=8 npx tsx bench/sandbox.ts
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { buildPayload } from '../src/laravel/index.js';
import { bridgeRecordJob } from '../src/cli/demo.js';
import { RedisQueue, connectRedis } from '../src/redis/index.js';
import { Worker, sandboxedHandlers, type HandlerMap } from '../src/worker/index.js';
import { dropPrefix } from './scratch.js';
import { median } from './stats.js';
import { REDIS_URL } from './redis-target.js';

const JOBS = Number(process.env.JOBS ?? 5_000);
const WARMUP = Number(process.env.WARMUP ?? 1_000);
const RUNS = Number(process.env.RUNS ?? 3);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const CLASS = 'App\\Jobs\\Bridge\\RecordJob';
const MODES = ['in-process, no timeout', 'in-process, watchdog off', 'in-process', 'sandboxed'] as const;
type Mode = (typeof MODES)[number];

const payload = (n: number) =>
  buildPayload(
    bridgeRecordJob({ n, label: 'bench', ratio: 0.5, items: { pad: Array.from({ length: 12 }, () => 'padding-to-a-kilobyte') } }),
  ).raw;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-bench-sandbox-'));
  const module = join(dir, 'handlers.mjs');
  // The handler reads the command, as a real one does: the copy into the thread is part of the cost.
  writeFileSync(module, `export default { ${JSON.stringify(CLASS)}: async (job) => { job.command.n; } };\n`);
  const prefix = `lqb-bench-${randomBytes(3).toString('hex')}:`;
  const client = connectRedis({ url: REDIS_URL, prefix });
  const queue = new RedisQueue(client, { defaultQueue: 'default' });
  const sandbox = await sandboxedHandlers(module, { threads: CONCURRENCY });
  const inProcess: HandlerMap = { [CLASS]: async (job) => void job.command.n };
  const results = new Map<Mode, number[]>(MODES.map((mode) => [mode, []]));
  const cpu = new Map<Mode, number[]>(MODES.map((mode) => [mode, []]));
  const work = async (mode: Mode, count: number): Promise<number> => {
    for (let i = 0; i < count; i += 1000) await queue.bulkRaw(Array.from({ length: Math.min(1000, count - i) }, (_, j) => payload(i + j)));
    const handlers = mode === 'sandboxed' ? sandbox.handlers : inProcess;
    const worker = new Worker(
      queue,
      handlers,
      {
        stopWhenEmpty: true,
        sleep: 0,
        memory: 0,
        concurrency: CONCURRENCY,
        timeout: mode === 'in-process, no timeout' ? 0 : 60,
        watchdog: mode !== 'in-process, watchdog off',
      },
      { failer: false },
    );
    const used = process.cpuUsage();
    const start = performance.now();
    await worker.run();
    const seconds = (performance.now() - start) / 1000;
    const spent = process.cpuUsage(used);
    cpu.get(mode)!.push((spent.user + spent.system) / count);
    const left = await queue.size();
    if (left !== 0) throw new Error(`${mode}: ${left} jobs left in the queue after the run`);
    return count / seconds;
  };
  try {
    for (const mode of MODES) await work(mode, WARMUP);
    for (const mode of MODES) cpu.get(mode)!.length = 0;
    for (let run = 0; run < RUNS; run++)
      for (const mode of run % 2 ? [...MODES].reverse() : MODES) results.get(mode)!.push(await work(mode, JOBS));
  } finally {
    await sandbox.close();
    await queue.close();
    client.disconnect();
    await dropPrefix(prefix);
    rmSync(dir, { recursive: true, force: true });
  }
  const floor = median(cpu.get('in-process, no timeout')!);
  console.log(`${JOBS} no-op jobs per run, concurrency ${CONCURRENCY}, median of ${RUNS} runs (Node ${process.version})\n`);
  console.log('| mode | jobs/s | CPU µs per job | CPU µs per job over the floor |');
  console.log('|---|---:|---:|---:|');
  for (const mode of MODES) {
    const micros = median(cpu.get(mode)!);
    console.log(`| ${mode} | ${Math.round(median(results.get(mode)!))} | ${micros.toFixed(1)} | ${(micros - floor).toFixed(1)} |`);
  }
}

await main();
