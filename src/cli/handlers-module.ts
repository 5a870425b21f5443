/**
 * `--handlers=FILE` as a module: JavaScript as Node imports it; TypeScript (.ts, .mts, .cts)
 * through tsx's own loader, registered before the import. tsx is looked for beside the handlers
 * file first (the project it belongs to), then beside lqb. Without it, one line says what to install.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadHandlers, type HandlerMap } from '../worker/index.js';
import { checkedHandlers, defaultExport, importHandlersModule } from '../worker/handlers.js';
import { UsageError } from './command.js';

const TYPESCRIPT = /\.[cm]?tsx?$/i;

/** The handlers module's default export, checked; a TypeScript file is loaded through tsx. */
export async function loadHandlersModule(file: string): Promise<HandlerMap> {
  // A name on the command line that is no file is a usage error, as for every other file flag.
  if (!existsSync(file.startsWith('file:') ? fileURLToPath(file) : file)) throw new UsageError(`--handlers=${file}: no such file`);
  if (!TYPESCRIPT.test(file.startsWith('file:') ? fileURLToPath(file) : file)) return loadHandlers(file);
  await registerTsx(file);
  // A .ts file Node takes as CommonJS (no "type": "module" beside it) comes back as
  // module.exports, its `export default` under .default, as TypeScript's interop writes it.
  return checkedHandlers(file, defaultExport(await importHandlersModule(file)));
}

let registered = false;

async function registerTsx(file: string): Promise<void> {
  if (registered) return;
  const found = tsxApi([file.startsWith('file:') ? fileURLToPath(file) : resolve(file), fileURLToPath(import.meta.url)]);
  if (found.esm === undefined) throw new Error(tsxMissing(file, found.version));
  // A .ts file outside a "type": "module" package is CommonJS to Node: tsx's require hook takes those.
  const apis = [found.esm, ...(found.cjs ? [found.cjs] : [])];
  const registers = await Promise.all(apis.map(async (url) => ((await import(url)) as { register?: () => unknown }).register));
  if (registers.some((register) => typeof register !== 'function')) throw new Error(tsxMissing(file, found.version));
  for (const register of registers) register!();
  registered = true;
}

/** The line that says what to install. */
export function tsxMissing(file: string, version: string | undefined): string {
  const why = version === undefined ? 'tsx is not installed' : `tsx ${version} has no tsx/esm/api`;
  return `${file} is TypeScript and ${why}: npm install --save-dev tsx@^4 (or compile the handlers to .js)`;
}

/**
 * tsx's ESM and CommonJS APIs (`tsx/esm/api`, `tsx/cjs/api`, tsx 4+), as the first of `from`
 * (files) that can resolve tsx sees them: their URLs, or only the version of a tsx without them,
 * or nothing.
 */
export function tsxApi(from: string[]): { esm?: string; cjs?: string; version?: string } {
  for (const base of from) {
    let manifestPath: string;
    try {
      manifestPath = createRequire(base).resolve('tsx/package.json');
    } catch {
      continue;
    }
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { version?: string; exports?: Record<string, unknown> };
    const url = (subpath: string) => {
      const entry = manifest.exports?.[subpath];
      const target = typeof entry === 'string' ? entry : importTarget(entry);
      return target === undefined ? {} : { [subpath.slice(2, 5)]: pathToFileURL(join(dirname(manifestPath), target)).href };
    };
    return { ...url('./esm/api'), ...url('./cjs/api'), version: manifest.version ?? 'unknown' };
  }
  return {};
}

/** An exports entry's `import` target: a string, or `{ default }` under it. */
function importTarget(entry: unknown): string | undefined {
  if (entry === null || typeof entry !== 'object') return undefined;
  const target = (entry as { import?: unknown }).import;
  if (typeof target === 'string') return target;
  if (target !== null && typeof target === 'object' && typeof (target as { default?: unknown }).default === 'string')
    return (target as { default: string }).default;
  return undefined;
}
