/**
 * A module's own URL, for what it finds beside itself (reflect.php) or requires by name (ajv, the
 * SQL drivers). `import.meta.url` everywhere but in a service bundled as CommonJS, where esbuild
 * leaves `import.meta` empty: there it is the bundle's own file, and names resolve from beside it.
 */
import { pathToFileURL } from 'node:url';

export function moduleUrl(importMetaUrl: string | undefined): string {
  return importMetaUrl ?? pathToFileURL(__filename).href;
}
