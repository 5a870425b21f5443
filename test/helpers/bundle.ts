/**
 * What a loaded file of the package holds. The ES build is bundled (scripts/build.mjs): one file
 * may carry many modules, which esbuild names each on a line of its own (`// dist/worker/Worker.js`,
 * `// node_modules/ioredis/built/Redis.js`). So "was the worker loaded" is read from those lines.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CARRIED = /^\/\/ (dist\/\S+\.js|node_modules\/\S+)$/gm;

/** A node_modules path as its package's name (`ioredis`, `@scope/name`); else the path as it is. */
function named(path: string): string {
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
  return dependency ? dependency[1]! : path;
}

/**
 * The modules the files at these URLs hold: each file (as its path from `root`, a dependency's
 * as the package's name) and, for a file of the package's dist/, each module bundled into it.
 * Without repeats, in the order first met.
 */
export function modulesLoaded(urls: readonly string[], root: string): string[] {
  const modules = new Set<string>();
  for (const url of urls) {
    const path = decodeURIComponent(fileURLToPath(url));
    const own = named(path.startsWith(root) ? path.slice(root.length).replace(/^\//, '') : path);
    modules.add(own);
    if (!/(^|\/)dist\/.*\.js$/.test(path) || /\/node_modules\/(?!laravel-queue-bridge\/)/.test(path)) continue;
    for (const [, carried] of readFileSync(path, 'utf8').matchAll(CARRIED)) modules.add(named(carried!));
  }
  return [...modules];
}

/**
 * A process's node flags and environment that make it list, a file URL a line, what it loads as
 * an ES module (test/helpers/module-trace.mjs), into `trace`; and that list read back.
 */
export function moduleTrace(trace: string): { nodeFlags: string[]; env: NodeJS.ProcessEnv; lines: () => string[] } {
  return {
    nodeFlags: ['--import', fileURLToPath(new URL('./module-trace.mjs', import.meta.url))],
    env: { ...process.env, LQB_MODULE_TRACE: trace },
    lines: () => readFileSync(trace, 'utf8').split('\n').filter(Boolean),
  };
}
