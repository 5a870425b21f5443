/**
 * docs/cli.md: every command's usage and flags, written from the same tables as `--help` and
 * the parser (test/cli/reference.test.ts checks that the file is what this writes).
 */
import { flagText, usageLine, type Command } from './command.js';

export function cliReference(commands: Record<string, Command>): string {
  const lines = [
    '# `lqb` reference',
    '',
    "Written from the commands' option tables (`src/cli/`), the same tables `lqb COMMAND --help` prints and the parser reads;",
    'a test fails when this file is not what they say (`LQB_WRITE_DOCS=1 npx vitest run --project main test/cli/reference.test.ts` rewrites it).',
    'Exit status: 0 success, 1 failure, 2 usage error, each failure with a one-line reason.',
  ];
  for (const [name, command] of Object.entries(commands)) {
    lines.push('', `## lqb ${name}`, '', '```', usageLine(command), '```', '', command.summary.replace(/\n/g, ' '));
    if (command.notes) lines.push('', command.notes.replace(/\n/g, ' '));
    lines.push('', '| flag | env | default | what it does |', '|---|---|---|---|');
    for (const [flag, option] of Object.entries(command.options)) {
      const cell = (text: string | undefined) => (text === undefined ? '' : text.replace(/\|/g, '\\|'));
      lines.push(
        `| \`${cell(flagText(flag, option))}\` | ${option.env ? `\`${cell(option.env)}\`` : ''} | ${cell(option.default)} | ${cell(option.description)}${option.group ? ` (${option.group.toLowerCase()})` : ''} |`,
      );
    }
  }
  return lines.join('\n') + '\n';
}
