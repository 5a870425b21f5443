/**
 * Every code block of README.md and of the docs/ pages it links to, checked: each ```ts block is
 * type-checked by tsc (strict, as the package's own code) with `laravel-queue-bridge` mapped to
 * src/, beside the declarations `lqb shapes --types` writes for php-fixture-gen/shapes-app (the
 * `./laravel-jobs.js` the typed handlers import); each ```sh line is an `lqb` command line its
 * command's parser takes (a `--help` one is run), the package's `npm install`, or (in docs/) a
 * `npx tsx` script of the repository. docs/cli.md is written from the option tables and checked by
 * test/cli/reference.test.ts; its blocks are usage lines, not commands.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands.js';
import { parserOptions } from '../../src/cli/command.js';
import { root } from '../helpers/php.js';
import { lqb } from '../helpers/processes.js';

interface Block {
  /** The file it is in, relative to the repository: README.md, docs/NAME.md. */
  file: string;
  lang: string;
  line: number;
  code: string;
}

/** The fenced blocks, indented ones (in a list) included, their indentation removed. */
function blocksOf(file: string, markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!;
    const end = lines.findIndex((line, j) => j > i && line === `${indent}\`\`\``);
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that is never closed`);
    blocks.push({
      file,
      lang: open[2]!,
      line: i + 1,
      code: lines
        .slice(i + 1, end)
        .map((line) => line.slice(indent.length))
        .join('\n'),
    });
    i = end;
  }
  return blocks;
}

/** A shell line as sh splits it: words, with '…' and "…" quoting (no expansions are used). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === ' ') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'" || c === '"') {
      const close = line.indexOf(c, i + 1);
      if (close < 0) throw new Error(`an unclosed ${c} in ${line}`);
      word = (word ?? '') + line.slice(i + 1, close);
      i = close;
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

const readme = readFileSync(join(root, 'README.md'), 'utf8');
const readmeBlocks = blocksOf('README.md', readme);
const docPages = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md') && name !== 'cli.md')
  .sort()
  .map((name) => `docs/${name}`);
const blocks = [...readmeBlocks, ...docPages.flatMap((file) => blocksOf(file, readFileSync(join(root, file), 'utf8')))];
const tsBlocks = blocks.filter((block) => block.lang === 'ts' || block.lang === 'typescript');
const shBlocks = blocks.filter((block) => block.lang === 'sh' || block.lang === 'bash');
const dir = join(root, 'node_modules/.cache', `lqb-readme-${process.pid}`);
/** The snippet's file in the scratch project: `block-README-60.ts`, `block-docs-handlers-12.ts`. */
const fileOf = (block: Block) => `block-${block.file.replace(/\.md$/, '').replace(/\//g, '-')}-${block.line}.ts`;
let diagnostics: string[] = [];

describe('README.md', () => {
  it('has only ts and sh blocks, each checked below', () => {
    expect(
      readmeBlocks
        .filter((block) => !tsBlocks.includes(block) && !shBlocks.includes(block))
        .map((block) => `line ${block.line}: ${block.lang || 'no language'}`),
    ).toEqual([]);
    // The quick start and the handlers module at least; the rest of the examples are in docs/.
    expect(readmeBlocks.filter((block) => tsBlocks.includes(block)).length).toBeGreaterThan(1);
    expect(tsBlocks.length).toBeGreaterThan(3);
  });

  it('links to every page of docs/, and every docs/ link it has names a page that is there', () => {
    const linked = new Set([...readme.matchAll(/\]\((docs\/[^)#]+)(?:#[^)]*)?\)/g)].map((match) => match[1]!));
    expect(
      [...linked].filter((file) => !existsSync(join(root, file))),
      'README links to missing docs',
    ).toEqual([]);
    expect(
      [...docPages, 'docs/cli.md'].filter((file) => !linked.has(file)),
      'docs pages the README does not link to',
    ).toEqual([]);
  });

  it('keeps the demo and test commands for a fresh machine as its first lines', () => {
    expect(readme.split('\n').slice(0, 5).join('\n')).toBe(
      "# laravel-queue-bridge\n\n- Run the demo (real Laravel pushes, the Node worker runs; Node pushes, Laravel's worker runs): `npm ci && npm run demo`\n- Run the tests: `npm ci && npm test`\n",
    );
  });
});

/** The anchors GitHub gives a page's headings (code blocks left out): lower case, punctuation dropped, spaces as hyphens. */
function anchorsOf(markdown: string): Set<string> {
  const prose = markdown.replace(/^( *)```[\s\S]*?^\1```$/gm, '');
  return new Set(
    [...prose.matchAll(/^#+ (.*)$/gm)].map((match) =>
      match[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}_\- ]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('links between README.md and docs/', () => {
  const pages = ['README.md', ...docPages, 'docs/cli.md'];
  const links = pages.flatMap((page) =>
    [...readFileSync(join(root, page), 'utf8').matchAll(/\]\(([^)#\s]*)(?:#([^)\s]+))?\)/g)]
      .filter((match) => !/^[a-z]+:/.test(match[1]!))
      .map((match) => ({ page, target: match[1] ? join(dirname(page), match[1]) : page, anchor: match[2] })),
  );

  it.each(links.map((link) => [link.page, `${link.target}${link.anchor ? `#${link.anchor}` : ''}`, link] as const))(
    '%s links to %s, which is there',
    (_page, _where, link) => {
      expect(existsSync(join(root, link.target)), `${link.target}`).toBe(true);
      if (link.anchor && link.target.endsWith('.md'))
        expect([...anchorsOf(readFileSync(join(root, link.target), 'utf8'))], `#${link.anchor} in ${link.target}`).toContain(link.anchor);
    },
  );
});

describe('README.md and docs/ ```ts blocks', () => {
  beforeAll(() => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const made = spawnSync(
      process.execPath,
      [
        join(root, 'dist/cli/main.js'),
        'shapes',
        `--app=${join(root, 'php-fixture-gen/shapes-app')}`,
        '--out=lqb-shapes.json',
        '--types=laravel-jobs.d.ts',
      ],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(made.stderr).toBe('');
    for (const block of tsBlocks) writeFileSync(join(dir, fileOf(block)), `${block.code}\nexport {};\n`);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: {
          noEmit: true,
          // A snippet may name a value only to show it.
          noUnusedLocals: false,
          noUnusedParameters: false,
          paths: { 'laravel-queue-bridge': [join(root, 'src/index.ts')], 'laravel-queue-bridge/*': [join(root, 'src/*/index.ts')] },
        },
        files: tsBlocks.map(fileOf),
        include: [],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--pretty', 'false'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000,
    });
    diagnostics = tsc.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
  }, 180_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the quick start’s connect() is exported from src/index.ts (the library’s one way in, DESIGN.md §4)', async () => {
    const library = (await import('../../src/index.js')) as Record<string, unknown>;
    expect(typeof library.connect, 'connect is not exported from src/index.ts: the README quick start (and DESIGN.md §4) use it').toBe(
      'function',
    );
  });

  it.each(tsBlocks.map((block) => [block.file, block.line, block] as const))('%s: the block at line %d compiles', (_file, _line, block) => {
    expect(diagnostics.filter((line) => line.startsWith(fileOf(block)))).toEqual([]);
  });

  it('nothing else the blocks reach has errors', () => {
    expect(diagnostics.filter((line) => !line.startsWith('block-'))).toEqual([]);
  });
});

describe('README.md and docs/ ```sh blocks', () => {
  const lines = shBlocks.flatMap((block) =>
    block.code
      .split('\n')
      .map((text, i) => ({ file: block.file, text: text.trim(), line: block.line + 1 + i }))
      .filter(({ text }) => text !== '' && !text.startsWith('#')),
  );

  it.each(lines.map(({ file, text, line }) => [file, line, text] as const))(
    '%s line %d, %s: a command line its parser takes',
    async (file, _line, text) => {
      // Leading VAR=value assignments set the environment of the command, as sh reads them.
      const words = shellWords(text).filter((_word, i, all) => !all.slice(0, i + 1).every((w) => /^[A-Z_][A-Z0-9_]*=/.test(w)));
      if (file !== 'README.md' && words[0] === 'npx' && words[1] === 'tsx') {
        // A script of the repository's (a bench), run with tsx.
        expect(existsSync(join(root, words[2]!)), `${words[2]} is not in the repository`).toBe(true);
        return;
      }
      if (words[0] === 'npm') {
        const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string };
        // The package, and the SQL driver of its default failed-jobs store (an optional peer dependency).
        expect(words.slice(0, 3)).toEqual(['npm', 'install', manifest.name]);
        expect(words.slice(3).filter((name) => !['better-sqlite3', 'mysql2', 'pg'].includes(name))).toEqual([]);
        return;
      }
      const args = words[0] === 'npx' ? words.slice(1) : words;
      expect(args[0]).toBe('lqb');
      const [name, ...rest] = args.slice(1);
      if (name === 'help' || rest.includes('--help')) {
        const result = await lqb(name === 'help' ? ['help', ...rest] : [name!, ...rest], process.env);
        expect(result.status).toBe(0);
        expect(result.stdout).toMatch(/^usage: lqb /);
        return;
      }
      const command = commands[name!];
      expect(command, `lqb ${name}`).toBeDefined();
      expect(() =>
        parseArgs({ args: rest, options: parserOptions(command!.options), allowPositionals: !command!.noArguments, strict: true }),
      ).not.toThrow();
    },
  );
});
