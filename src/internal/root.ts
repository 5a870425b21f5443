/**
 * The package's own files (`schemas/`, `package.json`) found from wherever this module runs:
 * `src/` (tests, tsx), `dist/` (the ES module build) or `dist/cjs/` (the CommonJS build).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const NAME = 'laravel-queue-bridge';
let root: string | undefined;

/** The directory holding the package's package.json. */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === NAME) return (root = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${NAME}: cannot find the package's own package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/** A file URL for a path relative to the package root (a trailing slash kept, for directories). */
export function packageUrl(path: string): URL {
  return new URL(path, pathToFileURL(packageRoot() + '/'));
}

let version: string | undefined;

/** The package's version, from its package.json (what telemetry names its instrumentation by). */
export function packageVersion(): string {
  return (version ??= String((JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: unknown }).version ?? '0.0.0'));
}
