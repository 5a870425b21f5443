/**
 * `lqb port` on every job and queued-listener class of the sample apps (php-fixture-gen/shapes-app,
 * and port-app's job guarded by Laravel's own middleware; Debian's Laravel 8.83): each module it writes compiles under `tsc --strict` beside its declarations, and each
 * test it writes passes under vitest, running the handler with runJob on the payload the app's own
 * PHP made. The project they are written into resolves `laravel-queue-bridge` to this repository.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readShapes } from '../../src/shapes/read.js';
import { root } from '../helpers/php.js';
import { lqb } from '../helpers/processes.js';

const APP = join(root, 'php-fixture-gen/shapes-app');
/** A second sample app: a job guarded by Laravel's own job middleware. */
const PORT_APP = join(root, 'php-fixture-gen/port-app');
let dir: string;
/** Each class ported, with the app it is in. */
let targets: [app: string, className: string][];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lqb-port-'));
  // A project of the user's: its node_modules has this package (this repository) and the tools.
  const modules = join(dir, 'node_modules');
  execFileSync('mkdir', [modules]);
  for (const entry of readdirSync(join(root, 'node_modules'))) symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
  symlinkSync(root, join(modules, 'laravel-queue-bridge'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  const shapesFile = join(dir, 'shapes.json');
  const made = await lqb(['shapes', `--app=${APP}`, `--out=${shapesFile}`], process.env);
  expect(made.status, made.stderr).toBe(0);
  targets = [
    ...Object.values(readShapes(shapesFile).classes)
      .filter((shape) => shape.kind === 'job' || shape.kind === 'listener')
      .map((shape): [string, string] => [APP, shape.name]),
    [PORT_APP, 'App\\Jobs\\GuardedExport'],
  ];
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('lqb port on every job and queued-listener class of the sample app', () => {
  it('writes a module, its declarations and its test for each, and the PHP line giving the class a queue', async () => {
    expect(targets.length, 'job and listener classes in the sample apps').toBeGreaterThanOrEqual(6);
    for (const [app, job] of targets) {
      const result = await lqb(['port', job, `--app=${app}`, `--out=${dir}`], process.env, { timeoutMs: 60_000 });
      expect(result.status, `lqb port ${job}: exit status (stderr: ${result.stderr})`).toBe(0);
      const name = job.split('\\').at(-1)!;
      expect(result.stdout.split('\n').filter(Boolean), `lqb port ${job}: what it printed`).toEqual([
        `wrote ${join(dir, `${name}.ts`)}`,
        `wrote ${join(dir, `${name}.jobs.d.ts`)}`,
        `wrote ${join(dir, `${name}.test.ts`)}`,
        expect.stringMatching(
          new RegExp(
            `^PHP: add (\\$this->onQueue\\('[a-z-]+'\\); to ${job.replaceAll('\\', '\\\\')}'s constructor|public \\$queue = '[a-z-]+'; to ${job.replaceAll('\\', '\\\\')} \\(a listener's queue\\))`,
          ),
        ),
      ]);
    }
  }, 120_000);

  it('says what Node does with each middleware the class runs through', () => {
    const module = readFileSync(join(dir, 'GuardedExport.ts'), 'utf8');
    expect(
      module.split('\n').filter((line) => line.startsWith('// middleware')),
      'the middleware notes of App\\Jobs\\GuardedExport',
    ).toEqual([
      '// middleware: WithoutOverlapping (key 1, releaseAfter: 10, expireAfter: 180): wrap the handler in',
      "// middleware: RateLimited: wrap the handler in rateLimited(<the limiter's name>, (job) => ({ maxAttempts, key }), handler) from",
    ]);
  });

  it('each module compiles under tsc --strict', () => {
    const files = readdirSync(dir).filter((file) => file.endsWith('.ts'));
    const tsc = spawnSync(
      process.execPath,
      [
        join(root, 'node_modules/typescript/bin/tsc'),
        '--strict',
        '--noEmit',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--skipLibCheck',
        ...files,
      ],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(tsc.stdout + tsc.stderr, `tsc --strict over ${files.join(', ')}`).toBe('');
    expect(tsc.status, 'tsc exit status').toBe(0);
  }, 120_000);

  it('each test passes, running its handler with runJob on the payload the app made', () => {
    const run = spawnSync(
      process.execPath,
      [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=json', `--outputFile=${join(dir, 'report.json')}`],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, VITEST: undefined, VITEST_MODE: undefined, NODE_OPTIONS: undefined },
      },
    );
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as {
      testResults: { name: string; status: string; message: string }[];
    };
    const results = report.testResults.map((file) => [file.name.split('/').at(-1), file.status, file.message]);
    expect(results.length, `test files run (stderr: ${run.stderr.slice(-2000)})`).toBe(targets.length);
    expect(
      results.filter(([, status]) => status !== 'passed'),
      'test files that did not pass',
    ).toEqual([]);
  }, 120_000);

  it('refuses a notification in one line', async () => {
    const result = await lqb(['port', 'App\\Notifications\\InvoicePaid', `--app=${APP}`, `--out=${dir}`], process.env, {
      timeoutMs: 60_000,
    });
    expect([result.status, result.stderr.trim().split('\n').length], 'exit status, lines').toEqual([1, 1]);
    expect(result.stderr, 'the reason').toContain('is a notification: lqb port writes job and queued-listener classes');
  });
});
