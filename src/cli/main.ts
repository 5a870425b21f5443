#!/usr/bin/env node
/**
 * `lqb`: the command line. Commands and flags mirror `php artisan queue:*`.
 * Exit status: 0 success, 1 failure, 2 usage error, each failure with a one-line reason.
 */
import { parseArgs } from 'node:util';
import { UsageError, helpText, parserOptions } from './command.js';
import { commands } from './commands.js';
import { redactSecrets } from '../connect/redact.js';
import { VERSION } from '../internal/version.generated.js';

const HELP = new Set(['help', '--help', '-h']);

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  // `lqb help work` reads as `lqb work --help`, as `php artisan help queue:work` does.
  if (name !== undefined && HELP.has(name) && rest[0] !== undefined) {
    if (commands[rest[0]]) return main([rest[0], '--help']);
    // As `php artisan help bogus`: naming a command that is not there is an error.
    process.stderr.write(`lqb: unknown command "${rest[0]}" (commands: ${Object.keys(commands).join(', ')})\n`);
    return 2;
  }
  const command = name === undefined ? undefined : commands[name];
  if (!command) {
    const list = Object.keys(commands).join(', ');
    const asked = name === undefined || HELP.has(name);
    if (asked) process.stdout.write(`usage: lqb <command> …  (commands: ${list}; lqb help COMMAND for its flags)\n\n${overview()}\n`);
    else process.stderr.write(`lqb: unknown command "${name}" (commands: ${list})\n`);
    return asked ? 0 : 2;
  }
  const end = rest.indexOf('--');
  if ((end < 0 ? rest : rest.slice(0, end)).some((arg) => arg === '--help' || arg === '-h')) {
    process.stdout.write(`${helpText(command)}\n`);
    return 0;
  }
  try {
    const { values, positionals } = parseArgs({ args: rest, options: parserOptions(command.options), allowPositionals: !command.noArguments, strict: true });
    const status = await command.run({ values, positionals, out: (text) => process.stdout.write(text + '\n') });
    return status ?? 0;
  } catch (error) {
    const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    // One line, as the contract says; the usage itself is one --help away. No password or key in it.
    process.stderr.write(`lqb ${name}: ${redactSecrets(oneLine(error))}${usage ? ` (lqb ${name} --help for usage)` : ''}\n`);
    return usage ? 2 : 1;
  }
}

/** Each command's usage synopsis and the first sentence of what it does. */
function overview(): string {
  const width = Math.max(...Object.values(commands).map((command) => command.synopsis.length)) + 2;
  return Object.values(commands)
    .map((command) => `  ${command.synopsis.padEnd(width)}${command.summary.split(/(?<=\.) |\n/)[0]}`)
    .join('\n');
}

/** The package's name and version, as its package.json gives them (built in by scripts/embed.mjs). */
function version(): string {
  return `laravel-queue-bridge ${VERSION}`;
}

function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}

process.exitCode = await main(process.argv.slice(2));
