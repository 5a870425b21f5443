/**
 * A module's own URL, for what it finds beside itself (reflect.php) or requires by name (ajv, the
 * SQL drivers). `import.meta.url` everywhere but in a service bundled as CommonJS, where esbuild
 * leaves `import.meta` empty: there it is the bundle's own file, and names resolve from beside it.
 */
import * as nodeModule from 'node:module';
import { pathToFileURL } from 'node:url';

export function moduleUrl(importMetaUrl: string | undefined): string {
  return importMetaUrl ?? pathToFileURL(__filename).href;
}

/**
 * `require` as a module sees it from its own file. Reached through the module namespace, never a
 * top-level `createRequire` or `require` binding of ours: the banner an ES module bundle usually
 * carries (`import { createRequire } from 'module'; const require = createRequire(import.meta.url);`)
 * declares both names at the bundle's top, where a second declaration is a SyntaxError.
 */
export function requireBeside(importMetaUrl: string | undefined): NodeJS.Require {
  return nodeModule.createRequire(moduleUrl(importMetaUrl));
}
