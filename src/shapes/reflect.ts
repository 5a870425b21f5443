/**
 * Runs `reflect.php` (beside this module; the build copies it into dist/shapes/, dist/cjs/shapes/ and beside the bundle file holding this module) with the PHP on PATH, and reads
 * the shapes it prints. PHP's reflection is the authority: nothing here guesses at a class.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseShapes } from './read.js';
import type { ShapesFile } from './shape.js';
import { moduleUrl } from '../internal/module-url.js';

export const REFLECT_PHP = fileURLToPath(new URL('./reflect.php', moduleUrl(import.meta.url)));

export interface ReflectOptions {
  /** A Laravel app's root: its vendor/autoload.php is loaded and the classes under app/ read. */
  app?: string;
  /** A PHP file that declares (or autoloads) the classes: every ShouldQueue class it declares counts. */
  bootstrap?: string;
  /** Only these classes (and what they reference). */
  classes?: string[];
  /** The PHP binary: `php` on PATH by default. */
  php?: string;
}

/** PHP could not read the app: a fatal error, a class that is not there, no PHP at all. */
export class ReflectError extends Error {
  override name = 'ReflectError';
}

/** The shapes of an app's queueable classes, as PHP reads them. */
export async function reflectShapes(options: ReflectOptions): Promise<ShapesFile> {
  if ((options.app === undefined) === (options.bootstrap === undefined)) throw new TypeError('give one of app or bootstrap');
  const args = [REFLECT_PHP, options.app !== undefined ? `--app=${options.app}` : `--bootstrap=${options.bootstrap}`];
  if (options.classes) args.push(`--class=${options.classes.join(',')}`);
  const php = options.php ?? 'php';
  const { status, stdout, stderr } = await runPhp(php, args, "lqb shapes runs PHP to read the app's classes");
  if (status !== 0) {
    const lines = stderr
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    throw new ReflectError(lines.at(-1) ?? `${php} exited with status ${status} and said nothing`);
  }
  return parseShapes(stdout, `the shapes ${php} printed`);
}

/** Runs a PHP script of ours; `why` says, when PHP is not on PATH, what the command needed it for. */
export function runPhp(
  php: string,
  args: string[],
  why: string,
  env?: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // display_errors off on the command line too: a fatal error is reported once, by reflect.php.
    const child = spawn(php, ['-d', 'display_errors=stderr', '-d', 'memory_limit=-1', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(env ? { env } : {}),
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'ENOENT' ? new ReflectError(`${php} is not on PATH: ${why} (install PHP 8 or put it on PATH)`) : error);
    });
    child.on('close', (status) =>
      resolve({ status, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    );
  });
}
