// The package's build: the ES module build and declarations by tsc into dist/, a CommonJS build
// of the library (not the CLI, which stays an ES module) by esbuild into dist/cjs/, one file per
// source file, and reflect.php (which PHP runs, so it stays a file) beside both. The Lua steps, the
// schemas and the version are built into modules first (scripts/embed.mjs), so that a bundle of a
// service carries them. No source maps: they would point at src/, which is not shipped.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
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
/** What the code reads beside itself at run time: the PHP that `lqb shapes` runs, the dashboard's page (src/ui/assets). */
const isAsset = (path) => path.endsWith('.php') || /^ui[\\/]assets[\\/]/.test(path);

rmSync(dist, { recursive: true, force: true });
embed();

// 1. ES modules and declarations.
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
chmodSync(join(dist, 'cli/main.js'), 0o755);

// 2. CommonJS, file for file. `import.meta.url` becomes the file's own URL, made from __filename;
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

// 3. Run-time files beside the modules that read them, in both builds.
for (const path of sources.filter(isAsset)) {
  for (const out of [dist, cjs]) {
    mkdirSync(dirname(join(out, path)), { recursive: true });
    cpSync(join(src, path), join(out, path));
  }
}
