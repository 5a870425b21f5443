/**
 * The commands' option tables are the one source of `lqb COMMAND --help`, the parser and
 * docs/cli.md: every flag a parser takes is in its --help, in docs/cli.md (which the README's CLI
 * section links to), and docs/cli.md is exactly what the tables write.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands.js';
import { flagText, parserOptions, usageLine } from '../../src/cli/command.js';
import { cliReference } from '../../src/cli/reference.js';
import { lqb } from '../helpers/processes.js';

const docsFile = new URL('../../docs/cli.md', import.meta.url);
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const configuration = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
/** The hand-written pages: README.md and docs/*.md but the generated docs/cli.md. */
const pages: [string, string][] = [
  ['README.md', readme],
  ...readdirSync(new URL('../../docs/', import.meta.url))
    .filter((name) => name.endsWith('.md') && name !== 'cli.md')
    .map((name): [string, string] => [`docs/${name}`, readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8')]),
];

describe('lqb COMMAND --help', () => {
  it.each(Object.keys(commands))('lqb %s --help names every flag its parser takes, with its description', async (name) => {
    const command = commands[name]!;
    const result = await lqb([name, '--help'], process.env);
    expect(result.status).toBe(0);
    expect(result.stdout.startsWith(`usage: ${usageLine(command)}\n`)).toBe(true);
    const parsed = Object.keys(parserOptions(command.options));
    expect(parsed.sort()).toEqual(Object.keys(command.options).sort());
    for (const flag of parsed) {
      const option = command.options[flag]!;
      expect(result.stdout, `--${flag}`).toMatch(new RegExp(`\\n  ${flagText(flag, option).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[ \\n]`));
      expect(result.stdout, `--${flag}`).toContain(option.description);
      // The usage line names it too, unless the synopsis spells it.
      expect(usageLine(command), `--${flag}`).toContain(option.inSynopsis ? `--${flag}` : flagText(flag, option));
    }
  });
});

describe('docs/cli.md', () => {
  it('is what the option tables write', () => {
    const written = cliReference(commands);
    if (process.env.LQB_WRITE_DOCS === '1') writeFileSync(docsFile, written);
    expect(readFileSync(docsFile, 'utf8'), 'run LQB_WRITE_DOCS=1 npx vitest run --project main test/cli/reference.test.ts').toBe(written);
  });

  it('names every flag of every command, and the README’s CLI section links to it', () => {
    const docs = readFileSync(docsFile, 'utf8');
    for (const [name, command] of Object.entries(commands)) {
      const section = docs.slice(docs.indexOf(`## lqb ${name}\n`)).split('\n## ')[0]!;
      for (const [flag, option] of Object.entries(command.options))
        expect(section, `lqb ${name} --${flag}`).toContain(`\`${flagText(flag, option).replace(/\|/g, '\\|')}\``);
    }
    const cliSection = readme.slice(readme.indexOf('\n## The CLI')).split('\n## ')[1]!;
    expect(cliSection).toContain('(docs/cli.md)');
    for (const name of Object.keys(commands)) expect(cliSection, `lqb ${name}`).toContain(`lqb ${name}`);
  });

  it.each(pages.map(([file]) => file))(
    'names in %s no flag that no command takes (a renamed or removed flag is not left behind)',
    (file) => {
      const text = pages.find(([name]) => name === file)![1];
      const taken = new Set(Object.values(commands).flatMap((command) => Object.keys(command.options)));
      // Not lqb's: npm's, git's, node's, tsc's, vitest's, and lqb's own --help and --version.
      // Flags of other tools the pages name: npm, node (V8's, which docs/speed.md tried), tsc, vitest.
      const v8 = [
        'max-semi-space-size',
        'trace-gc-nvp',
        'no-turbo-inlining',
        'maglev',
        'trace-opt',
        'single-threaded-gc',
        'no-parallel-scavenge',
      ];
      const others = new Set(['save-dev', 'exit-code', 'import', 'strict', 'project', 'help', 'version', ...v8]);
      const named = new Set([...text.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((match) => match[1]!));
      expect([...named].filter((flag) => !taken.has(flag) && !others.has(flag))).toEqual([]);
    },
  );

  it('the configuration tables (docs/configuration.md, and the README’s short one) give each flag the environment variable its option reads', () => {
    const options = Object.assign({}, ...Object.values(commands).map((command) => command.options)) as Record<string, { env?: string }>;
    const readmeTable = readme.slice(readme.indexOf('\n## Configuration\n')).split('\n## ')[1]!;
    const rowsOf = (text: string) => text.split('\n').filter((line) => line.startsWith('| `--'));
    expect(rowsOf(configuration).length, 'rows of docs/configuration.md').toBeGreaterThan(10);
    const rows = [...rowsOf(configuration), ...rowsOf(readmeTable)];
    const names = (text: string) => [...text.matchAll(/[A-Z][A-Z0-9_]+/g)].map((match) => match[0]).sort();
    for (const row of rows) {
      const [flags, env] = row
        .split(/(?<!\\)\|/)
        .slice(1, 3)
        .map((cell) => cell.trim());
      for (const [, flag] of flags!.matchAll(/`--([a-z-]+)/g)) {
        expect(options[flag!], `--${flag}`).toBeDefined();
        expect(names(env!), `--${flag}`).toEqual(names(options[flag!]!.env ?? ''));
      }
    }
  });
});
