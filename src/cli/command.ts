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
  /** True for a command that takes no arguments: one given is a usage error, as artisan's "Too many arguments". */
  noArguments?: true;
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
export function backoffFlag(value: unknown, name = 'backoff'): number[] | undefined {
  if (typeof value !== 'string') return undefined;
  return value.split(',').map((s, i) => numberFlag(s, `${name}[${i}]`, 0, 0));
}

/**
 * queue:work's backoff: the larger of --backoff and the deprecated --delay (both '0' unless
 * given), compared as PHP's max() compares two strings: as numbers when both are numeric, else
 * byte by byte. Returns the flag that won and its text.
 */
export function workBackoff(backoff: unknown, delay: unknown): { name: string; value: string } {
  const b = typeof backoff === 'string' ? backoff : '0';
  const d = typeof delay === 'string' ? delay : '0';
  const numeric = (text: string) => /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(text);
  const delayWins = numeric(b) && numeric(d) ? Number(d) > Number(b) : d > b;
  return delayWins ? { name: 'delay', value: d } : { name: 'backoff', value: b };
}

/**
 * --queue=a,b, else the connection's own queue (REDIS_QUEUE), as queue:work and queue:clear take
 * it: an empty --queue (a `--queue=$QUEUES` that expanded to nothing) is no --queue.
 */
export function queueNames(value: unknown, fallback: string): string[] {
  const names = typeof value === 'string' ? value.split(',').map((q) => q.trim()).filter(Boolean) : [];
  return names.length > 0 ? names : [fallback];
}
