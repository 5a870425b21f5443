/**
 * The package's own facts, built into the modules (scripts/embed.mjs) rather than read from its
 * package.json at run time, so that they hold in a bundled service too.
 */
import { VERSION } from './version.generated.js';

/** The package's version, from its package.json (what telemetry names its instrumentation by). */
export function packageVersion(): string {
  return VERSION;
}
