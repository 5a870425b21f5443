/**
 * ajv, required when a schema is first used rather than at import, so that importing the
 * envelope code (`laravel-queue-bridge/laravel`) does not pay for it. ajv is CommonJS; its 2020
 * entry exports the class by name, and `require` reaches it from both builds.
 */
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { requireBeside } from './module-url.js';

let loaded: typeof Ajv2020 | undefined;

/** ajv's draft 2020-12 class. */
export function loadAjv2020(): typeof Ajv2020 {
  return (loaded ??= (requireBeside(import.meta.url)('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020);
}
