/**
 * The app's class shapes, read without being asked where the app is at hand: a folder with
 * vendor/autoload.php and app/ (the one `--env` or `connect({ env })` names) and PHP on PATH.
 * Without them a dispatch writes every property public, and PHP's worker then finds the
 * class's protected and private properties uninitialized. PHP's reflection reads them once; a
 * cache in the system's temporary folder keeps them while no file under app/ and no installed
 * package changes (their modification times, checked at each read), so an unchanged app costs
 * a walk of app/ and a changed class is read again.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseShapes } from './read.js';
import { reflectShapes } from './reflect.js';
import type { ShapesFile } from './shape.js';

/** What was found: the shapes (from the cache or read now), or why there are none. */
export type AppShapes = { shapes: ShapesFile; from: 'cache' | 'php'; classes: number } | { shapes?: undefined; why: string };

/** Whether the folder is a Laravel app whose classes PHP can read: its autoloader and app/. */
export function isAppAtHand(appDir: string): boolean {
  return existsSync(join(appDir, 'vendor/autoload.php')) && existsSync(join(appDir, 'app'));
}

export async function appShapes(appDir: string, options: { php?: string; cacheDir?: string } = {}): Promise<AppShapes> {
  if (!isAppAtHand(appDir)) return { why: `${appDir} has no vendor/autoload.php and app/ to read the classes from` };
  const stamp = stampOf(appDir);
  const cacheFile = join(options.cacheDir ?? tmpdir(), `lqb-shapes-${createHash('sha256').update(appDir).digest('hex').slice(0, 16)}.json`);
  const cached = readCache(cacheFile, stamp);
  if (cached) return { shapes: cached, from: 'cache', classes: Object.keys(cached.classes).length };
  try {
    const shapes = await reflectShapes({ app: appDir, ...(options.php ? { php: options.php } : {}) });
    writeCache(cacheFile, stamp, shapes);
    return { shapes, from: 'php', classes: Object.keys(shapes.classes).length };
  } catch (error) {
    return { why: (error as Error).message };
  }
}

/** The modification times of every file under app/ and of the installed packages' list, as one string. */
function stampOf(appDir: string): string {
  const times: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else times.push(`${path}@${statSync(path).mtimeMs}`);
    }
  };
  walk(join(appDir, 'app'));
  for (const file of ['vendor/composer/installed.json', 'composer.lock']) {
    const path = join(appDir, file);
    if (existsSync(path)) times.push(`${path}@${statSync(path).mtimeMs}`);
  }
  return createHash('sha256').update(times.sort().join('\n')).digest('hex');
}

function readCache(file: string, stamp: string): ShapesFile | undefined {
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { stamp?: unknown; shapes?: unknown };
    return kept.stamp === stamp ? parseShapes(kept.shapes, file) : undefined;
  } catch {
    // No cache yet, or one that does not read: PHP reads the classes again.
    return undefined;
  }
}

function writeCache(file: string, stamp: string, shapes: ShapesFile): void {
  try {
    writeFileSync(file, JSON.stringify({ stamp, shapes }));
  } catch {
    // A cache that cannot be written costs the next run a read by PHP, nothing more.
  }
}
