/**
 * Whether a Laravel app has Horizon, read from its files as Composer left them: `lqb work
 * --env` and `lqb dispatch --env` then write Horizon's records without being told, as the app's
 * own workers and producers do once Horizon is installed.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** Horizon's version as Composer installed it in the app (`v5.22.1`), or undefined when it is not installed. */
export function installedHorizon(appDir: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(resolve(appDir, 'vendor/composer/installed.json'), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as { packages?: unknown[] } | unknown[];
    // Composer 2 wraps the list in {packages}; Composer 1 wrote the list itself.
    const packages = (Array.isArray(parsed) ? parsed : (parsed.packages ?? [])) as { name?: string; version?: string }[];
    return packages.find((p) => p?.name === 'laravel/horizon')?.version;
  } catch {
    return undefined;
  }
}

/**
 * Whether the records this package writes are the ones that Horizon version keeps: the 5.x line
 * (read from 5.22.1, unchanged to 5.29), whose layout src/horizon/ follows. Other majors are refused rather than
 * written wrongly.
 */
export function supportsHorizon(version: string): boolean {
  return /^v?5\./.test(version);
}
