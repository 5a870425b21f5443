/**
 * JSON the way PHP writes it, and read back without losing what PHP's writer would need to
 * write it again: key order, int versus float, and which escaping style was used.
 *
 * PHP's `json_encode` differs from `JSON.stringify` in three ways that matter here: it writes
 * `/` as `\/`; without JSON_UNESCAPED_UNICODE (Laravel before 8.82, Horizon, `queue:retry`) it
 * writes every non-ASCII character as `\uXXXX`; with it, it still escapes U+2028 and U+2029.
 * Floats use PHP's shortest spelling with a lowercase `e` (`1.0e+25`), and a whole float is
 * written without a fraction (`1`), so it reads back as an int, as it does in PHP.
 */
import { PhpFloat } from '../php/index.js';
import { formatPhpFloat } from '../php/float.js';
import { isInt64 } from '../php/int64.js';

/** A JSON value as read here: objects keep their key order (a `Map` when JS would reorder them). */
export type JsonValue = null | boolean | number | bigint | string | PhpFloat | JsonValue[] | JsonObject | Map<string, JsonValue>;
export interface JsonObject {
  [key: string]: JsonValue;
}

export interface JsonEncodeOptions {
  /** PHP's JSON_UNESCAPED_UNICODE: non-ASCII written as UTF-8 rather than `\uXXXX`. */
  unescapedUnicode?: boolean;
}

