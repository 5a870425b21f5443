/**
 * Running the two sides as processes: the built `lqb` CLI and the PHP scripts of
 * php-fixture-gen/, with the environment that points both at the same Redis prefix.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { root } from './php.js';
import { rawClient, removePrefix, uniquePrefix } from './redis.js';
import { unshapedLine } from '../../src/shapes/unshaped.js';

export interface RunResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** It had not ended by `timeoutMs`, and was killed (run() says; others that build a RunResult may leave it out). */
  timedOut?: boolean;
}

/** Runs a command to its end (or kills it after `timeoutMs`). */
export function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { input?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, timedOut });
    });
    // A process that exits before reading its input must not fail the test with EPIPE.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** run()'s result as the stopping tests read it: the exit code (or signal), 'still running' when it had to be killed. */
export async function runWithin(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  deadlineMs: number,
): Promise<{ status: number | string | null; stdout: string; stderr: string }> {
  const ended = await run(command, args, env, { timeoutMs: deadlineMs });
  return { status: ended.timedOut ? 'still running' : (ended.status ?? ended.signal), stdout: ended.stdout, stderr: ended.stderr };
}

export const lqb = (args: string[], env: NodeJS.ProcessEnv, options?: { input?: string; timeoutMs?: number; nodeFlags?: string[] }) =>
  run('node', [...(options?.nodeFlags ?? []), join(root, 'dist/cli/main.js'), ...args], env, options);
export const php = (script: string, args: string[], env: NodeJS.ProcessEnv, options?: { input?: string; timeoutMs?: number }) =>
  run('php', [join(root, 'php-fixture-gen', script), ...args], env, options);

export const HANDLERS = join(root, 'test/e2e/fixtures/handlers.mjs');

/** What laravel-dispatch.php says of each job real Laravel pushed: a JSON line each. */
export interface LaravelPushed {
  id: string;
  uuid: string;
  queue: string;
  class: string;
}

/** Real Laravel pushes `kind` jobs onto `queue` (laravel-dispatch.php); fails the test if it writes to standard error. */
export async function laravelDispatch(env: NodeJS.ProcessEnv, queue: string, kind: string, options: object): Promise<LaravelPushed[]> {
  const result = await php('laravel-dispatch.php', [kind, JSON.stringify({ queue, ...options })], env);
  expect(result.stderr, `laravel-dispatch.php ${kind} wrote to standard error`).toBe('');
  return result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as LaravelPushed);
}

/** A scratch directory with the record files and the shared failed_jobs SQLite file. */
export interface Scratch {
  dir: string;
  env: NodeJS.ProcessEnv;
  nodeRuns(): Record<string, any>[];
  phpRuns(): Record<string, any>[];
  remove(): void;
}

export function scratch(prefix: string, queue: string): Scratch {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-e2e-'));
  const env = {
    ...process.env,
    REDIS_PREFIX: prefix,
    QUEUE_NAME: queue,
    LQB_FAILED_DB: join(dir, 'failed.sqlite'),
    LQB_RECORD_FILE: join(dir, 'php-runs.jsonl'),
    LQB_NODE_RECORD_FILE: join(dir, 'node-runs.jsonl'),
  };
  const lines = (file: string) => (existsSync(file) ? recordLines(readFileSync(file, 'utf8')) : []);
  return {
    dir,
    env,
    nodeRuns: () => lines(env.LQB_NODE_RECORD_FILE),
    phpRuns: () => lines(env.LQB_RECORD_FILE),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A fresh Redis prefix and scratch directory for each test of the file, both removed after it.
 * Read `current.s` and `current.prefix` inside the tests.
 */
export function scratchPerTest(label: string, queue = 'default'): { s: Scratch; prefix: string } {
  const current = {} as { s: Scratch; prefix: string };
  beforeEach(() => {
    current.prefix = uniquePrefix(label);
    current.s = scratch(current.prefix, queue);
  });
  afterEach(async () => {
    // The queue's database and the cache's (db 1, where --env puts pause switches and restart signals).
    for (const db of [0, 1]) {
      const raw = rawClient(db);
      await removePrefix(raw, current.prefix);
      raw.disconnect();
    }
    current.s.remove();
  });
  return current;
}

/**
 * Run records, one JSON line each. A record a process is appending while the test reads is not
 * whole yet (the file ends without its newline): it is left for the next read.
 */
function recordLines(text: string): Record<string, any>[] {
  const whole = text.endsWith('\n') ? text : text.slice(0, text.lastIndexOf('\n') + 1);
  return whole
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** What `lqb work` writes to standard error when all goes well: its start line alone. */
export const START_LINE_ONLY = /^lqb work: worker starting: [^\n]+\n$/;

/** What `lqb dispatch` of a class by name without shapes writes to standard error when all goes well: the one line that says so. */
export const UNSHAPED_ONLY = (className: string): string => `lqb dispatch: ${unshapedLine(className, 'cli')}\n`;

/** `lqb work`'s flags for a Node worker alone on its queues (`--no-share`), unless the test shares them. */
export const aloneUnlessShared = (flags: string[]): string[] => (flags.includes('--share') ? flags : ['--no-share', ...flags]);

/** A port held by a plain TCP server until the cleanup pushed onto `cleanups` runs. */
export async function takenPort(cleanups: (() => unknown)[]): Promise<number> {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => holder.close());
  return (holder.address() as { port: number }).port;
}
