#!/usr/bin/env node
/**
 * `lqb`: the command line. Commands and flags mirror `php artisan queue:*`.
 * Exit status: 0 success, 1 failure, 2 usage error, each failure with a one-line reason.
 */
import { parseArgs } from 'node:util';
import { UsageError, helpText, parserOptions, type Command } from './command.js';
import { commandNames, loadCommand, loadCommands } from './registry.js';
import { LineWriter } from './output.js';
import { nearest } from './suggest.js';
import { redactLine } from '../connect/redact.js';
import { VERSION } from '../internal/version.generated.js';

const HELP = new Set(['help', '--help', '-h']);

/**
 * Every command, those that cannot run from here too (`lqb demo` runs only from a clone of the
 * repository): a command the README names is found in --help, and running it says what it needs.
 */
const listed = (): string[] => [...commandNames];

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  // `lqb help work` reads as `lqb work --help`, as `php artisan help queue:work` does.
  if (name !== undefined && HELP.has(name) && rest[0] !== undefined) {
    if (commandNames.includes(rest[0])) return main([rest[0], '--help']);
    // As `php artisan help bogus`: naming a command that is not there is an error.
    process.stderr.write(`lqb: unknown command "${rest[0]}"${didYouMean(rest[0], listed())} (commands: ${listed().join(', ')})\n`);
    return 2;
  }
  // Only the command asked for is loaded: its module brings in what it runs, and no other's.
  const command = name === undefined ? undefined : await loadCommand(name);
  if (!command) {
    const list = listed().join(', ');
    const asked = name === undefined || HELP.has(name);
    if (asked)
      process.stdout.write(
        `usage: lqb <command> …  (commands: ${list}; lqb help COMMAND for its flags)\n\n${overview(await loadCommands())}\n`,
      );
    else process.stderr.write(`lqb: unknown command "${name}"${didYouMean(name, listed())} (commands: ${list})\n`);
    return asked ? 0 : 2;
  }
  const end = rest.indexOf('--');
  if ((end < 0 ? rest : rest.slice(0, end)).some((arg) => arg === '--help' || arg === '-h')) {
    process.stdout.write(`${helpText(command)}\n`);
    return 0;
  }
  const unavailable = command.unavailable?.();
  if (unavailable !== undefined) {
    process.stderr.write(`lqb ${name}: ${unavailable}\n`);
    return 1;
  }
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      options: parserOptions(command.options),
      allowPositionals: !command.noArguments,
      strict: true,
    });
    // Lines go out once per turn of the event loop (a worker says two a job): see LineWriter.
    const lines = new LineWriter(process.stdout);
    try {
      return (await command.run({ values, positionals, out: (text) => lines.write(text) })) ?? 0;
    } finally {
      lines.close();
    }
  } catch (error) {
    const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    // One line, as the contract says; the usage itself is one --help away. No password or key in it.
    const reason = unknownFlag(error, Object.keys(command.options)) ?? oneLine(error);
    process.stderr.write(`lqb ${name}: ${redactLine(reason)}${usage ? ` (lqb ${name} --help for usage)` : ''}\n`);
    return usage ? 2 : 1;
  }
}

/** Each command's usage synopsis and the first sentence of what it does. */
function overview(commands: Record<string, Command>): string {
  const width = Math.max(...listed().map((name) => commands[name]!.synopsis.length)) + 2;
  return listed()
    .map((name) => commands[name]!)
    .map((command) => `  ${command.synopsis.padEnd(width)}${command.summary.split(/(?<=\.) |\n/)[0]}${notFromHere(command)}`)
    .join('\n');
}

/** A mark on a command that cannot run from this install, so its line in --help does not promise it. */
function notFromHere(command: Command): string {
  return command.unavailable?.() === undefined ? '' : ` (not from this install: \`${command.synopsis}\` says what it needs)`;
}

/** The package's name and version, as its package.json gives them (built in by scripts/embed.mjs). */
function version(): string {
  return `laravel-queue-bridge ${VERSION}`;
}

const didYouMean = (word: string, known: string[]): string => {
  const near = nearest(word, known);
  return near === undefined ? '' : `; did you mean "${near}"?`;
};

/**
 * parseArgs's unknown-flag error in one line, with the command's nearest flag when one is near:
 * node's own message goes on about positionals after `--`, which is seldom what happened.
 */
function unknownFlag(error: unknown, flags: string[]): string | undefined {
  if ((error as { code?: string }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return undefined;
  const given = /Unknown option '([^']+)'/.exec((error as Error).message)?.[1];
  if (given === undefined) return undefined;
  const near = given.startsWith('--') ? nearest(given.slice(2).split('=')[0]!, flags) : undefined;
  return `Unknown option '${given}'${near === undefined ? '' : `; did you mean --${near}?`}`;
}

function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}

process.exitCode = await main(process.argv.slice(2));
