/**
 * A worker whose Redis goes away says so once (an `error` event, a log line, its counters), says
 * when Redis is back, and its health() tells a service's probe: connected, the last poll, the
 * jobs in hand. Against a redis-server of the test's own, stopped and started again on its port.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type LaravelQueue } from '../../src/connect/index.js';
import type { WorkerEvent } from '../../src/worker/index.js';
import { root } from '../helpers/php.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis.js';
import { UNKNOWN_LARAVEL } from '../../src/connect/buildWorker.js';

let queue: LaravelQueue | undefined;
let own: OwnRedis | undefined;
const dir = mkdtempSync(join(tmpdir(), 'lqb-health-'));
afterEach(async () => {
  await queue?.close();
  queue = undefined;
  own?.stop();
  own = undefined;
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Generous: a busy machine may take seconds over what an idle one does at once.
async function until(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}`);
    await pause(50);
  }
}

describe('a worker whose Redis goes away and comes back', () => {
  it('says so once, counts it, and health() shows it; then says Redis is back, and polls again', async () => {
    own = await startOwnRedis([]);
    const port = own.port;
    queue = await connect({ redis: `redis://127.0.0.1:${port}/0`, prefix: 'health_', failedDb: join(dir, 'failed.sqlite') });
    const lines: string[] = [];
    const log = (level: string) => (_fields: object, message?: string) => void lines.push(`${level} ${message}`);
    const worker = queue.worker({}, { sleep: 0.05, logger: { debug() {}, info: log('info'), warn: log('warn'), error: log('error') } });
    const errors: [Error, WorkerEvent][] = [];
    const reconnected: WorkerEvent[] = [];
    worker.on('error', (error, event) => void errors.push([error, event]));
    worker.on('reconnected', (event) => void reconnected.push(event));
    const running = worker.run();
    await until('a first poll', () => worker.health().lastPoll !== null);
    expect(worker.health(), 'health() of a worker polling a Redis that answers').toMatchObject({
      connected: true,
      jobsInHand: 0,
      running: true,
      errors: 0,
      downSince: null,
    });

    own.stop();
    own = undefined;
    await until('an error event', () => errors.length > 0);
    const down = worker.health();
    expect(down, 'health() during the outage').toMatchObject({ connected: false, running: true, errors: 1 });
    expect(down.downSince, 'health() does not say since when Redis is gone').toBeInstanceOf(Date);
    expect(worker.stats(), 'stats() during the outage').toMatchObject({ errors: 1, connected: false, running: true });
    expect(errors[0]![0].message, 'the error does not name where Redis was').toMatch(
      new RegExp(`^Redis is unreachable: .*127\\.0\\.0\\.1:${port}.*; retrying, and no job is taken until it answers$`),
    );
    // ioredis retries several times a second: still one event and one line.
    await until('a retry counted in health().connectionErrors', () => worker.health().connectionErrors > 1);
    expect(errors.length, 'an error event per retry').toBe(1);
    expect(
      lines.filter((l) => l.startsWith('error ')),
      'the logger heard more than one line of the outage',
    ).toEqual([`error error ${errors[0]![0].message}`]);
    const lastPollDuringOutage = worker.health().lastPoll!.getTime();

    own = await startOwnRedis([], port);
    const back = Date.now();
    await until('the reconnected event', () => reconnected.length > 0);
    expect(reconnected[0]!.reason, 'the reconnected event').toMatch(/^Redis answers again, after \d+\.\d s$/);
    expect(
      lines.filter((l) => l.startsWith('info reconnected')),
      'the logger did not hear Redis come back',
    ).toHaveLength(1);
    await until('a poll after the outage', () => worker.health().lastPoll!.getTime() >= back);
    expect(worker.health(), 'health() once Redis is back').toMatchObject({ connected: true, downSince: null, errors: 1 });
    expect(lastPollDuringOutage, 'lastPoll moved while Redis was gone').toBeLessThan(back);
    await worker.stop();
    await running;
  });

  it('lqb work with a Redis URL nothing answers says so once, on its own line, after its start line', async () => {
    const handlers = join(dir, 'handlers.mjs');
    writeFileSync(handlers, "export default { 'App\\\\Jobs\\\\X': async () => {} };\n");
    const child = spawn(
      'node',
      [join(root, 'dist/cli/main.js'), 'work', `--handlers=${handlers}`, '--redis=redis://127.0.0.1:1/0', '--prefix=', '--sleep=0.1'],
      {
        env: { ...process.env, LQB_FAILED_DB: join(dir, 'cli-failed.sqlite') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Its start on a busy machine may take seconds: the line is waited for, then a while more,
    // in which ioredis retries, for a second line to show if the worker printed one per retry.
    await until('the line saying Redis is unreachable', () => stdout.includes('Error:'));
    await pause(1500);
    child.kill('SIGTERM');
    expect(await exited, `lqb work did not stop on SIGTERM: ${stderr}`).toBe(0);
    expect(stderr.split('\n').filter(Boolean), 'standard error').toEqual([
      `lqb work: worker starting: redis redis://127.0.0.1:1/0, prefix "", unique locks redis://127.0.0.1:1/0, cache prefix "laravel_cache", Laravel ${UNKNOWN_LARAVEL}, queues default, handlers App\\Jobs\\X; a job with no Node handler is left on the queue for a PHP worker (share; share: false / --no-share fails it instead)`,
    ]);
    const errorLines = stdout.split('\n').filter((l) => l.includes('Error:'));
    expect(errorLines.length, `not one line for the outage: ${stdout}`).toBe(1);
    expect(errorLines[0], 'the line does not say Redis is unreachable, and where').toMatch(
      /Error: +Redis is unreachable: connect ECONNREFUSED 127\.0\.0\.1:1; retrying/,
    );
  });
});

process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
