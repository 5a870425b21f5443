/**
 * The package as a user gets it: `npm pack`, installed into a scratch project of its own, then
 * used from an ES module and from a CommonJS script, through the root and the subpath entries
 * (internals only through their subpath), and `npx lqb` run there. What the tarball holds is
 * checked too: the builds, the Lua and PHP they read, the schemas, the README and docs/ (whose links resolve in the install), and no sources
 * or fixture generators.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { quickStartDefaults } from './quick-start-defaults.js';
import { moduleTrace, modulesLoaded } from '../helpers/bundle.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string };
const npm = (args: string[], cwd: string): string =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

let scratch = '';
let files: string[] = [];

/** Each entry of package.json's `exports` (but ./package.json), as a name to import it under. */
const SUBPATH_IMPORTS: [string, string][] = ['', 'php', 'laravel', 'redis', 'worker', 'shapes', 'testing'].map((sub) => [
  sub || 'root',
  sub ? `laravel-queue-bridge/${sub}` : 'laravel-queue-bridge',
]);

/** tsc, strict, in the scratch project, with Node's types. */
function tsc(args: string[]) {
  const bin = join(root, 'node_modules/typescript/bin/tsc');
  const common = ['--noEmit', '--strict', '--target', 'es2022', '--typeRoots', join(root, 'node_modules/@types'), '--types', 'node'];
  return spawnSync(process.execPath, [bin, ...common, ...args], { cwd: scratch, encoding: 'utf8' });
}

