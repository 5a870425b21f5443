/**
 * `lqb work --handlers=FILE.ts`: a TypeScript handlers module loaded through tsx, running a real
 * job pushed by `lqb dispatch` on real Redis (and the same handlers compiled to CommonJS .js); and the
 * one line a project without tsx, or a module that cannot serve, is told.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { tsxApi, tsxMissing } from '../../src/cli/handlers-module.js';
import { root } from '../helpers/php.js';
import { lqb, scratchPerTest } from '../helpers/processes.js';

const current = scratchPerTest('cli-ts');

/** TypeScript that Node alone cannot run: an interface, annotations, `satisfies`, an enum. */
const handlersSource = (marker: string) => `
interface RecordCommand { n: number; label: string }
interface Job { command: RecordCommand; attempts: number }
enum Seen { Once = 1 }
const handlers = {
  'App\\\\Jobs\\\\Bridge\\\\RecordJob': async (job: Job): Promise<void> => {
    const n: number = job.command.n satisfies number;
    console.log(JSON.stringify({ ${JSON.stringify(marker)}: n, label: job.command.label, attempts: job.attempts, seen: Seen.Once }));
  },
};
export default handlers;
`;

describe('lqb work --handlers=FILE.ts', () => {
  it.each(['handlers.ts', 'handlers.mts', 'handlers.cts'])('runs a real job with %s, loaded through tsx', async (name) => {
    const file = join(current.s.dir, name);
    writeFileSync(file, handlersSource('ran'));
    const dispatched = await lqb(['dispatch', 'App\\Jobs\\Bridge\\RecordJob', '--props={"n":41,"label":"from ts"}'], current.s.env);
    expect(dispatched.status).toBe(0);
    const worked = await lqb(['work', `--handlers=${file}`, '--stop-when-empty', '--sleep=0', '--json'], current.s.env, {
      timeoutMs: 30_000,
    });
    expect(worked.stderr, 'lqb work said more than its start line on standard error').toMatch(/^lqb work: worker starting: [^\n]+\n$/);
    expect(worked.status).toBe(0);
    const lines = worked.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toContainEqual({ ran: 41, label: 'from ts', attempts: 1, seen: 1 });
    expect(lines.filter((line) => line.event === 'processed')).toHaveLength(1);
  });

  it('runs a real job with the handlers compiled by TypeScript to CommonJS .js (export default under exports.default)', async () => {
    const file = join(current.s.dir, 'handlers.js');
    writeFileSync(
      file,
      ts.transpileModule(handlersSource('compiled'), {
        compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
      }).outputText,
    );
    const dispatched = await lqb(['dispatch', 'App\\Jobs\\Bridge\\RecordJob', '--props={"n":43,"label":"from tsc"}'], current.s.env);
    expect(dispatched.status).toBe(0);
    const worked = await lqb(['work', `--handlers=${file}`, '--stop-when-empty', '--sleep=0', '--json'], current.s.env, {
      timeoutMs: 30_000,
    });
    expect(worked.stderr, 'lqb work said more than its start line on standard error').toMatch(/^lqb work: worker starting: [^\n]+\n$/);
    expect(worked.status).toBe(0);
    expect(
      worked.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toContainEqual({ compiled: 43, label: 'from tsc', attempts: 1, seen: 1 });
  });

  it('a handlers.ts in a project of type module, typed by defineHandlers imported from the package', async () => {
    // As in a user's project: the package installed in node_modules, "type": "module".
    mkdirSync(join(current.s.dir, 'node_modules'));
    symlinkSync(root, join(current.s.dir, 'node_modules', 'laravel-queue-bridge'), 'dir');
    writeFileSync(join(current.s.dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const file = join(current.s.dir, 'handlers.ts');
    writeFileSync(
      file,
      `import { defineHandlers, type HandlerJob } from 'laravel-queue-bridge';
interface Jobs { 'App\\\\Jobs\\\\Bridge\\\\RecordJob': { command: { n: number; label: string } } }
export default defineHandlers<Jobs>({
  'App\\\\Jobs\\\\Bridge\\\\RecordJob': async (job) => {
    const n: number = job.command.n;
    console.log(JSON.stringify({ typed: n + 1, label: job.command.label }));
  },
});
const unused: HandlerJob | undefined = undefined;
void unused;
`,
    );
    await lqb(['dispatch', 'App\\Jobs\\Bridge\\RecordJob', '--props={"n":1,"label":"typed"}'], current.s.env);
    const worked = await lqb(['work', `--handlers=${file}`, '--stop-when-empty', '--sleep=0', '--json'], current.s.env, {
      timeoutMs: 30_000,
    });
    expect(worked.stderr, 'lqb work said more than its start line on standard error').toMatch(/^lqb work: worker starting: [^\n]+\n$/);
    expect(
      worked.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toContainEqual({ typed: 2, label: 'typed' });
  });

  it('a TypeScript module without a default export map is refused with the reason, exit 1', async () => {
    const file = join(current.s.dir, 'empty.ts');
    writeFileSync(file, 'export const x: number = 1;\n');
    const worked = await lqb(['work', `--handlers=${file}`, '--stop-when-empty'], current.s.env);
    expect(worked.status).toBe(1);
    expect(worked.stderr).toMatch(/must export default an object mapping job classes to handler functions\n$/);
  });
});

describe('lqb work --handlers=FILE that cannot serve', () => {
  it.each([
    [
      'a number as default export',
      'export default 42;\n',
      /^lqb work: \S+bad\.mjs must export default an object mapping job classes to handler functions\n$/,
    ],
    [
      'a list of handlers rather than a map',
      'export default [async () => {}];\n',
      /^lqb work: \S+bad\.mjs must export default an object mapping job classes to handler functions\n$/,
    ],
    [
      'a map with a value that is no function',
      "export default { 'App\\\\Jobs\\\\A': async () => {}, 'App\\\\Jobs\\\\B': 42 };\n",
      /^lqb work: \S+bad\.mjs: the handler for App\\Jobs\\B is not a function \(or \{ handle, failed \}\) but a number\n$/,
    ],
    [
      'a handler object whose handle is no function',
      "export default { 'App\\\\Jobs\\\\A': { handle: 'run' } };\n",
      /^lqb work: \S+bad\.mjs: the handler for App\\Jobs\\A is not a function \(or \{ handle, failed \}\) but an object\n$/,
    ],
    [
      'a uniqueId given as a string rather than a function of the job',
      "const a = async () => {};\na.uniqueId = 'id';\nexport default { 'App\\\\Jobs\\\\A': a };\n",
      /^lqb work: \S+bad\.mjs: the handler for App\\Jobs\\A carries uniqueId, which must be a function of the job, not a string\n$/,
    ],
    [
      'a Map, whose entries are no properties',
      "export default new Map([['App\\\\Jobs\\\\A', async () => {}]]);\n",
      /^lqb work: \S+bad\.mjs must export default a plain object mapping job classes to handler functions, not a Map \(Object\.fromEntries\(map\) makes one\)\n$/,
    ],
    [
      'an empty map, which would fail every job for want of a handler',
      'export default {};\n',
      /^lqb work: \S+bad\.mjs exports default an object with no handlers: name at least one job class\n$/,
    ],
    ['a throw at import', 'throw new Error("no config found");\n', /^lqb work: \S+bad\.mjs could not be loaded: Error: no config found\n$/],
    ['a syntax error', 'export default {\n', /^lqb work: \S+bad\.mjs could not be loaded: SyntaxError: Unexpected end of input\n$/],
  ])('%s: one line naming the file and the reason, exit 1', async (_, source, line) => {
    const file = join(current.s.dir, 'bad.mjs');
    writeFileSync(file, source);
    const worked = await lqb(['work', `--handlers=${file}`, '--stop-when-empty', '--sleep=0'], current.s.env);
    expect(worked.stderr).toMatch(line);
    expect(worked.status).toBe(1);
  });

  it('a file that is not there: a usage error naming it, exit 2', async () => {
    const worked = await lqb(['work', `--handlers=${join(current.s.dir, 'nowhere.mjs')}`, '--stop-when-empty'], current.s.env);
    expect(worked.stderr).toMatch(/^lqb work: --handlers=\S+nowhere\.mjs: no such file \(lqb work --help for usage\)\n$/);
    expect(worked.status).toBe(2);
  });
});

describe('finding tsx', () => {
  it('beside the handlers file first, then beside lqb', () => {
    const found = tsxApi([join(tmpdir(), 'nowhere', 'handlers.ts'), new URL('../../src/cli/handlers-module.ts', import.meta.url).pathname]);
    expect(found.esm).toMatch(/^file:.*\/node_modules\/tsx\/dist\/esm\/api\/index\.mjs$/);
    expect(found.cjs).toMatch(/^file:.*\/node_modules\/tsx\/dist\/cjs\/api\/index\.mjs$/);
  });

  it('without tsx, or with one that has no tsx/esm/api, one line names what to install', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lqb-no-tsx-'));
    try {
      const handlers = join(dir, 'handlers.ts');
      expect(tsxApi([handlers])).toEqual({});
      expect(tsxMissing(handlers, undefined)).toBe(
        `${handlers} is TypeScript and tsx is not installed: npm install --save-dev tsx@^4 (or compile the handlers to .js)`,
      );
      mkdirSync(join(dir, 'node_modules', 'tsx'), { recursive: true });
      writeFileSync(
        join(dir, 'node_modules', 'tsx', 'package.json'),
        JSON.stringify({ name: 'tsx', version: '3.14.0', main: 'dist/index.js' }),
      );
      expect(tsxApi([handlers])).toEqual({ version: '3.14.0' });
      expect(tsxMissing(handlers, '3.14.0')).toMatch(/tsx 3\.14\.0 has no tsx\/esm\/api: npm install --save-dev tsx@\^4/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