export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at character ${offset}`);
  }
}

/** Writes a value as PHP's json_encode would, with or without JSON_UNESCAPED_UNICODE. */
export function encodeJson(value: JsonValue | undefined, options: JsonEncodeOptions = {}): string {
  return writeJson(value, options.unescapedUnicode ?? false);
}

/**
 * encodeJson's walk. Lists and objects are written by appending to one string in a loop: an
 * envelope's dozen keys made through entries, map and join cost a dispatch more than its command.
 */
function writeJson(value: JsonValue | undefined, unicode: boolean): string {
  switch (typeof value) {
    case 'string':
      return encodeString(value, unicode);
    case 'number':
      return Number.isInteger(value) ? String(value) : encodeFloat(value);
    case 'bigint':
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return 'null';
    default:
      break; // null and the objects: below
  }
  if (value === null) return 'null';
  if (value instanceof PhpFloat) return value.source ?? encodeFloat(value.value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + writeJson(value[i], unicode);
    return out + ']';
  }
  let out = '{';
  if (value instanceof Map) {
    for (const [key, item] of value) out += (out.length === 1 ? '' : ',') + encodeString(key, unicode) + ':' + writeJson(item, unicode);
  } else {
    const keys = Object.keys(value);
    for (let i = 0; i < keys.length; i++)
      out += (i === 0 ? '' : ',') + encodeString(keys[i]!, unicode) + ':' + writeJson(value[keys[i]!], unicode);
  }
  return out + '}';
}

function encodeFloat(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`PHP cannot write ${value} as JSON`);
  return formatPhpFloat(value).replace('E', 'e');
}

/** Below this length a loop over the characters tells a plain string quicker than JSON.stringify and a scan. */
const SHORT = 64;

/** Whether a short string has none of the characters PHP escapes one way or another: the keys and most values of an envelope. */
function plainShort(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 34 /* " */ || c === 47 /* / */ || c === 92 /* \ */ || c >= 0x80) return false;
  }
  return true;
}

export function encodeString(text: string, unescapedUnicode: boolean): string {
  if (text.length < SHORT && plainShort(text)) return `"${text}"`;
  // JSON.stringify already escapes quotes, backslashes and control characters as PHP does
  // (\b \f \n \r \t, else \u00xx in lowercase), and writes the rest as it is. PHP's extra
  // rules go on top, only where their characters are: one scan tells (a serialized command,
  // the longest string of a payload, has none of them as a rule).
  let json = JSON.stringify(text);
  if (!(unescapedUnicode ? EXTRA_UNESCAPED : EXTRA_ESCAPED).test(json)) return json;
  json = json.replace(/\//g, '\\/');
  return unescapedUnicode
    ? json.replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)
    : json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** What PHP escapes beyond JSON.stringify: `/`, and U+2028 and U+2029 with JSON_UNESCAPED_UNICODE, else all non-ASCII. */
const EXTRA_UNESCAPED = /[/\u2028\u2029]/;
const EXTRA_ESCAPED = /[/\u0080-\uffff]/;

/** A JSON object read as a plain object (not a list, a float, or a Map kept for its key order). */
export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Map) && !(value instanceof PhpFloat);
}

/** A JSON object in either form this reader gives one: a plain object, or a Map. */
export function isJsonRecord(value: JsonValue | undefined): value is JsonObject | Map<string, JsonValue> {
  return value instanceof Map || isJsonObject(value);
}

/** A JSON number, int or float, as a JS number; undefined for anything else. */
export function jsonNumber(value: JsonValue | undefined): number | undefined {
  if (typeof value === 'number') return value;
  return value instanceof PhpFloat ? value.value : undefined;
}

/** A JSON value as plain JavaScript: floats as numbers, objects (Maps included) as plain objects. */
export function plainJson(value: JsonValue | undefined): unknown {
  if (value instanceof PhpFloat) return value.value;
  if (Array.isArray(value)) return value.map(plainJson);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [k, plainJson(v)]));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '__proto__') Object.defineProperty(out, k, { value: plainJson(v), enumerable: true, writable: true, configurable: true });
      else out[k] = plainJson(v);
    }
    return out;
  }
  return value;
}

/** True when this JSON text has non-ASCII written raw, false when escaped, undefined when it has none. */
export function detectUnescapedUnicode(json: string): boolean | undefined {
  if (/[\u0080-\uffff]/.test(json)) return true;
  if (/\\u(?:00[89a-f][0-9a-f]|0[1-9a-f][0-9a-f]{2}|[1-9a-f][0-9a-f]{3})/i.test(json)) return false;
  return undefined;
}

export interface JsonDecodeOptions {
  /**
   * `'lossless'` (the default) keeps each number as written, so a payload is written back byte
   * for byte. `'php'` makes numbers what PHP's json_decode makes them: an integer that fits
   * int64 an int (`-0` is 0), anything else a float, to be written in PHP's own spelling.
   */
  numbers?: 'lossless' | 'php';
}

/**
 * Reads JSON keeping what `encodeJson` needs: numbers with a fraction or exponent become
 * `PhpFloat` (their spelling kept when PHP would spell them otherwise), integers beyond 2^53
 * `bigint`, and objects whose keys JS would reorder (integer-like ones) a `Map`.
 */
export function decodeJson(text: string, options: JsonDecodeOptions = {}): JsonValue {
  // Most payloads hold nothing JSON.parse would read otherwise: the engine's parser is then about
  // three times quicker than the one below. Text it cannot read goes below, for the same error.
  const read = readByEngine(text);
  if (read !== undefined) return read;
  const parser = new JsonParser(text, options.numbers === 'php');
  parser.space();
  const value = parser.value();
  parser.space();
  if (parser.pos !== text.length) throw new JsonSyntaxError(`expected end of JSON, found ${parser.found()}`, parser.pos);
  return value;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Text whose numbers JSON.parse reads as the parser below does: each outside a string is an
 * integer of at most 15 digits (a safe integer, never `-0`), so no PhpFloat and no bigint. One
 * regular expression, run by the engine: strings are matched whole, escapes and all (the two
 * parsers decode them alike), and no part of the text can be matched two ways.
 */
const INTEGERS_ONLY = /^(?:[^"0-9-]|"[^"\\]*(?:\\[^][^"\\]*)*"|-?[1-9][0-9]{0,14}(?![0-9.eE])|0(?![0-9.eE]))*$/;

/** Past this, the expression's backtracking stack could grow large: the parser below reads it. */
const ENGINE_JSON_MAX = 256 * 1024;

/**
 * The text read by JSON.parse when that gives what the parser below gives, else undefined: its
 * numbers are plain integers (INTEGERS_ONLY), no key starts with a digit (a Map keeps its place
 * there), nothing is nested past PHP's 512 levels (an error there). `__proto__` is an own
 * property in both. Text JSON.parse refuses is left to the parser below, for its error.
 */
function readByEngine(text: string): JsonValue | undefined {
  if (text.length > ENGINE_JSON_MAX) return undefined;
  let value: JsonValue;
  try {
    if (!INTEGERS_ONLY.test(text)) return undefined;
    value = JSON.parse(text) as JsonValue;
  } catch {
    // Not JSON (or the expression gave up): the parser below says where and why.
    return undefined;
  }
  return keysAndDepthAsParsed(value, 1) ? value : undefined;
}

function keysAndDepthAsParsed(value: JsonValue, depth: number): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (depth > 512) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!keysAndDepthAsParsed(item, depth + 1)) return false;
    return true;
  }
  for (const key in value) {
    const first = key.charCodeAt(0);
    if (first >= 48 && first <= 57) return false;
    if (!keysAndDepthAsParsed((value as JsonObject)[key]!, depth + 1)) return false;
  }
  return true;
}

class JsonParser {
  pos = 0;
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly phpNumbers = false,
  ) {}

  value(): JsonValue {
    const c = this.text.charCodeAt(this.pos);
    if (c === 34 /* " */) return this.string();
    if (c === 123 /* { */) return this.object();
    if (c === 91 /* [ */) return this.array();
    if (c === 45 /* - */ || (c >= 48 && c <= 57)) return this.number();
    if (this.text.startsWith('null', this.pos)) return this.word(4, null);
    if (this.text.startsWith('true', this.pos)) return this.word(4, true);
    if (this.text.startsWith('false', this.pos)) return this.word(5, false);
    throw new JsonSyntaxError(`expected a JSON value, found ${this.found()}`, this.pos);
  }

  private word<T>(length: number, value: T): T {
    this.pos += length;
    return value;
  }

  private string(): string {
    const text = this.text;
    const start = this.pos;
    // Jump from quote to quote; a quote preceded by an odd run of backslashes is escaped.
    let end = text.indexOf('"', start + 1);
    let escaped = false;
    for (;;) {
      if (end < 0) throw new JsonSyntaxError('unterminated string', text.length);
      let slashes = 0;
      while (text.charCodeAt(end - 1 - slashes) === 92 /* \ */) slashes++;
      if (slashes > 0) escaped = true;
      if (slashes % 2 === 0) break;
      end = text.indexOf('"', end + 1);
    }
    this.pos = end + 1;
    // A backslash elsewhere in the token also means escapes (String#lastIndexOf is slow here).
    for (let i = start + 1; !escaped && i < end; i++) if (text.charCodeAt(i) === 92) escaped = true;
    if (!escaped) {
      const plain = text.slice(start + 1, end);
      if (CONTROL.test(plain)) throw new JsonSyntaxError('control character in string', start);
      return plain;
    }
    // Short tokens with only \\ and \/ (class names: "App\\Jobs\\X") are common enough to undo by hand.
    if (end - start < 96) {
      const simple = unescapeSimple(text, start + 1, end);
      if (simple !== undefined) return simple;
    }
    // The engine's own parser decodes every escape correctly and fast; give it just this token.
    try {
      return JSON.parse(text.slice(start, end + 1)) as string;
    } catch {
      throw new JsonSyntaxError('bad escape or control character in string', start);
    }
  }

  private number(): number | bigint | PhpFloat {
    const text = this.text;
    const start = this.pos;
    let i = start;
    if (text.charCodeAt(i) === 45) i++;
    let isFloat = false;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c >= 48 && c <= 57) i++;
      else if (c === 46 || c === 101 || c === 69 || c === 43 || c === 45) {
        isFloat = true;
        i++;
      } else break;
    }
    const token = text.slice(start, i);
    if (!NUMBER.test(token)) throw new JsonSyntaxError(`bad number "${token}"`, start);
    this.pos = i;
    if (this.phpNumbers) return phpNumber(token, isFloat);
    // "-0" is how PHP writes a negative-zero float; as an int it would lose its sign.
    if (isFloat || token === '-0') {
      const value = Number(token);
      return encodeFloat(value) === token ? new PhpFloat(value) : new PhpFloat(value, token);
    }
    if (token.length < 16) return Number(token);
    const big = BigInt(token);
    return big >= -MAX_SAFE && big <= MAX_SAFE ? Number(big) : big;
  }

  private array(): JsonValue[] {
    this.enter();
    this.pos++;
    const items: JsonValue[] = [];
    this.space();
    if (this.text.charCodeAt(this.pos) === 93 /* ] */) {
      this.pos++;
      this.depth--;
      return items;
    }
    for (;;) {
      this.space();
      items.push(this.value());
      this.space();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 93) break;
      if (c !== 44) throw new JsonSyntaxError(`expected , or ] in array, found ${this.found(this.pos - 1)}`, this.pos - 1);
    }
    this.depth--;
    return items;
  }

  private object(): JsonObject | Map<string, JsonValue> {
    this.enter();
    this.pos++;
    // Built as an ordinary object, which is much quicker to make and read than a null-prototype
    // one or a Map; an integer-like key, which a JS object would move to the front, turns it into
    // a Map that keeps the order.
    let object: JsonObject | undefined = {};
    let map: Map<string, JsonValue> | undefined;
    this.space();
    if (this.text.charCodeAt(this.pos) !== 125 /* } */) {
      for (;;) {
        this.space();
        if (this.text.charCodeAt(this.pos) !== 34) throw new JsonSyntaxError(`expected a key, found ${this.found()}`, this.pos);
        const key = this.string();
        this.space();
        if (this.text.charCodeAt(this.pos++) !== 58 /* : */)
          throw new JsonSyntaxError(`expected : after key, found ${this.found(this.pos - 1)}`, this.pos - 1);
        this.space();
        const value = this.value();
        if (object !== undefined && isIntegerLike(key)) {
          map = new Map(Object.entries(object));
          object = undefined;
        }
        if (map !== undefined) map.set(key, value);
        // "__proto__" is made an own property, never a change of prototype.
        else if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
        else object![key] = value;
        this.space();
        const c = this.text.charCodeAt(this.pos++);
        if (c === 125) break;
        if (c !== 44) throw new JsonSyntaxError(`expected , or } in object, found ${this.found(this.pos - 1)}`, this.pos - 1);
      }
    } else this.pos++;
    this.depth--;
    return map ?? object!;
  }

  private enter(): void {
    if (++this.depth > 512) throw new JsonSyntaxError('JSON nested deeper than 512 levels (PHP’s default)', this.pos);
  }

  space(): void {
    const text = this.text;
    let c = text.charCodeAt(this.pos);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++this.pos);
  }

  found(at = this.pos): string {
    return at >= this.text.length ? 'end of input' : JSON.stringify(this.text[at]);
  }
}

/** A JSON number as PHP's json_decode reads it: an int when it is an integer within int64, else a float. */
function phpNumber(token: string, isFloat: boolean): number | bigint | PhpFloat {
  if (!isFloat) {
    const big = BigInt(token);
    if (isInt64(big)) return big >= -MAX_SAFE && big <= MAX_SAFE ? Number(big) : big;
  }
  return new PhpFloat(Number(token));
}

const CONTROL = /[\u0000-\u001f]/;

/** Undoes `\\` and `\/` alone; undefined when the token has any other escape or a control character. */
function unescapeSimple(text: string, from: number, to: number): string | undefined {
  let out = '';
  let run = from;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20) return undefined;
    if (c !== 92) continue;
    const next = text.charCodeAt(i + 1);
    if (next !== 92 && next !== 47) return undefined;
    out += text.slice(run, i);
    run = i + 1;
    i++;
  }
  return out + text.slice(run, to);
}
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const INTEGER_LIKE = /^(?:0|[1-9][0-9]*)$/;

function isIntegerLike(key: string): boolean {
  const c = key.charCodeAt(0);
  return c >= 48 && c <= 57 && INTEGER_LIKE.test(key);
}
