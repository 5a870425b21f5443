/**
 * What an embedded worker says when its program gives no logger: the start line, failures,
 * outages and why it stopped, on standard error; no line per job; and nothing with `logger: false`.
 * A real service (a Node program on the built package) against real Redis.
 */
import { unshapedLine } from '../../src/shapes/unshaped.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root } from '../helpers/php.js';
import { rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const dir = mkdtempSync(join(tmpdir(), 'lqb-service-logger-'));
const prefixes: string[] = [];
afterAll(async () => {
  const raw = rawClient();
  for (const prefix of prefixes) await removePrefix(raw, prefix);
  raw.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a service that dispatches a job that runs and one that throws, then works the queue until it is empty. */
function service(loggerOption: string): { status: number | null; stdout: string; stderr: string } {
  const prefix = uniquePrefix('svclog');
  prefixes.push(prefix);
  const script = join(dir, `service-${prefixes.length}.mjs`);
  writeFileSync(
    script,
    [
      `import { connect } from ${JSON.stringify(join(root, 'dist/index.js'))};`,
      `const queue = await connect({ redis: 'redis://127.0.0.1:6379', prefix: ${JSON.stringify(prefix)}, failedDb: ${JSON.stringify(join(dir, `failed-${prefixes.length}.sqlite`))}, laravel: '12.67.0'${loggerOption} });`,
      "await queue.dispatch('App\\\\Jobs\\\\Fine', { n: 1 });",
      "await queue.dispatch('App\\\\Jobs\\\\Broken', { n: 2 });",
      "const worker = queue.worker({ 'App\\\\Jobs\\\\Fine': async () => undefined, 'App\\\\Jobs\\\\Broken': async () => { throw new Error('the broken job broke'); } }, { stopWhenEmpty: true, sleep: 0.05 });",
      'const stop = await worker.run();',
      'await queue.close();',
      "console.log('run ended: ' + stop.reason);",
    ].join('\n'),
  );
  const ran = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 60_000 });
  return { status: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

describe('connect() without a logger', () => {
  it('says the start line, the failure and the stop on standard error, and no line per job', () => {
    const ran = service('');
    expect([ran.status, ran.stdout.trim()], `the service: ${ran.stderr}`).toEqual([0, 'run ended: empty']);
    const lines = ran.stderr.split('\n').filter(Boolean);
    expect(
      lines.every((line) => line.startsWith('laravel-queue-bridge: ')),
      `lines not the package's own: ${ran.stderr}`,
    ).toBe(true);
    expect(
      lines.map((line) =>
        line
          .replace(/^(laravel-queue-bridge: worker starting:).*/, '$1 …')
          .replace(/^(laravel-queue-bridge: failed App\\Jobs\\Broken the broken job broke).*/, '$1'),
      ),
      'what the service owner reads',
    ).toEqual([
      // Dispatched by class name without shapes: said once per class (shapes/unshaped.ts).
      `laravel-queue-bridge: ${unshapedLine('App\\Jobs\\Fine', 'library')}`,
      `laravel-queue-bridge: ${unshapedLine('App\\Jobs\\Broken', 'library')}`,
      'laravel-queue-bridge: worker starting: …',
      'laravel-queue-bridge: failed App\\Jobs\\Broken the broken job broke',
      'laravel-queue-bridge: stopping empty',
    ]);
  });

  it('says nothing with logger: false', () => {
    const ran = service(', logger: false');
    expect([ran.status, ran.stdout.trim()], `the service: ${ran.stderr}`).toEqual([0, 'run ended: empty']);
    expect(ran.stderr, 'what a service with logger: false printed on standard error').toBe('');
  });
});
