/**
 * `lqb ui` as a supervisor sees it when it cannot serve: the built CLI on a port another process
 * holds ends by itself, with status 1 and one line naming the port and the flag to change. It
 * used to print EADDRINUSE and run on, held open by the Redis clients it had made first.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { root } from '../helpers/php.js';
import { uniquePrefix } from '../helpers/redis.js';
import { runWithin, takenPort } from '../helpers/processes.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Runs `lqb ARGS…` and waits for it to exit, up to `deadlineMs` (it is killed after that). */
const lqb = (args: string[], env: NodeJS.ProcessEnv, deadlineMs: number) =>
  runWithin('node', [join(root, 'dist/cli/main.js'), ...args], env, deadlineMs);

describe('lqb ui on a port already taken', () => {
  it('exits 1 with one line naming the port, the address and --port, and leaves nothing running', async () => {
    const port = await takenPort(cleanups);
    // A Redis that answers (its clients would reconnect forever) and a prefix of this test's own.
    const env = { ...process.env, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: uniquePrefix('ui-taken') };
    const ended = await lqb(['ui', `--port=${port}`], env, 30_000);
    expect(ended.status, `lqb ui --port=${port} (taken): its exit, within 30 s; stderr: ${ended.stderr}`).toBe(1);
    expect(ended.stderr.split('\n').filter(Boolean), 'its standard error, line by line').toEqual([
      `lqb ui: port ${port} on 127.0.0.1 is taken (EADDRINUSE): choose another with --port`,
    ]);
    expect(ended.stdout, 'its standard output (no "serving" line)').toBe('');
  }, 60_000);
});
