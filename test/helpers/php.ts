/**
 * Runs Debian's real PHP from tests. Expected values come from here, never from our own code.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs a script of `php-fixture-gen/` with the given standard input; returns standard output. */
export function runPhpScript(script: string, input = '', args: string[] = []): string {
  return execFileSync('php', [`${root}php-fixture-gen/${script}`, ...args], {
    input,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
}

/** What PHP's serialize(unserialize(x)) gives for each input, or an Error when PHP refuses it. */
export function phpReserialize(inputs: Uint8Array[]): (Buffer | Error)[] {
  const lines = runPhpScript('reserialize.php', inputs.map((bytes) => Buffer.from(bytes).toString('base64')).join('\n') + '\n')
    .split('\n')
    .slice(0, inputs.length);
  return lines.map((line) => (line.startsWith('ERROR ') ? new Error(line.slice(6)) : Buffer.from(line, 'base64')));
}

/** Evaluates PHP code and returns what it printed. */
export function php(code: string): Buffer {
  return execFileSync('php', ['-r', code], { maxBuffer: 1 << 30 });
}
