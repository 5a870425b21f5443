/**
 * `lqb decode [FILE] [--key=APP_KEY] [--cipher=C] [--env=PATH]`: a Laravel job payload (JSON)
 * or a PHP-serialized string, as readable JSON. Reads standard input when no file is named.
 * A payload shows its envelope with the command decoded, and the typed view of that command;
 * an encrypted command is decrypted when a key is given (or found in the .env).
 */
import { readFile } from 'node:fs/promises';
import { PhpArray, PhpFloat, unserialize, type PhpValue } from '../php/index.js';
import { Encrypter, commandOf, decodePayload, isJsonObject, type JobView } from '../laravel/index.js';
import { appKeyFrom, connectionFlags, type AppKeySettings } from './connection.js';
import { formatJson, namedSlots, readable, type NamedSlots } from './readable.js';
import { UsageError, type Command } from './command.js';

export const decode: Command = {
  synopsis: 'lqb decode [FILE]',
  summary:
    'Shows a Laravel job payload (JSON) or a PHP-serialized string as readable JSON: the envelope, the command decoded and its typed view; standard input when no FILE (or -).',
  options: {
    key: connectionFlags.key,
    cipher: connectionFlags.cipher,
    env: { ...connectionFlags.env, description: 'a Laravel .env to take APP_KEY and APP_CIPHER from' },
  },
  async run({ values, positionals, out }) {
    if (positionals.length > 1) throw new UsageError('decode takes at most one FILE');
    const input = positionals[0] && positionals[0] !== '-' ? await readInputFile(positionals[0]) : await readStdin();
    out(formatJson(decodeInput(input, appKeyFrom(values))));
  },
};

/** A JSON envelope shows its fields, its command decoded and the command's typed view; anything else is read as PHP. */
export function decodeInput(input: Buffer, keys: AppKeySettings = {}): unknown {
  const text = input.toString('utf8').trim();
  if (!text.startsWith('{')) {
    // A serialized value never ends in white space, so a newline an editor or `echo` added is dropped.
    let end = input.length;
    while (end > 0 && (input[end - 1] === 0x0a || input[end - 1] === 0x0d || input[end - 1] === 0x20 || input[end - 1] === 0x09)) end--;
    return readable(unserialize(input.subarray(0, end)));
  }
  const decoded = decodePayload(text);
  const canRead = !decoded.encrypted || keys.appKey !== undefined;
  const { command, view } = canRead
    ? commandOf(decoded, keys.appKey ? new Encrypter(keys.appKey, keys.cipher) : undefined)
    : { command: undefined, view: decoded.view };
  const data = decoded.envelope.data;
  // The command's references are numbered over the whole command, wherever a part of it is shown.
  const named: NamedSlots = command === undefined ? new Map<object, number>() : namedSlots(command);
  const shown = command === undefined ? 'encrypted: give --key=APP_KEY or --env=PATH to decrypt' : readable(command, named);
  const envelope = readableJson(decoded.envelope) as Record<string, unknown>;
  // A string job's data is its handler's own; only a command job's data.command is shown decoded
  // (put in after readableJson, which would walk it again, by recursion).
  if (decoded.view.kind !== 'string' && isJsonObject(data)) envelope.data = { ...(envelope.data as object), command: shown };
  return {
    envelope,
    laravel: decoded.profile,
    encrypted: decoded.encrypted,
    view: readableView(view, named),
  };
}

/** A job's typed view; `named` numbers references over its command (made from its properties when not given). */
function readableView(view: JobView, named?: NamedSlots): unknown {
  switch (view.kind) {
    case 'string':
      return { kind: 'string', handler: view.handler, data: readableJson(view.data) };
    case 'encrypted':
      return view;
    default: {
      // eslint-disable-next-line @typescript-eslint/unbound-method -- toJS is taken out to be left out, never called
      const { properties, queueable, chain, toJS: _toJS, ...rest } = view;
      named ??= namedSlots(PhpArray.list(properties.map((p) => p.value)));
      const shown: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(rest)) {
        if (value !== undefined && !Array.isArray(value)) shown[key] = readable(value as PhpValue, named);
      }
      if ('arguments' in view) shown.arguments = view.arguments.map((arg) => readable(arg, named));
      shown.properties = properties.map((p) => ({ ...p, value: readable(p.value, named) }));
      shown.queueable = Object.fromEntries(
        Object.entries(queueable)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => [k, readable(v as PhpValue, named)]),
      );
      // A chained job is a serialized string of its own, its references numbered in it alone.
      shown.chain = chain.map((link) => (typeof link === 'string' ? link : readableView(link)));
      return shown;
    }
  }
}

/** JSON values as the envelope holds them (floats, big ints, Maps) made printable. */
function readableJson(value: unknown): unknown {
  // A string job may carry no data at all, which JSON cannot print.
  if (value === undefined) return null;
  return JSON.parse(
    JSON.stringify(value, (_, v: unknown) => {
      if (typeof v === 'bigint') return v.toString();
      if (v instanceof Map) return Object.fromEntries(v as Map<string, unknown>);
      if (v instanceof PhpFloat) return Number.isFinite(v.value) ? v.value : String(v.value);
      return v;
    }),
  );
}

/** The FILE's bytes; a file that cannot be read is named in the one line that says why (Node's own omits it for a directory). */
async function readInputFile(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'there is no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
    throw new Error(`cannot read ${path}: ${why}`);
  }
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
