/**
 * A Laravel `.env` read as Laravel reads it (vlucas/phpdotenv 5, through `Env`'s immutable
 * repository), not as Node's `dotenv` reads it. They differ where it matters for passwords and
 * keys: phpdotenv expands `${NAME}` only outside single quotes, leaves an unknown `${NAME}` as it
 * is, unescapes `\"`, `\\` and `\$` inside double quotes, and refuses a file it cannot read
 * (an unquoted value with a space in it, an unknown escape, a quote left open).
 */

/** A line phpdotenv would refuse; the message names the variable, never its value. */
export class DotenvSyntaxError extends Error {
  override name = 'DotenvSyntaxError';
}

/** The entries of a `.env`, in order, each value with `${NAME}` expanded as phpdotenv expands it. */
export function parseDotenv(text: string, environment: Record<string, string | undefined> = process.env): Record<string, string> {
  const loaded: Record<string, string> = {};
  for (const entry of entriesOf(text)) {
    const at = entry.indexOf('=');
    if (at < 0) continue; // a bare NAME clears nothing Laravel reads
    const name = nameOf(entry.slice(0, at).trim());
    // The process's environment is not overwritten (the repository is immutable), so it is also
    // what a `${NAME}` of it reads.
    const lookup = (key: string) => environment[key] ?? loaded[key];
    const value = expand(valueOf(name, entry.slice(at + 1).trim()), lookup);
    if (environment[name] === undefined) loaded[name] = value;
  }
  return loaded;
}

/**
 * The file's entries: lines, except blank ones and comments, with a double-quoted value that
 * spans lines joined back together.
 */
function entriesOf(text: string): string[] {
  const entries: string[] = [];
  let open: string[] | undefined;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (open) {
      open.push(line);
      if (line === '"' || unescapedQuotes(line) >= 1) {
        entries.push(open.join('\n'));
        open = undefined;
      }
    } else if (line.includes('="') && unescapedQuotes(line) < 2 && line !== '"') {
      open = [line];
    } else if (line.trim() !== '' && !line.trim().startsWith('#')) {
      entries.push(line);
    }
  }
  // A quote still open at the end takes those lines with it: phpdotenv drops them, without a word.
  return entries;
}

/** Quotes not escaped by a backslash and not first on the line, as phpdotenv counts them to find a value's end. */
function unescapedQuotes(line: string): number {
  return (line.replaceAll('\\\\', '').match(/(?<=[^\\])"/g) ?? []).length;
}

function nameOf(raw: string): string {
  let name = raw.replace(/^export\s+/, '');
  if (name.length >= 3 && (name[0] === '"' || name[0] === "'") && name.at(-1) === name[0]) name = name.slice(1, -1);
  if (!/^[A-Za-z0-9_.]+$/.test(name)) throw new DotenvSyntaxError(`${JSON.stringify(name)} is not a variable name`);
  return name;
}

/** A value as written: the text, and where each `$` that may start a `${NAME}` stands in it. */
interface Value {
  text: string;
  vars: number[];
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', $: '$', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/**
 * Reads a value character by character: unquoted up to whitespace or `#`, 'single-quoted'
 * literally, "double-quoted" with escapes; after a closing quote only whitespace and a comment.
 */
function valueOf(name: string, raw: string): Value {
  const value: Value = { text: '', vars: [] };
  let state: 'start' | 'unquoted' | 'single' | 'double' | 'after' = 'start';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (state === 'single') {
      if (c === "'") state = 'after';
      else value.text += c;
    } else if (state === 'double') {
      if (c === '"') state = 'after';
      else if (c === '\\') {
        const escaped = ESCAPES[raw[++i] ?? ''];
        if (escaped === undefined)
          throw new DotenvSyntaxError(
            `${name}'s value has an escape Laravel does not read (\\${raw[i] ?? ''}): only \\" \\\\ \\$ \\n \\r \\t \\f \\v`,
          );
        value.text += escaped;
      } else {
        if (c === '$') value.vars.push(value.text.length);
        value.text += c;
      }
    } else if (c === '#') {
      break;
    } else if (/\s/.test(c)) {
      if (state !== 'start') state = 'after';
    } else if (state === 'after') {
      throw new DotenvSyntaxError(`${name}'s value has unexpected whitespace or text after its closing quote: quote the whole value`);
    } else if (state === 'start' && (c === "'" || c === '"')) {
      state = c === "'" ? 'single' : 'double';
    } else {
      if (c === '$') value.vars.push(value.text.length);
      value.text += c;
      state = 'unquoted';
    }
  }
  if (state === 'single' || state === 'double') throw new DotenvSyntaxError(`${name}'s value has no closing quote`);
  return value;
}

/** Each `${NAME}` the value marked, last first, replaced by NAME's value; an unknown one kept as written. */
function expand(value: Value, lookup: (name: string) => string | undefined): string {
  let text = value.text;
  for (const at of [...value.vars].reverse()) {
    const match = /^\$\{([A-Za-z0-9_.]+)\}/.exec(text.slice(at));
    const found = match ? lookup(match[1]!) : undefined;
    if (match && found !== undefined) text = text.slice(0, at) + found + text.slice(at + match[0].length);
  }
  return text;
}
