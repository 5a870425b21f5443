// The package's build: the ES module build and declarations by tsc into dist/, then that build
// bundled by esbuild (see step 2), a CommonJS build of the library (not the CLI, which stays an ES
// module) by esbuild into dist/cjs/, one file per source file, and reflect.php (which PHP runs, so
// it stays a file) beside both. The Lua steps, the schemas and the version are built into modules
// first (scripts/embed.mjs), so that a bundle of a service carries them. No source maps: they
// would point at src/, which is not shipped.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { embed } from './embed.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');
const cjs = join(dist, 'cjs');

/** Files under dir (recursively), as paths relative to dir. */
function walk(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path, base) : [relative(base, path)];
  });
}

const isCli = (path) => path.split(/[\\/]/)[0] === 'cli';
/**
 * What the code reads beside itself at run time (the PHP that `lqb shapes` and `lqb fixtures` run,
 * the dashboard's page), by the module that reads it: paths from src/, and from dist/ alike.
 */
const readBeside = {
  'ui/dashboard.js': ['ui/assets'],
  'shapes/reflect.js': ['shapes/reflect.php', 'shapes/methods.php'],
  'fixtures/appFixtures.js': ['fixtures/fixtures.php'],
};

rmSync(dist, { recursive: true, force: true });
embed();

// 1. ES modules and declarations.
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});

// 2. The ES build bundled: each public module (package.json's exports) and each command of the
//    CLI an entry, what they share in dist/chunks/. Node 20 loads an ES module graph file by file,
//    and that load was most of a cold `lqb`: `lqb work --once` loaded about 170 files, and takes
//    0.7 times as long bundled (docs/speed.md). One build for the library and the CLI keeps one
//    copy of each class, so a handlers module's PhpObject is the worker's PhpObject.
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const publicModules = Object.values(manifest.exports)
  .filter((entry) => entry.import)
  .map((entry) => join(root, entry.import.default));
// ioredis is in the bundle (a third of a cold `lqb work` was its CommonJS files loading one by
// one); every other package, the app's choices (SQL drivers, OpenTelemetry, tsx) among them, is
// loaded from node_modules where it is asked for.
const leftToNodeModules = ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies']
  .flatMap((field) => Object.keys(manifest[field] ?? {}))
  .filter((name) => name !== 'ioredis')
  .flatMap((name) => [name, `${name}/*`]);
// The CLI's entries: its main and each command module the registry loads when asked for it.
const registry = readFileSync(join(dist, 'cli/registry.js'), 'utf8');
const cliModules = ['main.js', ...new Set([...registry.matchAll(/import\('\.\/([\w-]+\.js)'\)/g)].map((found) => found[1]))].map((name) =>
  join(dist, 'cli', name),
);
const bundled = await build({
  entryPoints: [...publicModules, ...cliModules],
  outbase: dist,
  outdir: dist,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: leftToNodeModules,
  sourcemap: false,
  metafile: true,
  logLevel: 'warning',
  // ioredis, bundled, is CommonJS: its require() of node's modules needs a require in an ES module.
  // A service that bundles this build as CommonJS has no import.meta, and a __filename instead.
  banner: {
    js: "import { createRequire as __lqbCreateRequire } from 'node:module';\nconst require = __lqbCreateRequire(import.meta.url ?? __filename);",
  },
});
// What the bundle holds replaces tsc's modules; their declarations stay.
const outputs = Object.entries(bundled.metafile.outputs).map(([path, output]) => ({ path: join(root, path), output }));
const written = new Set(outputs.map(({ path }) => path));
for (const path of walk(dist)) {
  if (path.endsWith('.js') && !written.has(join(dist, path))) rmSync(join(dist, path));
}
chmodSync(join(dist, 'cli/main.js'), 0o755);
// A module that reads a file beside itself finds it beside whichever bundle file holds its code.
for (const { path, output } of outputs) {
  for (const input of Object.keys(output.inputs)) {
    for (const file of readBeside[relative(dist, join(root, input))] ?? []) {
      cpSync(join(src, file), join(dirname(path), basename(file)), { recursive: true });
    }
  }
}

// 3. CommonJS, file for file. `import.meta.url` becomes the file's own URL, made from __filename;
//    dynamic import() stays import() so handler modules load as ES modules.
const sources = walk(src);
await build({
  entryPoints: sources.filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts') && !isCli(path)).map((path) => join(src, path)),
  outbase: src,
  outdir: cjs,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  bundle: false,
  sourcemap: false,
  logLevel: 'warning',
  define: { 'import.meta.url': '__lqbModuleUrl' },
  banner: { js: '"use strict";\nconst __lqbModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
});
writeFileSync(join(cjs, 'package.json'), JSON.stringify({ type: 'commonjs' }, null, 2) + '\n');

// The same declarations serve the CommonJS build: under dist/cjs/package.json they read as CommonJS.
for (const path of walk(dist)) {
  if (path.startsWith('cjs') || isCli(path) || !path.endsWith('.d.ts')) continue;
  mkdirSync(dirname(join(cjs, path)), { recursive: true });
  copyFileSync(join(dist, path), join(cjs, path));
}

// 4. Run-time files beside the modules that read them, in both builds.
for (const path of Object.values(readBeside).flat()) {
  for (const out of [dist, cjs]) {
    mkdirSync(dirname(join(out, path)), { recursive: true });
    cpSync(join(src, path), join(out, path), { recursive: true });
  }
}
