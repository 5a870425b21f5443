/**
 * `lqb decode [FILE]`: a Laravel job payload (JSON) or a PHP-serialized string, as readable JSON.
 * Reads standard input when no file is named.
 */
import { readFile } from 'node:fs/promises';
import { unserialize } from '../php/index.js';
import { readable } from './readable.js';
import { UsageError, type Command } from './command.js';

export const decode: Command = {
  usage: 'lqb decode [FILE]   (standard input when no FILE)',
  options: {},
  async run({ positionals, out }) {
    if (positionals.length > 1) throw new UsageError('decode takes at most one FILE');
    const input = positionals[0] && positionals[0] !== '-' ? await readFile(positionals[0]) : await readStdin();
    out(JSON.stringify(decodeInput(input), null, 2));
  },
};

/** A JSON envelope shows its fields with `data.command` decoded; anything else is read as PHP. */
export function decodeInput(input: Buffer): unknown {
  const text = input.toString('utf8').trim();
  if (text.startsWith('{')) {
    const payload = JSON.parse(text) as Record<string, unknown> & { data?: { command?: unknown } };
    const command = payload.data?.command;
    if (typeof command !== 'string') return payload;
    return { ...payload, data: { ...payload.data, command: readable(unserialize(command)) } };
  }
  // A serialized value never ends in white space, so a newline an editor or `echo` added is dropped.
  let end = input.length;
  while (end > 0 && (input[end - 1] === 0x0a || input[end - 1] === 0x0d || input[end - 1] === 0x20 || input[end - 1] === 0x09)) end--;
  return readable(unserialize(input.subarray(0, end)));
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
