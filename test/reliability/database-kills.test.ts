/**
 * The Node worker on Laravel's database queue, killed with SIGKILL mid-run again and again, on
 * SQLite, MariaDB and PostgreSQL: nothing is lost. A reservation the killed process held is
 * taken again once retry_after has passed (2 s here), with its attempts counted again; every
 * job runs to its end, only the killed ones run again, and the table ends empty.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DatabaseQueue } from '../../src/database/index.js';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { QUEUE_DATABASES, withJobsTable } from '../helpers/jobs-table.js';
import { root } from '../helpers/php.js';
import { run } from '../helpers/processes.js';
import { bySize } from '../helpers/tier.js';

const KILLS = bySize(3, 10);
const JOBS = bySize(120, 300);
const RETRY_AFTER = 2;
const WORKER = join(root, 'test/helpers/database-worker.ts');

type Run = Record<string, any>;

/** worker-app.php's SlowJob (records "start", waits, records "done"), as the database driver writes it. */
function slowJob(n: number, seconds: number): string {
  const command = buildJob({ className: 'App\\Jobs\\Bridge\\SlowJob', properties: { n, seconds } });
  return buildPayload(command, { profile: '8', driver: 'database', maxTries: 0 }).raw;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));

describe.each(QUEUE_DATABASES)(`the Node worker on the database queue killed with SIGKILL ${KILLS} times, on %s`, (_, url) => {
  it(
    'loses nothing: killed reservations come back after retry_after, every job runs to its end, the table ends empty',
    () =>
      withJobsTable(url, async (t) => {
        const records = join(t.dir, 'node-runs.jsonl');
        const env = { ...t.env, LQB_NODE_RECORD_FILE: records };
        const runs = (): Run[] =>
          existsSync(records)
            ? readFileSync(records, 'utf8')
                .split('\n')
                .filter(Boolean)
                .map((line) => JSON.parse(line))
            : [];
        const queue = DatabaseQueue.open(t.url, { table: t.table, retryAfter: RETRY_AFTER });
        try {
          await queue.bulkRaw(Array.from({ length: JOBS }, (_, n) => slowJob(n, 0.04)));
          const options = JSON.stringify({ concurrency: 4, retryAfter: RETRY_AFTER, sleep: 0.05 });
          const killedAt = new Map<number, number>();
          for (let kill = 0; kill < KILLS; kill++) {
            const worker = spawn('node', ['--import', 'tsx', WORKER, options], { env, stdio: 'ignore' });
            // Kill it at work: once it has begun a job (starting Node and tsx takes a while on a busy machine).
            const startedBy = Date.now() + 20_000;
            while (!runs().some((r) => r.pid === worker.pid) && Date.now() < startedBy) await pause(10);
            await pause(20 + (kill % 7) * 15);
            killedAt.set(worker.pid!, Date.now());
            worker.kill('SIGKILL');
            await exited(worker);
          }
          const beforeFinal = await queue.reservedSize();
          // The last reservations run out: retry_after past their last renewal, scored in whole seconds.
          await pause(RETRY_AFTER * 1000 + 1500);
          const final = await run(
            'node',
            ['--import', 'tsx', WORKER, JSON.stringify({ concurrency: 8, retryAfter: RETRY_AFTER, stopWhenEmpty: true, sleep: 0 })],
            env,
            { timeoutMs: 180_000 },
          );
          expect(final.status, `the last worker: ${final.stderr.slice(-600)}`).toBe(0);
          expect(await queue.size(), 'rows left in the table').toBe(0);

          const byUuid = new Map<string, Run[]>();
          for (const r of runs()) byUuid.set(r.uuid, [...(byUuid.get(r.uuid) ?? []), r]);
          expect(byUuid.size, 'jobs that ran').toBe(JOBS);
          let rerun = 0;
          for (const [uuid, recorded] of byUuid) {
            const starts = recorded.filter((r) => r.phase === 'start');
            const attempts = starts.map((r) => r.attempts as number);
            // Each reservation counts an attempt: they rise run by run (a kill between reserve and handler leaves a gap).
            expect(attempts, `attempts of ${uuid}, run by run`).toEqual([...attempts].sort((a, b) => a - b));
            expect(new Set(attempts).size, `attempts of ${uuid} repeat`).toBe(attempts.length);
            expect(recorded.at(-1)!.phase, `the last run of ${uuid} completed`).toBe('done');
            for (let i = 1; i < starts.length; i++) {
              rerun++;
              const previous = starts[i - 1]!;
              const killed = killedAt.get(previous.pid);
              expect(killed, `${uuid} attempt ${previous.attempts} ran again, though its process was not killed`).toBeDefined();
              // Taken again only after the kill, once its reservation had run out: 2 s scored in whole
              // seconds is more than 1 s after the reserve; from the handler's start, allow half of it.
              expect(starts[i]!.t, `${uuid} ran again before its process was killed`).toBeGreaterThanOrEqual(killed!);
              expect(starts[i]!.t - previous.t, `${uuid} ran again before retry_after`).toBeGreaterThanOrEqual(500);
            }
          }
          expect(
            rerun + beforeFinal,
            'reservations the kills left behind (rerun jobs, or reserved rows before the last worker)',
          ).toBeGreaterThan(0);
        } finally {
          await queue.close();
        }
      }),
    300_000,
  );
});
