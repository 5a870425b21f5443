/**
 * What every `lqb` command file exports, and the one error that means "you called it wrong".
 */
import type { ParseArgsConfig } from 'node:util';

export interface CommandContext {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
  /** Prints one line (or block) to standard output. */
  out: (text: string) => void;
}

export interface Command {
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(context: CommandContext): Promise<void | number>;
}

/** Bad flags or arguments: exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A numeric flag's value, at least `min`; a usage error naming the flag otherwise. */
export function numberFlag(value: unknown, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number of at least ${min}, not ${JSON.stringify(value)}`);
  return n;
}

/**
 * A flag that counts something (tries, jobs, megabytes, workers) or that Laravel takes as whole
 * seconds (--timeout, an alarm): a fraction is a usage error, not a payload with maxTries 2.5.
 */
export function countFlag(value: unknown, name: string, fallback: number, min: number): number {
  const n = numberFlag(value, name, fallback, min);
  if (!Number.isInteger(n)) throw new UsageError(`--${name} must be a whole number of at least ${min}, not ${JSON.stringify(value)}`);
  return n;
}

/** The one CONNECTION name artisan's queue commands take, if given (`work`, `clear`). */
export function connectionName(positionals: string[], command: string): string | undefined {
  if (positionals.length > 1) throw new UsageError(`${command} takes at most one CONNECTION name, not ${positionals.length} arguments`);
  return positionals[0];
}

/** `--backoff=S[,S…]`: seconds per attempt, the last repeating; undefined when not given. */
export function backoffFlag(value: unknown): number[] | undefined {
  if (typeof value !== 'string') return undefined;
  return value.split(',').map((s, i) => numberFlag(s, `backoff[${i}]`, 0, 0));
}
