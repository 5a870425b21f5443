/**
 * `lqb check` against the shapes PHP reads of the sample app (php-fixture-gen/shapes-app, Debian's
 * Laravel 8.83): a handlers module that matches passes; a key naming no class, and a method PHP
 * computes that is neither translated nor given, fail with a line each; with --types, the project
 * is type-checked by the TypeScript compiler against today's shapes (a property the code reads
 * that the class no longer has is a line naming the file and place), and the declarations file is
 * put back as it was.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../helpers/php.js';
import { lqb } from '../helpers/processes.js';

const APP = join(root, 'php-fixture-gen/shapes-app');
let dir: string;
let shapesFile: string;
let typesFile: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lqb-check-'));
  shapesFile = join(dir, 'lqb-shapes.json');
  typesFile = join(dir, 'jobs.d.ts');
  const made = await lqb(['shapes', `--app=${APP}`, `--out=${shapesFile}`, `--types=${typesFile}`], process.env);
  expect(made.status, made.stderr).toBe(0);
  // The project's own node_modules, where its TypeScript compiler is.
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function handlersModule(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `export default {\n${body}\n};\n`);
  return file;
}

const check = (args: string[]) => lqb(['check', `--shapes=${shapesFile}`, ...args], process.env, { timeoutMs: 60_000 });

describe('lqb check', () => {
  it('passes a handlers module whose keys are the app’s classes and whose methods PHP computes are given', async () => {
    const file = handlersModule(
      'good.mjs',
      `'App\\\\Jobs\\\\ShipOrder': () => undefined,
  'App\\\\Jobs\\\\PlainReport': Object.assign(() => undefined, { uniqueId: (job) => String(job.command.month) }),
  'App\\\\Listeners\\\\SendShipmentNotification@handle': () => undefined,
  'Illuminate\\\\Notifications\\\\SendQueuedNotifications': () => undefined,`,
    );
    const result = await check([`--handlers=${file}`]);
    expect([result.status, result.stderr], 'exit status, stderr').toEqual([0, '']);
    expect(result.stdout, 'the closing line').toMatch(/^4 handlers match the app's \d+ classes\n$/);
  });

  it('names each key that is no class of the app, and each method neither translated nor given, a line each', async () => {
    const file = handlersModule(
      'bad.mjs',
      `'App\\\\Jobs\\\\ShipOrdr': () => undefined,
  'App\\\\Jobs\\\\PlainReport': () => undefined,
  'App\\\\Jobs\\\\RetryLater': Object.assign(() => undefined, { backoff: () => [1, 2] }),`,
    );
    const result = await check([`--handlers=${file}`]);
    expect(result.status, 'exit status').toBe(1);
    expect(result.stderr.trim().split('\n'), 'the lines').toEqual([
      `lqb check: handler key "App\\\\Jobs\\\\ShipOrdr": the app has no class App\\Jobs\\ShipOrdr (in ${shapesFile}); the nearest is App\\Jobs\\ShipOrder`,
      'lqb check: App\\Jobs\\PlainReport::uniqueId() is PHP that lqb shapes did not translate (it calls or names sprintf, which is not translated): give the handler of "App\\\\Jobs\\\\PlainReport" a uniqueId(job) function',
      'lqb check: App\\Jobs\\RetryLater::retryUntil() is PHP that lqb shapes did not translate (it uses `*` where `)` was expected): give the handler of "App\\\\Jobs\\\\RetryLater" a retryUntil(job) function',
    ]);
  });

  it('--types: the project is type-checked against today’s shapes, and the declarations file put back', async () => {
    const project = join(dir, 'tsconfig.json');
    writeFileSync(
      project,
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          module: 'esnext',
          moduleResolution: 'bundler',
          skipLibCheck: true,
        },
        files: ['code.ts', 'jobs.d.ts'],
      }),
    );
    // Yesterday's declarations: ShipOrder still had a property `gone`, which the code reads.
    const today = readFileSync(typesFile, 'utf8');
    const stale = today.replace('      orderId: number;', '      orderId: number;\n      gone: string;');
    expect(stale, 'the stale declarations differ').not.toBe(today);
    writeFileSync(typesFile, stale);
    writeFileSync(
      join(dir, 'code.ts'),
      "import type { Jobs } from './jobs';\n\nexport const label = (command: Jobs['App\\\\Jobs\\\\ShipOrder']['command']): string =>\n  command.orderId.toFixed() + command.gone;\n",
    );
    const file = handlersModule('types.mjs', `'App\\\\Jobs\\\\ShipOrder': () => undefined,`);
    const result = await check([`--handlers=${file}`, `--types=${typesFile}`, `--project=${project}`]);
    expect(result.status, `exit status (stderr: ${result.stderr})`).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines.length, `one line: ${result.stderr}`).toBe(1);
    expect(lines[0], 'the compiler’s line').toMatch(/^lqb check: .*code\.ts:4:39: TS2339: Property 'gone' does not exist on type/);
    expect(readFileSync(typesFile, 'utf8'), 'the declarations file, put back').toBe(stale);
  });
});
