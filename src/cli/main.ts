#!/usr/bin/env node
/**
 * `lqb`: the command line. Commands and flags mirror `php artisan queue:*`.
 * Exit status: 0 success, 1 failure, 2 usage error, each failure with a one-line reason.
 */
import { parseArgs } from 'node:util';
import { UsageError, type Command } from './command.js';
import { decode } from './decode.js';
import { dispatch } from './dispatch.js';
import { failed, flush, forget, retry } from './failed.js';
import { clear, restart, size } from './queues.js';
import { work } from './work.js';
import { demo } from './demo.js';

const commands: Record<string, Command> = { work, dispatch, decode, size, clear, restart, failed, retry, forget, flush, demo };

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : commands[name];
  if (!command) {
    const list = Object.keys(commands).join(', ');
    process.stderr.write(name && name !== 'help' && name !== '--help' ? `lqb: unknown command "${name}" (commands: ${list})\n` : `usage: lqb <command> …  (commands: ${list})\n`);
    return name && name !== 'help' && name !== '--help' ? 2 : 0;
  }
  try {
    const { values, positionals } = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true });
    const status = await command.run({ values, positionals, out: (text) => process.stdout.write(text + '\n') });
    return status ?? 0;
  } catch (error) {
    const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`lqb ${name}: ${oneLine(error)}\n`);
    if (usage) process.stderr.write(`usage: ${command.usage}\n`);
    return usage ? 2 : 1;
  }
}

function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}

process.exitCode = await main(process.argv.slice(2));
