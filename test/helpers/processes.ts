/**
 * Running the two sides as processes: the built `lqb` CLI and the PHP scripts of
 * php-fixture-gen/, with the environment that points both at the same Redis prefix.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { root } from './php.js';
import { rawClient, removePrefix, uniquePrefix } from './redis.js';

export interface RunResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
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
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
    // A process that exits before reading its input must not fail the test with EPIPE.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
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
    const raw = rawClient();
    await removePrefix(raw, current.prefix);
    raw.disconnect();
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

/** `lqb work`'s flags for a Node worker alone on its queues (`--no-share`), unless the test shares them. */
export const aloneUnlessShared = (flags: string[]): string[] => (flags.includes('--share') ? flags : ['--no-share', ...flags]);
