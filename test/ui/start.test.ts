/**
 * startDashboard (and createDashboard under it) failing leaves nothing open: a program that
 * catches the rejection and does nothing more ends by itself. Each case runs in a Node process
 * of its own on the built package, and the test waits (with a generous deadline) for that
 * process to end on its own: a Redis client or a timer left behind would keep it running.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { root } from '../helpers/php.js';
import { uniquePrefix } from '../helpers/redis.js';
import { runWithin, takenPort } from '../helpers/processes.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const UI = pathToFileURL(join(root, 'dist/ui/index.js')).href;

/**
 * Runs `body` (an ES module importing `ui`, the built dist/ui/index.js) in a process of its own;
 * resolves with its exit status (or 'still running' after `deadlineMs`) and what it printed.
 */
function program(body: string, deadlineMs = 30_000): Promise<{ status: number | string | null; stdout: string; stderr: string }> {
  return runWithin('node', ['--input-type=module', '-e', `import * as ui from ${JSON.stringify(UI)};\n${body}`], process.env, deadlineMs);
}

/** Settings on the shared Redis under a prefix of the test's own, failed jobs in a scratch SQLite file. */
function settings(extra: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-ui-start-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return JSON.stringify({
    redis: 'redis://127.0.0.1:6379',
    prefix: uniquePrefix('ui-start'),
    failedDb: join(dir, 'failed.sqlite'),
    ...extra,
  });
}

describe('startDashboard', () => {
  it('on a port already taken rejects with DashboardListenError, and the program ends by itself', async () => {
    const port = await takenPort(cleanups);
    const ended = await program(`
      try {
        await ui.startDashboard({ port: ${port}, settings: ${settings()} });
        console.log('served');
      } catch (error) {
        console.log(JSON.stringify({ name: error.name, code: error.code, choose: error.choose, message: error.message }));
      }`);
    expect(ended.status, `the program's exit, within 30 s; stderr: ${ended.stderr}`).toBe(0);
    expect(JSON.parse(ended.stdout), 'what startDashboard rejected with').toEqual({
      name: 'DashboardListenError',
      code: 'EADDRINUSE',
      choose: 'port',
      message: `port ${port} on 127.0.0.1 is taken (EADDRINUSE): choose another port`,
    });
  }, 60_000);

  it('serves on a free port, and once closed the program ends by itself', async () => {
    const ended = await program(`
      const started = await ui.startDashboard({ port: 0, settings: ${settings()}, queues: ['none'] });
      const answer = await fetch(started.url + 'api/overview');
      console.log(JSON.stringify({ url: started.url, status: answer.status }));
      await started.close();`);
    expect(ended.status, `the program's exit, within 30 s; stderr: ${ended.stderr}`).toBe(0);
    const said = JSON.parse(ended.stdout) as { url: string; status: number };
    expect(said.url, 'the address it served').toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(said.status, 'the overview answered while it served').toBe(200);
  }, 60_000);
});

describe('createDashboard that cannot be made', () => {
  it('throws having closed the Redis client it made first, and the program ends by itself', async () => {
    // The database connection with Redis named (for the cache store) and a database URL of no
    // known scheme: the Redis client is made before the database URL is read.
    const ended = await program(`
      try {
        ui.createDashboard({ settings: ${settings({ connection: 'database', queueDb: 'bogus://nowhere' })} });
        console.log('made');
      } catch (error) {
        console.log(error.message);
      }`);
    expect(ended.status, `the program's exit, within 30 s; stderr: ${ended.stderr}`).toBe(0);
    expect(ended.stdout.trim(), 'what createDashboard threw').toMatch(/unsupported database URL scheme "bogus"/);
  }, 60_000);
});
