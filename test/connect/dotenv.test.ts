/**
 * parseDotenv against Laravel 8.83's own loading of a `.env` (phpdotenv 5 through `Env`'s
 * repository, php-fixture-gen/dotenv-parse.php): for each file, the variables set must be the
 * ones PHP set, with the same values, and a file PHP refuses must be refused. The process's
 * environment is the same on both sides (LQB_DOTENV_OUTER set outside the file).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DotenvSyntaxError, parseDotenv } from '../../src/connect/dotenv.js';
import { php } from '../helpers/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'lqb-dotenv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const environment = { PATH: process.env.PATH, LQB_DOTENV_OUTER: 'from the process' };

/** Files Laravel reads: what a team's .env holds, passwords and keys with awkward characters. */
const READ: Record<string, string> = {
  'quoted values with spaces and #': 'APP_NAME="My App # one"\nQUOTED=\'single # too\'\n',
  'unquoted values end at a comment, with or without a space before it': 'A=plain # comment\nB=a#b\nC=#all comment\n',
  '${VAR} is expanded in double quotes and unquoted, not in single quotes':
    'APP_NAME="Shop"\nA=x\nD="${APP_NAME} and ${A}"\nE=${D}\nF=pre${A}post\nS=\'${APP_NAME}\'\n',
  'an unknown ${VAR}, a default or a bare $VAR stay as written': 'O=${LQB_NOT_SET_ANYWHERE}\nP=${LQB_NOT_SET:-fallback}\nQ=$HOME\nR="$$"\n',
  'escapes in double quotes: \\" \\\\ \\$ \\n \\t': 'L="say \\"hi\\" \\\\ \\$A \\${A} \\n\\t end"\nA=1\nM=\'s \\n \\"\'\n',
  'a double-quoted value over several lines': 'KEY="-----BEGIN-----\nabc\n-----END-----"\nAFTER=1\n',
  'the process’s environment wins, and is what ${VAR} reads': 'LQB_DOTENV_OUTER="from the file"\nR=${LQB_DOTENV_OUTER}\n',
  'a reference to a later variable is not expanded; a later duplicate wins': 'X=${Y}\nY=1\nK=first\nK=second\nS=${K}\n',
  'export, empty values, null, blank lines, comments and CRLF':
    'export EXPORTED=yes\r\nG=\r\nH=""\r\n\r\n  # a comment\r\nI=\'\'\r\nN=null\r\n',
  'a password with every awkward character, single-quoted': 'REDIS_PASSWORD=\'p@ss w#rd $x "q" ${A}\'\nDB_PASSWORD="a\'b#c"\n',
  'a double quote never closed takes the rest of the file with it': 'A=1\nB="unclosed\nC=1\n',
  'base64 APP_KEY and URLs':
    'APP_KEY=base64:guiBF1X/fuXE55GTGMavHPEb6bzrFtMVy7QDBtoNw/o=\nREDIS_URL=redis://user:p%40ss@127.0.0.1:6379/2\n',
};

/** Files Laravel refuses to boot with. */
const REFUSED: Record<string, string> = {
  'an unquoted value with a space': 'APP_NAME=My App\n',
  'an escape phpdotenv does not know': 'A="bad \\q"\n',
  'text after the closing quote': 'A="x" y\n',
  'no name': '=x\n',
};

async function laravelLoads(name: string, text: string): Promise<Record<string, string> | { error: true }> {
  const file = join(dir, `${name.replace(/\W+/g, '-')}.env`);
  writeFileSync(file, text);
  const result = await php('dotenv-parse.php', [file], environment);
  expect(result.stderr, `${name}: dotenv-parse.php wrote to standard error`).toBe('');
  return JSON.parse(result.stdout) as Record<string, string> | { error: true };
}

describe('parseDotenv reads a .env as Laravel 8.83 does', () => {
  it.each(Object.entries(READ))('%s', async (name, text) => {
    const laravel = await laravelLoads(name, text);
    expect(laravel, `${name}: PHP refused a file meant to be readable`).not.toHaveProperty('error');
    expect(Object.entries(parseDotenv(text, environment)), `${name}: the variables or their values differ from Laravel's`).toEqual(
      Object.entries(laravel),
    );
  });

  it.each(Object.entries(REFUSED))('refuses what Laravel refuses: %s', async (name, text) => {
    expect(await laravelLoads(name, text), `${name}: PHP read the file`).toEqual({ error: true });
    expect(() => parseDotenv(text, environment), `${name}: parseDotenv read a file Laravel refuses`).toThrow(DotenvSyntaxError);
  });

  it('names the variable of a line it refuses, never its value', () => {
    expect(() => parseDotenv('REDIS_PASSWORD=hunter2 secret\n', {}), 'the error does not name the variable').toThrow(/REDIS_PASSWORD/);
    expect(() => parseDotenv('REDIS_PASSWORD=hunter2 secret\n', {}), 'the error shows the value').not.toThrow(/hunter2/);
  });
});
