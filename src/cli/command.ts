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
