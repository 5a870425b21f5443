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

/**
 * One flag of a command: what node's parseArgs needs, and what --help and docs/cli.md say of it.
 * The usage line, the option list and the parser are all read from this one table, so they
 * cannot drift apart.
 */
export interface Option {
  type: 'string' | 'boolean';
  multiple?: boolean;
  /** The value's placeholder: `FILE` in `--handlers=FILE`. */
  value?: string;
  /** What the flag does, one sentence. */
  description: string;
  /** The default when the flag is not given, as --help shows it (`[default: 60]`). */
  default?: string;
  /** The environment variable read when the flag is not given. */
  env?: string;
  /** Shown bare in the usage line (a required flag), not in brackets. */
  required?: true;
  /** Already spelled in the command's synopsis (`(--app=DIR | --bootstrap=FILE.php)`). */
  inSynopsis?: true;
  /** The heading it is listed under in --help, when not the command's own options. */
  group?: string;
}

export type Options = Record<string, Option>;

export interface Command {
  /** The command and its arguments, without the flags: `lqb work [CONNECTION]`. */
  synopsis: string;
  /** What it does, and which artisan command it mirrors. */
  summary: string;
  /** More lines for --help, after the options. */
  notes?: string;
  options: Options;
  /** True for a command that takes no arguments: one given is a usage error, as artisan's "Too many arguments". */
  noArguments?: true;
  /** Why the command cannot run from here (what it needs), when it cannot: it is listed, marked, and running it says this (exit 1). */
  unavailable?(): string | undefined;
  run(context: CommandContext): Promise<void | number>;
}

/** `--name=VALUE`, or `--name` for a switch. */
export function flagText(name: string, option: Option): string {
  return option.type === 'boolean' ? `--${name}` : `--${name}=${option.value ?? 'VALUE'}${option.multiple ? '…' : ''}`;
}

/** The one-line usage: the synopsis, then the required flags, then every other flag in brackets. */
export function usageLine(command: Command): string {
  const entries = Object.entries(command.options).filter(([, option]) => !option.inSynopsis);
  const required = entries.filter(([, option]) => option.required).map(([name, option]) => flagText(name, option));
  const optional = entries.filter(([, option]) => !option.required).map(([name, option]) => `[${flagText(name, option)}]`);
  return [command.synopsis, ...required, ...optional].join(' ');
}

/** What `lqb COMMAND --help` prints: the usage line, the summary, each flag with its description, the notes. */
export function helpText(command: Command): string {
  const lines = [`usage: ${usageLine(command)}`, '', command.summary];
  const entries = Object.entries(command.options);
  const width = Math.min(32, Math.max(...entries.map(([name, option]) => flagText(name, option).length)) + 2);
  let group: string | undefined | null = null;
  for (const [name, option] of entries) {
    if (option.group !== group) {
      group = option.group;
      lines.push('', `${group ?? 'Options'}:`);
    }
    const flag = flagText(name, option);
    const tail = [option.env ? `[env: ${option.env}]` : '', option.default !== undefined ? `[default: ${option.default}]` : '']
      .filter(Boolean)
      .join(' ');
    const text = `${option.description}${tail ? ` ${tail}` : ''}`;
    lines.push(flag.length + 2 > width ? `  ${flag}\n  ${' '.repeat(width)}${text}` : `  ${flag.padEnd(width)}${text}`);
  }
  if (command.notes) lines.push('', command.notes);
  return lines.join('\n');
}

/** The table as node's parseArgs takes it. */
export function parserOptions(options: Options): NonNullable<ParseArgsConfig['options']> {
  return Object.fromEntries(
    Object.entries(options).map(([name, option]) => [
      name,
      option.multiple ? { type: option.type, multiple: true } : { type: option.type },
    ]),
  );
}

/** Bad flags or arguments: exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A text flag's value; undefined when not given, a usage error when given empty. */
export function stringFlag(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} needs a value`);
  return value;
}

/** A numeric flag's value, at least `min`; a usage error naming the flag otherwise. */
export function numberFlag(value: unknown, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(n) || n < min)
    throw new UsageError(`--${name} must be a number of at least ${min}, not ${JSON.stringify(value)}`);
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
  const names =
    typeof value === 'string'
      ? value
          .split(',')
          .map((q) => q.trim())
          .filter(Boolean)
      : [];
  return names.length > 0 ? names : [fallback];
}