/** Runs a script file in the scratch project; returns what it printed (JSON lines parsed). */
function run(name: string, source: string, { nodeFlags = [] as string[], env = process.env } = {}): unknown {
  writeFileSync(join(scratch, name), source);
  const out = execFileSync(process.execPath, [...nodeFlags, name], {
    cwd: scratch,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  return JSON.parse(out);
}

beforeAll(() => {
  // dist/ is built by the global setup (test/helpers/build.ts); pack what it built, as npm publish would.
  scratch = mkdtempSync(join(tmpdir(), 'lqb-pack-'));
  const packed = JSON.parse(npm(['pack', '--ignore-scripts', '--json', '--pack-destination', scratch], root)) as {
    filename: string;
    files: { path: string }[];
  }[];
  const tarball = join(scratch, packed[0]!.filename);
  files = packed[0]!.files.map((file) => file.path);

  const project = join(scratch, 'app');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true }) + '\n');
  // The SQLite driver is an optional peer dependency: the user adds it. Its native build is taken
  // from the repository's own install (same version, same Node) rather than compiled again.
  const sqlite = JSON.parse(readFileSync(join(root, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string };
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', tarball, `better-sqlite3@${sqlite.version}`], project);
  const binary = 'build/Release/better_sqlite3.node';
  mkdirSync(join(project, 'node_modules/better-sqlite3/build/Release'), { recursive: true });
  copyFileSync(join(root, 'node_modules/better-sqlite3', binary), join(project, 'node_modules/better-sqlite3', binary));
  scratch = project;
}, 120_000);

afterAll(() => {
  if (scratch) rmSync(join(scratch, '..'), { recursive: true, force: true });
});

describe('npm pack', () => {
  it('ships dist/, schemas/, docs/ and the README, and no sources or fixture generators', () => {
    expect(files.filter((path) => path.startsWith('src/') || path.startsWith('php-fixture-gen/') || path.startsWith('test/'))).toEqual([]);
    expect(files.filter((path) => !path.startsWith('dist/') && !path.startsWith('schemas/') && !path.startsWith('docs/')).sort()).toEqual([
      'README.md',
      'package.json',
    ]);
    for (const path of [
      'dist/index.js',
      'dist/cjs/index.js',
      'dist/cjs/package.json',
      'dist/cli/main.js',
      'dist/redis/index.js',
      'dist/cjs/redis/lua.generated.js',
      'dist/ui/assets/app.js',
      'dist/shapes/reflect.php',
      'dist/cjs/shapes/reflect.php',
      'dist/shapes/methods.php',
      'dist/cjs/shapes/methods.php',
      'dist/cjs/php/index.d.ts',
      'schemas/payload-8.json',
    ]) {
      expect(files).toContain(path);
    }
    // The Lua steps are built into the modules (a bundle carries them); source maps would point at the unshipped src/.
    expect(
      files.filter((path) => path.endsWith('.lua') || path.endsWith('.map')),
      'Lua files or source maps in the tarball',
    ).toEqual([]);
  });
});

describe('what the install brings', () => {
  it('resolves every link of the installed README and docs/ pages to a file the install holds', () => {
    const installed = join(scratch, 'node_modules', manifest.name);
    const pages = [
      'README.md',
      ...readdirSync(join(installed, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
    ];
    const dead: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(installed, page), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        if (!existsSync(join(installed, dirname(page), target!))) dead.push(`${page} → ${target}`);
      }
    }
    expect(pages, 'the pages the install holds').toContain('docs/library.md');
    expect(dead, 'links of the installed pages that name a file the install lacks').toEqual([]);
  });
  it('ioredis, ajv, hash-wasm and htm (the dashboard’s Preact) with theirs: 16 packages, no SQL library (the drivers are the user’s choice)', () => {
    const modules = join(scratch, 'node_modules');
    const brought = new Set<string>();
    const walk = (name: string) => {
      if (brought.has(name)) return;
      brought.add(name);
      const { dependencies = {} } = JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
      };
      for (const dependency of Object.keys(dependencies)) walk(dependency);
    };
    const { dependencies = {} } = JSON.parse(readFileSync(join(modules, manifest.name, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    for (const dependency of Object.keys(dependencies)) walk(dependency);
    expect([...brought].sort(), 'the packages laravel-queue-bridge installs').toEqual([
      '@ioredis/commands',
      'ajv',
      'cluster-key-slot',
      'debug',
      'denque',
      'fast-deep-equal',
      'fast-uri',
      'hash-wasm',
      'htm',
      'ioredis',
      'json-schema-traverse',
      'ms',
      'redis-errors',
      'redis-parser',
      'require-from-string',
      'standard-as-callback',
    ]);
  });
});

// An array holding an object with a protected property (PHP writes its name as NUL * NUL id).
const serialized = 'a:2:{s:4:"name";s:3:"Ada";i:0;O:8:"App\\User":1:{s:5:"\0*\0id";i:7;}}';

describe('installed in a scratch project', () => {
  it('imports as an ES module: the root and ./php, a serialize round trip, a payload built and checked', () => {
    const out = run(
      'esm.mjs',
      `import * as lqb from 'laravel-queue-bridge';
import { serialize, unserialize, toJS, PhpArray } from 'laravel-queue-bridge/php';
import { luaSource } from 'laravel-queue-bridge/redis';
import { REFLECT_PHP } from 'laravel-queue-bridge/shapes';
import { freePort } from 'laravel-queue-bridge/testing';
import { existsSync } from 'node:fs';
const input = ${JSON.stringify(serialized)};
const value = unserialize(input);
const built = lqb.buildPayload(lqb.buildJob({ className: 'App\\\\Jobs\\\\Hello', properties: { n: 1 } }));
console.log(JSON.stringify({
  roundTrip: Buffer.from(serialize(value)).toString('utf8') === input,
  js: toJS(value).name,
  sameClass: lqb.PhpArray === PhpArray,
  issues: lqb.validatePayload(built.envelope, '8'),
  command: lqb.decodePayload(built.raw).envelope.displayName,
  lua: luaSource('lqbReserve').startsWith('-- reserve'),
  reflect: existsSync(REFLECT_PHP),
  testing: typeof freePort,
  helpersAtRoot: 'freePort' in lqb || 'startRedisServer' in lqb,
  internalsAtRoot: ['luaSource', 'registerSteps', 'databaseConfig', 'openDatabase', 'xxh128', 'plainJson', 'REFLECT_PHP'].filter((name) => name in lqb),
}));
`,
    );
    expect(out).toEqual({
      roundTrip: true,
      js: 'Ada',
      sameClass: true,
      issues: [],
      command: 'App\\Jobs\\Hello',
      lua: true,
      reflect: true,
      testing: 'function',
      helpersAtRoot: false,
      internalsAtRoot: [],
    });
  });

  it('serves the dashboard from the installed package: its page, and Preact with htm from the htm dependency', () => {
    const out = run(
      'ui.mjs',
      `import { createServer } from 'node:http';
import { createDashboard } from 'laravel-queue-bridge/ui';
const dashboard = createDashboard({ settings: { prefix: 'lqb-pack-ui-none:', failedDb: 'failed.sqlite' }, queues: ['none'] });
const server = createServer(dashboard.handler);
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = 'http://127.0.0.1:' + server.address().port + '/';
const got = async (path) => { const r = await fetch(base + path); return [r.status, (await r.text()).length > 100]; };
const result = { page: await got(''), app: await got('assets/app.js'), vendor: await got('assets/vendor/preact-htm.js'), css: await got('assets/style.css') };
server.close();
await dashboard.close();
console.log(JSON.stringify(result));
`,
    );
    expect(out).toEqual({ page: [200, true], app: [200, true], vendor: [200, true], css: [200, true] });
  });

  it('requires as CommonJS: the root, ./php and every subpath; the SQLite failed-jobs store works and a missing driver is named', async () => {
    const out = run(
      'cjs.cjs',
      `const lqb = require('laravel-queue-bridge');
const php = require('laravel-queue-bridge/php');
const { luaSource } = require('laravel-queue-bridge/redis');
const worker = require('laravel-queue-bridge/worker');
const shapes = require('laravel-queue-bridge/shapes');
const laravel = require('laravel-queue-bridge/laravel');
const { existsSync } = require('node:fs');
const { join } = require('node:path');
(async () => {
  const input = ${JSON.stringify(serialized)};
  const value = php.unserialize(input);
  const built = lqb.buildPayload(lqb.buildJob({ className: 'App\\\\Jobs\\\\Hello', properties: { n: 1 } }));
  const store = worker.DatabaseUuidFailedJobProvider.fromUrl('sqlite://' + join(__dirname, 'failed.sqlite'));
  const uuid = await store.log('redis', 'default', built.raw, 'Exception: boom');
  const failed = (await store.all()).map((job) => job.uuid);
  await store.close();
  let missing;
  try {
    await worker.DatabaseUuidFailedJobProvider.fromUrl('mysql://user@127.0.0.1:1/db').all();
  } catch (error) {
    missing = { name: error.name, packageName: error.packageName, message: error.message };
  }
  console.log(JSON.stringify({
    roundTrip: Buffer.from(php.serialize(value)).toString('utf8') === input,
    js: php.toJS(value).name,
    sameClass: lqb.PhpObject === php.PhpObject && laravel.buildJob === lqb.buildJob,
    issues: laravel.validatePayload(built.envelope, '8'),
    lua: luaSource('lqbReserve').startsWith('-- reserve'),
    reflect: existsSync(shapes.REFLECT_PHP),
    schema: typeof shapes.shapesSchema().properties,
    failed: failed.length === 1 && failed[0] === uuid,
    missing,
  }));
})().catch((error) => { console.error(error); process.exit(1); });
`,
    );
    expect(out).toMatchObject({
      roundTrip: true,
      js: 'Ada',
      sameClass: true,
      issues: [],
      lua: true,
      reflect: true,
      schema: 'object',
      failed: true,
    });
    expect((out as { missing: { name: string; packageName: string; message: string } }).missing).toMatchObject({
      name: 'MissingDriverError',
      packageName: 'mysql2',
    });
    expect((out as { missing: { message: string } }).missing.message).toContain('npm install mysql2');
  });

  it('./laravel loads neither ioredis nor ajv until a schema is used (CommonJS and ES module)', () => {
    const loaded = `const loaded = (name) => Object.keys(require.cache).some((path) => path.includes('/node_modules/' + name + '/'));`;
    const cjs = run(
      'light.cjs',
      `${loaded}
const laravel = require('laravel-queue-bridge/laravel');
const before = { ioredis: loaded('ioredis'), ajv: loaded('ajv') };
laravel.decodePayload(laravel.buildPayload(laravel.buildJob({ className: 'App\\\\Jobs\\\\X' })).raw);
const decoded = { ioredis: loaded('ioredis'), ajv: loaded('ajv') };
laravel.validatePayload({}, '8');
const validated = { ajv: loaded('ajv') };
require('laravel-queue-bridge/redis');
console.log(JSON.stringify({ before, decoded, validated, redis: loaded('ioredis') }));
`,
    );
    expect(cjs).toEqual({
      before: { ioredis: false, ajv: false },
      decoded: { ioredis: false, ajv: false },
      validated: { ajv: true },
      redis: true,
    });
    // The ES build carries ioredis in its bundle: what it loaded is read from a loader hook's
    // list of files, cut where the script marks it, and from the modules each file holds.
    const traced = moduleTrace(join(scratch, 'light-trace.txt'));
    const esm = run(
      'light.mjs',
      `import { createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
const require = createRequire(import.meta.url);
${loaded}
const mark = (name) => appendFileSync(process.env.LQB_MODULE_TRACE, 'mark:' + name + '\\n');
mark('start');
const laravel = await import('laravel-queue-bridge/laravel');
mark('before');
const before = { ajv: loaded('ajv') };
laravel.validatePayload({}, '8');
const validated = { ajv: loaded('ajv') };
await import('laravel-queue-bridge/redis');
mark('redis');
console.log(JSON.stringify({ before, validated }));
`,
      traced,
    );
    const phases = traced
      .lines()
      .reduce<string[][]>((cut, line) => (line.startsWith('mark:') ? [...cut, []] : (cut.at(-1)?.push(line), cut)), []);
    const ioredisBy = (phase: number) => modulesLoaded(phases.slice(0, phase).flat(), scratch).includes('ioredis');
    expect(esm).toEqual({ before: { ajv: false }, validated: { ajv: true } });
    expect({ before: ioredisBy(1), redis: ioredisBy(2) }, 'ioredis loaded by ./laravel, then by ./redis (ES module)').toEqual({
      before: false,
      redis: true,
    });
  });

  it('types resolve for a TypeScript consumer, CommonJS (.cts) and ES module (.mts)', () => {
    writeFileSync(
      join(scratch, 'typed.cts'),
      `import lqb = require('laravel-queue-bridge');
import php = require('laravel-queue-bridge/php');
import laravel = require('laravel-queue-bridge/laravel');
import { freePort } from 'laravel-queue-bridge/testing';
const bytes: Uint8Array = php.serialize(php.unserialize('i:1;'));
const raw: string = laravel.buildPayload(lqb.buildJob({ className: 'App\\Jobs\\X' })).raw;
export { bytes, raw, freePort };
`,
    );
    writeFileSync(
      join(scratch, 'typed.mts'),
      `import { defineHandlers, type HandlerMap } from 'laravel-queue-bridge';
import { toJS } from 'laravel-queue-bridge/php';
import { Worker, MissingDriverError } from 'laravel-queue-bridge/worker';
import { RedisQueue } from 'laravel-queue-bridge/redis';
import { readShapes } from 'laravel-queue-bridge/shapes';
const handlers: HandlerMap = defineHandlers({});
export { handlers, toJS, Worker, MissingDriverError, RedisQueue, readShapes };
`,
    );
    // Every subpath from both sides, so none of their `types` conditions is left unread.
    writeFileSync(
      join(scratch, 'every.cts'),
      `${SUBPATH_IMPORTS.map(([name, path]) => `import ${name} = require('${path}');`).join('\n')}\nexport { ${SUBPATH_IMPORTS.map(([name]) => name).join(', ')} };\n`,
    );
    writeFileSync(
      join(scratch, 'every.mts'),
      `${SUBPATH_IMPORTS.map(([name, path]) => `import * as ${name} from '${path}';`).join('\n')}\nexport { ${SUBPATH_IMPORTS.map(([name]) => name).join(', ')} };\n`,
    );
    const result = tsc(['--module', 'nodenext', '--moduleResolution', 'nodenext', 'typed.cts', 'typed.mts', 'every.cts', 'every.mts']);
    expect(result.stdout + result.stderr, 'tsc (nodenext) did not resolve every entry’s types').toBe('');
    expect(result.status).toBe(0);
  });

  it('types resolve under moduleResolution node10 too (`tsc --init`’s CommonJS default), subpaths through typesVersions', () => {
    mkdirSync(join(scratch, 'node10'), { recursive: true });
    writeFileSync(
      join(scratch, 'node10/every.ts'),
      `${SUBPATH_IMPORTS.map(([name, path]) => `import * as ${name} from '${path}';`).join('\n')}\nexport { ${SUBPATH_IMPORTS.map(([name]) => name).join(', ')} };\n`,
    );
    const result = tsc(['--module', 'commonjs', '--moduleResolution', 'node10', '--ignoreDeprecations', '5.0', 'node10/every.ts']);
    expect(result.stdout + result.stderr, 'tsc (node10) did not resolve a subpath’s types').toBe('');
    expect(result.status).toBe(0);
  });

  it('npx lqb --version runs the installed CLI', () => {
    const out = execFileSync('npx', ['--no-install', 'lqb', '--version'], {
      cwd: scratch,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(out.trim()).toBe(`${manifest.name} ${manifest.version}`);
  });

  it('the installed CLI lists lqb demo, and `lqb demo` says exactly what it needs (the Laravel side is not shipped), exit 1', () => {
    const lqb = (args: string[]) => spawnSync('npx', ['--no-install', 'lqb', ...args], { cwd: scratch, encoding: 'utf8' });
    const overview = lqb(['--help']);
    expect(overview.stdout, 'the installed lqb --help: its list of commands').toMatch(/commands: work, dispatch, [^)]*\bdemo\b/);
    expect(overview.stdout, "the installed lqb --help: demo's line, marked as not runnable from this install").toMatch(
      /\n {2}lqb demo +Both directions, live.* \(not from this install: `lqb demo` says what it needs\)\n/,
    );
    expect(files, 'the tarball ships no php-fixture-gen/ (what would let the demo run)').not.toContainEqual(
      expect.stringMatching(/^php-fixture-gen\//),
    );
    const demo = lqb(['demo']);
    const said = demo.stderr.trim().split('\n');
    expect(said, 'lines lqb demo printed on stderr').toHaveLength(1);
    // The package.json names no repository: the line names none either, and makes none up.
    for (const needed of [
      "a clone of this package's repository",
      '`npm ci && npm run demo`',
      'php-fixture-gen/install-deps.sh',
      'php-redis',
      "Debian's Laravel 8.83 packages (php-cli php-redis ",
      'php-laravel-framework',
      'a Redis at --redis (or REDIS_URL), else 127.0.0.1:6379',
    ])
      expect(said[0], `lqb demo from the installed package names ${needed}`).toContain(needed);
    expect(said[0], 'lqb demo from the installed package names no repository address').not.toMatch(/https?:|github|git@/);
    expect(demo.stdout, 'lqb demo from the installed package: stdout').toBe('');
    expect(demo.status, 'lqb demo from the installed package: exit status').toBe(1);
  });
});

describe('an app database whose SQL driver is not installed', () => {
  it('refuses to start lqb work and an embedded worker, naming the package and the line that installs it', () => {
    // A stock Laravel 11/12 app keeps failed_jobs in SQLite: here, without better-sqlite3.
    const driver = join(scratch, 'node_modules/better-sqlite3');
    renameSync(driver, `${driver}.away`);
    try {
      const failedDb = join(scratch, 'missing-driver.sqlite');
      writeFileSync(join(scratch, 'one-handler.mjs'), "export default { 'App\\\\Jobs\\\\Hello': async () => undefined };\n");
      const env = { ...process.env, REDIS_PREFIX: `lqb-pack-nodriver-${process.pid}:` };
      const cli = spawnSync(
        'npx',
        ['--no-install', 'lqb', 'work', '--handlers=one-handler.mjs', `--failed-db=${failedDb}`, '--stop-when-empty'],
        {
          cwd: scratch,
          encoding: 'utf8',
          env,
          timeout: 60_000,
        },
      );
      expect([cli.status, cli.stderr.trim().split('\n')], 'lqb work without better-sqlite3: status and standard error').toEqual([
        1,
        [expect.stringMatching(/^lqb work: .*"better-sqlite3", which is not installed: run `npm install better-sqlite3`$/)],
      ]);
      const embedded = run(
        'missing-driver.cjs',
        `const { connect } = require('laravel-queue-bridge');
(async () => {
  const queue = await connect({ redis: 'redis://127.0.0.1:6379', prefix: '${env.REDIS_PREFIX}', failedDb: ${JSON.stringify(failedDb)}, logger: false });
  let refused;
  try { queue.worker({}, { stopWhenEmpty: true }); } catch (error) { refused = error.message; }
  await queue.close();
  console.log(JSON.stringify({ refused }));
})().catch((error) => { console.error(error); process.exit(1); });
`,
      );
      expect(embedded, 'what worker() said without better-sqlite3').toEqual({
        refused: expect.stringMatching(/"better-sqlite3", which is not installed: run `npm install better-sqlite3`$/),
      });
    } finally {
      renameSync(`${driver}.away`, driver);
    }
  });
});

/**
 * A service as a team writes one, from the installed package: connect() with a Laravel .env,
 * dispatch a job that Laravel 8.83's own worker then runs, consume a job Laravel pushed with
 * typed handlers, stop within a deadline, hear the events; once as an ES module, once as
 * CommonJS. And a Redis that is not there makes connect() reject within its timeout.
 */
describe('OpenTelemetry is optional', () => {
  const service = (tag: string) => `const { connect } = require('laravel-queue-bridge');
(async () => {
  const prefix = 'lqb-pack-otel-${tag}-' + process.pid + ':';
  const warnings = [];
  const logger = { debug() {}, info() {}, warn: (fields, message) => warnings.push(message), error() {} };
  const queue = await connect({ redis: 'redis://127.0.0.1:6379', prefix, logger, connectTimeout: 3000 });
  const pushed = await queue.dispatch('App\\\\Jobs\\\\Hello', { n: 1 });
  let ran = 0;
  const worker = queue.worker({ 'App\\\\Jobs\\\\Hello': async () => { ran++; } }, { stopWhenEmpty: true, sleep: 0, failer: false });
  worker.on('warning', (event) => warnings.push(event.reason));
  const stop = await worker.run();
  await queue.connection.clear();
  await queue.close();
  console.log(JSON.stringify({ pushed: typeof pushed.uuid, ran, stop: stop.reason, warnings: warnings.filter((w) => /OpenTelemetry/.test(w)) }));
})().catch((error) => { console.error(error); process.exit(1); });
`;

  it('without @opentelemetry/api installed, dispatch and the worker run and say nothing of it', () => {
    expect(
      existsSync(join(scratch, 'node_modules/@opentelemetry/api')),
      'the scratch project has @opentelemetry/api: an optional peer was installed',
    ).toBe(false);
    expect(run('otel-absent.cjs', service('absent'))).toEqual({ pushed: 'string', ran: 1, stop: 'empty', warnings: [] });
  });

  it('with a broken @opentelemetry/api, dispatch and the worker still run, and each says it runs without it', () => {
    const broken = join(scratch, 'node_modules/@opentelemetry/api');
    mkdirSync(broken, { recursive: true });
    writeFileSync(join(broken, 'package.json'), JSON.stringify({ name: '@opentelemetry/api', version: '1.9.0', main: 'index.js' }));
    writeFileSync(join(broken, 'index.js'), "throw new Error('this install is broken');\n");
    try {
      const out = run('otel-broken.cjs', service('broken')) as { warnings: string[] };
      expect(out, 'a broken @opentelemetry/api stopped a dispatch or a job').toMatchObject({ pushed: 'string', ran: 1, stop: 'empty' });
      expect(out.warnings, 'the warnings about the broken install').toEqual([
        'dispatching without OpenTelemetry: @opentelemetry/api did not load (this install is broken)',
        // The worker's warning event, then the same line through its logger.
        expect.stringMatching(/^running without OpenTelemetry: @opentelemetry\/api did not load \(.*this install is broken/),
        expect.stringMatching(/^warning running without OpenTelemetry: @opentelemetry\/api did not load \(.*this install is broken/),
      ]);
    } finally {
      rmSync(join(scratch, 'node_modules/@opentelemetry'), { recursive: true, force: true });
    }
  });
});

describe('an installed service beside real Laravel', () => {
  const RECORD_JOB = JSON.stringify('App\\Jobs\\Bridge\\RecordJob');
  const php = (script: string, args: string[], env: NodeJS.ProcessEnv) =>
    spawnSync('php', [join(root, 'php-fixture-gen', script), ...args], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });

  // CommonJS, and an ES module with the banner esbuild's users add so bundled CommonJS can require Node's modules.
  const USUAL_ESM_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";
  for (const [format, bundleFile, banner] of [
    ['cjs', 'service.cjs', undefined],
    ['esm', 'service.mjs', USUAL_ESM_BANNER],
  ] as const) {
    it(`bundled by esbuild (${format}${banner ? ', the usual createRequire banner' : ''}) into one file run where only the SQL driver is installed: dispatch to Laravel’s worker, consume what Laravel pushed (no file read from disk)`, async () => {
      const app = `packbundle${randomBytes(3).toString('hex')}`;
      const prefix = `${app}_database_`;
      const [toPhp, toNode] = ['bundle-to-php', 'bundle-to-node'];
      // Beside the scratch project, not in it: nothing the bundle needs may come from a node_modules.
      const deploy = join(scratch, '..', `deploy-${format}`);
      mkdirSync(deploy, { recursive: true });
      // The app keeps failed_jobs in SQLite: its driver is installed where the bundle runs, as
      // docs/library.md says (the worker refuses to start without it), and nothing else is.
      for (const name of ['better-sqlite3', 'bindings', 'file-uri-to-path']) {
        mkdirSync(join(deploy, 'node_modules'), { recursive: true });
        if (!existsSync(join(deploy, 'node_modules', name)))
          symlinkSync(join(scratch, 'node_modules', name), join(deploy, 'node_modules', name));
      }
      writeFileSync(
        join(deploy, '.env'),
        [
          `APP_NAME=${app}`,
          'REDIS_HOST=127.0.0.1',
          'REDIS_PORT=6379',
          `REDIS_QUEUE=${toPhp}`,
          'DB_CONNECTION=sqlite',
          `DB_DATABASE=${join(deploy, 'app.sqlite')}`,
          '',
        ].join('\n'),
      );
      writeFileSync(
        join(scratch, 'bundled-service.mjs'),
        `import { connect, defineHandlers } from 'laravel-queue-bridge';
const main = async () => {
  const queue = await connect({ env: '.env', connectTimeout: 3000 });
  const dispatched = await queue.dispatch(${RECORD_JOB}, { n: 9, label: 'from-bundle', ratio: 0.25, items: [2], flag: false });
  const seen = [];
  const worker = queue.worker(defineHandlers({ [${RECORD_JOB}]: async (job) => { seen.push([job.command.n, job.command.label]); } }), { queues: ['${toNode}'], stopWhenEmpty: true, sleep: 0 });
  const stopped = await worker.run();
  await queue.close();
  console.log(JSON.stringify({ dispatched, seen, stop: stopped.reason }));
};
main().catch((error) => { console.error(error); process.exit(1); });
`,
      );
      const { build } = await import('esbuild');
      // The SQL drivers (native, or loaded by name) and OpenTelemetry are optional peers: left out, as a user leaves them out.
      const bundled = await build({
        entryPoints: [join(scratch, 'bundled-service.mjs')],
        bundle: true,
        platform: 'node',
        format,
        target: 'node20',
        outfile: join(deploy, bundleFile),
        external: ['better-sqlite3', 'mysql2', 'pg', '@opentelemetry/api'],
        ...(banner ? { banner: { js: banner } } : {}),
        logLevel: 'silent',
      });
      expect(bundled.errors, 'esbuild errors').toEqual([]);
      const laravelEnv = {
        REDIS_PREFIX: prefix,
        LQB_FAILED_DB: join(deploy, 'app.sqlite'),
        LQB_RECORD_FILE: join(deploy, `php-runs-${app}.jsonl`),
      };
      try {
        const pushed = php('laravel-dispatch.php', ['record', JSON.stringify({ n: 43, label: 'php-to-bundle', queue: toNode })], {
          ...laravelEnv,
          QUEUE_NAME: toNode,
        });
        expect(pushed.status, pushed.stderr).toBe(0);
        const ran = spawnSync(process.execPath, [bundleFile], { cwd: deploy, encoding: 'utf8', timeout: 60_000 });
        // The service gives no logger: its worker says its start and its stop there, and nothing per job.
        expect(
          ran.stderr
            .split('\n')
            .filter(Boolean)
            .map((line) => line.replace(/^(laravel-queue-bridge: worker starting).*/, '$1')),
          'what the bundled service printed on stderr',
        ).toEqual([
          // Dispatched by class name, no app at hand to read its shapes from: said once.
          expect.stringMatching(/^laravel-queue-bridge: App\\Jobs\\Bridge\\RecordJob was written without its class shapes: /),
          'laravel-queue-bridge: worker starting',
          // The deployed .env has no vendor/ beside it: the app's version is not known, and Laravel 8.83's payload shows none.
          expect.stringMatching(
            /^laravel-queue-bridge: warning without class shapes \(--shapes\), the unique lock of a ShouldBeUnique job/,
          ),
          'laravel-queue-bridge: stopping empty',
        ]);
        expect(ran.status).toBe(0);
        const out = JSON.parse(ran.stdout) as { dispatched: { uuid: string; queue: string }; seen: unknown[]; stop: string };
        expect(out.seen, 'what the bundled handler got of the job Laravel pushed').toEqual([[43, 'php-to-bundle']]);
        expect(out.stop).toBe('empty');
        expect(out.dispatched.queue).toBe(toPhp);
        const worker = php('laravel-worker.php', [`--queue=${toPhp}`, '--stop-when-empty', '--sleep=0'], {
          ...laravelEnv,
          QUEUE_NAME: toPhp,
        });
        expect(worker.status, worker.stderr).toBe(0);
        const runs = readFileSync(laravelEnv.LQB_RECORD_FILE, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { uuid: string; props: Record<string, unknown> });
        expect(
          runs.map((r) => [r.uuid, r.props.n, r.props.label]),
          'what Laravel’s worker ran of the bundle’s dispatch',
        ).toEqual([[out.dispatched.uuid, 9, 'from-bundle']]);
      } finally {
        const redis = new Redis();
        await redis
          .keys(`${prefix}*`)
          .then((keys) => (keys.length ? redis.del(...keys) : 0))
          .finally(() => redis.disconnect());
      }
    }, 90_000);
  }

  for (const [kind, file, head] of [
    ['an ES module', 'service.mjs', "import { connect, defineHandlers } from 'laravel-queue-bridge';\nconst main = async () => {"],
    ['CommonJS', 'service.cjs', "const { connect, defineHandlers } = require('laravel-queue-bridge');\nconst main = async () => {"],
  ] as const) {
    it(`${kind}: connect({ env }), dispatch to Laravel’s worker, consume what Laravel pushed, stop within a deadline`, () => {
      const app = `packapp${randomBytes(3).toString('hex')}`;
      const prefix = `${app}_database_`;
      const [toPhp, toNode] = ['to-php', 'to-node'];
      writeFileSync(
        join(scratch, '.env'),
        [
          `APP_NAME=${app}`,
          'REDIS_HOST=127.0.0.1',
          'REDIS_PORT=6379',
          `REDIS_QUEUE=${toPhp}`,
          'DB_CONNECTION=sqlite',
          `DB_DATABASE=${join(scratch, 'app.sqlite')}`,
          '',
        ].join('\n'),
      );
      const laravelEnv = {
        REDIS_PREFIX: prefix,
        LQB_FAILED_DB: join(scratch, 'app.sqlite'),
        LQB_RECORD_FILE: join(scratch, `php-runs-${app}.jsonl`),
      };
      try {
        const pushed = php('laravel-dispatch.php', ['record', JSON.stringify({ n: 41, label: 'from-php', queue: toNode })], {
          ...laravelEnv,
          QUEUE_NAME: toNode,
        });
        expect(pushed.status, pushed.stderr).toBe(0);
        const out = run(
          file,
          `${head}
  const queue = await connect({ env: '.env', connectTimeout: 3000 });
  const dispatched = await queue.dispatch(${RECORD_JOB}, { n: 7, label: 'from-node', ratio: 0.5, items: [1], flag: true });
  const seen = [];
  const events = [];
  const worker = queue.worker(defineHandlers({ [${RECORD_JOB}]: async (job) => { seen.push([job.command.n, job.command.label]); } }), { queues: ['${toNode}'], sleep: 0.05 });
  for (const name of ['processing', 'processed']) worker.on(name, (event) => events.push(name));
  const running = worker.run();
  const deadline = Date.now() + 20000;
  while (seen.length === 0) {
    if (Date.now() > deadline) throw new Error('the job Laravel pushed was not handled within 20 s: ' + JSON.stringify(events));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const before = Date.now();
  const stopped = await worker.stop({ timeout: 1000 });
  await running;
  const stopMs = Date.now() - before;
  await queue.close();
  let down;
  const at = Date.now();
  try {
    await connect({ redis: 'redis://127.0.0.1:1', connectTimeout: 500 });
  } catch (error) {
    down = { message: error.message, ms: Date.now() - at };
  }
  console.log(JSON.stringify({ dispatched, seen, events, stopped, stopMs, down }));
};
main().catch((error) => { console.error(error); process.exit(1); });
`,
        ) as {
          dispatched: { uuid: string; queue: string };
          seen: unknown[];
          events: string[];
          stopped: { reason: string };
          stopMs: number;
          down: { message: string; ms: number };
        };
        expect(out.dispatched).toMatchObject({ uuid: expect.any(String), queue: toPhp });
        expect(out.seen, 'what the Node handler got of the job Laravel pushed').toEqual([[41, 'from-php']]);
        expect(out.events).toEqual(['processing', 'processed']);
        expect(out.stopped.reason).toBe('stopped');
        expect(out.stopMs, 'ms stop() took, with a 1000 ms deadline').toBeLessThan(1500);
        expect(out.down.message).toContain('127.0.0.1:1');
        expect(out.down.ms, 'ms connect() took to reject, with a 500 ms timeout').toBeLessThan(2000);

        const worker = php('laravel-worker.php', [`--queue=${toPhp}`, '--stop-when-empty', '--sleep=0'], {
          ...laravelEnv,
          QUEUE_NAME: toPhp,
        });
        expect(worker.status, worker.stderr).toBe(0);
        const runs = readFileSync(laravelEnv.LQB_RECORD_FILE, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { uuid: string; props: Record<string, unknown> });
        expect(runs.map((r) => [r.uuid, r.props.n, r.props.label, (r.props.types as Record<string, string>).ratio])).toEqual([
          [out.dispatched.uuid, 7, 'from-node', 'float'],
        ]);
      } finally {
        const redis = new Redis();
        void redis
          .keys(`${prefix}*`)
          .then((keys) => (keys.length ? redis.del(...keys) : 0))
          .finally(() => redis.disconnect());
      }
    }, 90_000);
  }
  quickStartDefaults(() => scratch, php);
});
