/**
 * Reads PHP's serialize() format into the lossless model of `values.ts`.
 *
 * One pass over the bytes with an index, no regular expressions on the hot path, no allocation
 * sized by what the input claims: a length or count is only believed once the bytes are there,
 * so time and memory stay linear in the input whatever it says.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { PhpUnserializeError } from './errors.js';
import { escapeBytes } from './escape.js';
import { formatPhpFloat, parsePhpFloat, spellsAsPhp } from './float.js';
import { HIGH, LOW, halves, int64 } from './int64.js';
import { lastPropertyNames, propertyNamesOf, viewOfBuffer, type PropertyNames } from './names.js';
import {
  PhpArray,
  PhpEnum,
  PhpFloat,
  PhpIncompleteObject,
  PhpObject,
  PhpRef,
  PhpSerializable,
  readPhpFloat,
  type PhpKey,
  type PhpValue,
} from './values.js';

export interface UnserializeOptions {
  /** Deepest nesting of arrays and objects accepted. PHP's default `unserialize_max_depth` is 4096. */
  maxDepth?: number;
  /** Largest input accepted, in bytes. */
  maxBytes?: number;
  /** PHP ignores bytes after the first value; here they are an error unless this is true. */
  allowTrailing?: boolean;
  /**
   * Like PHP's `allowed_classes`: `true` (default) allows every class, `false` none, a list only
   * those (compared case-insensitively, as PHP does). A class not allowed is read as PHP reads it,
   * an object of `__PHP_Incomplete_Class`, and written back under its original name.
   */
  allowedClasses?: boolean | readonly string[];
}

export { PhpIncompleteObject };

const DEFAULT_MAX_DEPTH = 4096;

/** An array or object whose entries are still being read. */
interface Frame {
  container: PhpArray | PhpObject;
  keys: PhpKey[];
  values: PhpValue[];
  remaining: number;
  names: PropertyNames | undefined;
}

/** What `item` returns when it opened a container rather than finishing a value. */
const OPENED = Symbol('opened');

export function unserialize(input: string | Uint8Array, options: UnserializeOptions = NO_OPTIONS): PhpValue {
  let bytes: Buffer;
  let text: string | undefined;
  // Whether the input's text (see TEXT_MAX) may be made when the first string is cut from it.
  let textable: boolean;
  if (typeof input === 'string' && input.length <= TEXT_MAX) {
    // A string's bytes are needed only while reading (strings are cut from a text or decoded, C:
    // payloads copied): one reused buffer spares a Buffer per call. An ASCII string is its own text.
    const size = Buffer.byteLength(input, 'utf8');
    bytes = scratchBytes(input, size);
    if (size === input.length) text = input;
    textable = size >= TEXT_MIN && size <= TEXT_MAX;
  } else {
    bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : asBuffer(input);
    textable = bytes.length >= TEXT_MIN && bytes.length <= TEXT_MAX;
  }
  if (options.maxBytes !== undefined && bytes.length > options.maxBytes) {
    throw new PhpUnserializeError(`input of ${bytes.length} bytes is over the limit of ${options.maxBytes}`, 0);
  }
  const reader = new Reader(bytes, options, [], text, false, textable);
  let value: PhpValue;
  try {
    value = reader.value();
  } catch (error) {
    // Only `Serializable` payloads nested in one another are read by recursion (see nestedSlots);
    // a chain of them longer than the call stack allows fails here, with the offset of its first.
    if (error instanceof RangeError && reader.customAt >= 0 && /call stack/i.test(error.message)) {
      throw new PhpUnserializeError('Serializable payloads nested deeper than the call stack allows', reader.customAt);
    }
    throw error;
  }
  if (reader.pos !== bytes.length && !options.allowTrailing) {
    throw new PhpUnserializeError(`expected end of input, found ${reader.describe(reader.pos)}`, reader.pos);
  }
  return value;
}

/**
 * An input's bytes are also kept as a JS string, one character per byte, and its ASCII strings
 * are cut from that: a slice is far cheaper than making a string from bytes. (A string that is
 * not ASCII is decoded from the bytes; a text decoded as UTF-8 would make every slice a two-byte
 * string and need counting to find offsets, and measured slower.) A slice may keep its whole
 * input alive, so only inputs up to this size take that road.
 */
const TEXT_MAX = 1 << 16;
/**
 * Below this size the text is not worth making: checking and copying the input costs more than
 * the one or two short strings such an input can hold, which are copied from the bytes instead.
 */
const TEXT_MIN = 32;
/** A string ending closer than this to the end of its input is decoded alone (see `cut`). */
const TEXT_AFTER = 16;

const NO_OPTIONS: UnserializeOptions = Object.freeze({});
/** Where `value` points its entry lists before any array or object is open: never written to. */
const NO_ENTRIES: never[] = Object.freeze([]) as never[];

/** The bytes of a string input, in one buffer every call reuses (no call runs inside another). */
let scratch = Buffer.allocUnsafe(4096);

/** A string's `size` bytes of UTF-8, in the scratch buffer (written as latin1 when ASCII, which is quicker). */
function scratchBytes(text: string, size: number): Buffer {
  if (scratch.length < size) scratch = Buffer.allocUnsafe(Math.max(size, scratch.length * 2));
  return scratch.subarray(0, scratch.write(text, 0, size, size === text.length ? 'latin1' : 'utf8'));
}

function asBuffer(input: Uint8Array): Buffer {
  return Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
}

// Byte values the reader compares against.
const COLON = 58;
const SEMI = 59;
const QUOTE = 34;
const OPEN = 123;
const CLOSE = 125;
const ZERO = 48;
const NINE = 57;
const MINUS = 45;
const PLUS = 43;
const BACKSLASH = 92;

/** True for the bytes of PHP's float spellings: digits, `+ - . e E`, and the letters of INF and NAN. */
function isFloatByte(byte: number): boolean {
  return (byte >= ZERO && byte <= NINE) || FLOAT_BYTES.includes(byte);
}
const FLOAT_BYTES = [...'+-.eEINFA'].map((c) => c.charCodeAt(0));

/** The value of a hex digit (either case), or -1. */
function hexDigit(byte: number | undefined): number {
  if (byte === undefined) return -1;
  if (byte >= ZERO && byte <= NINE) return byte - ZERO;
  const lower = byte | 0x20;
  return lower >= 97 /* a */ && lower <= 102 /* f */ ? lower - 87 : -1;
}

class Reader {
  pos = 0;
  /** Set on a reader that only tries whether bytes read as serialized values (see nestedSlots). */
  trial = false;
  /** Where the `C:` whose payload is being tried started; -1 when none is. */
  customAt = -1;
  /**
   * In a reader of a `Serializable` payload (see nestedSlots): the one copy made of the outermost
   * payload, and where this reader's bytes start in it. Payloads nested inside are views of that
   * copy, so a chain of them costs one copy, not one per level.
   */
  payloadCopy: Uint8Array | undefined;
  payloadCopyAt = 0;
  /** Arrays and objects open around the current position. */
  private depth = 0;
  /** What `open` last opened: the container, where its entries go, and how many it has. */
  private opened: PhpArray | PhpObject | undefined;
  private openedEntries: PhpArray | undefined;
  private openedCount = 0;
  /** The property names kept for the object opened (see names.ts); undefined for an array. */
  private openedNames: PropertyNames | undefined;
  /** A DataView over the input's whole ArrayBuffer, for comparing it with kept names; made on first need. */
  private dataView: DataView | undefined;
  /** Where the input starts in that ArrayBuffer (a Buffer's own getter is slow to ask each time). */
  private byteOffset = 0;
  private readonly maxDepth: number;
  private readonly allowed: ((className: string) => boolean) | undefined;

  constructor(
    private readonly buf: Buffer,
    private readonly options: UnserializeOptions,
    /** Every value read so far, by PHP's slot number minus one: what `r:` and `R:` point into. */
    private readonly slots: PhpValue[],
    /** The input's bytes as a string, one character per byte (latin1); made when first needed. */
    private text: string | undefined,
    /** True when the input is not all ASCII: then only a cut that is ASCII may come from the text. */
    private mixed: boolean,
    /** True when the text is not made yet and may be: the input is within TEXT_MIN to TEXT_MAX. */
    private textable: boolean,
  ) {
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    const allowed = options.allowedClasses;
    if (allowed === false) this.allowed = () => false;
    else if (Array.isArray(allowed)) {
      const names = new Set((allowed as readonly string[]).map((name) => name.toLowerCase()));
      this.allowed = (className) => names.has(className.toLowerCase());
    }
  }

  /**
   * Reads one whole value. Arrays and objects are walked with a stack of our own rather than by
   * recursion, so nesting as deep as PHP allows never depends on the size of the call stack.
   * The innermost open array or object lives in locals; only the ones around it are stacked.
   */
  value(): PhpValue {
    let container: PhpArray | PhpObject | undefined;
    let keys: PhpKey[] = NO_ENTRIES;
    let values: PhpValue[] = NO_ENTRIES;
    let remaining = 0;
    let names: PropertyNames | undefined;
    // Made when a second container opens inside the first: most values never need it.
    let outer: Frame[] | undefined;
    for (;;) {
      let value = this.item();
      if (value === OPENED) {
        if (container !== undefined) (outer ??= []).push({ container, keys, values, remaining, names });
        container = this.opened!;
        keys = this.openedEntries!.keys;
        values = this.openedEntries!.values;
        remaining = this.openedCount;
        names = this.openedNames;
        this.depth++;
        keys.push(this.key(names, 0));
        continue;
      }
      // A value is done: it fills the innermost open container; a container done fills the next.
      for (;;) {
        if (container === undefined) return value;
        values.push(value);
        if (--remaining > 0) {
          keys.push(this.key(names, keys.length));
          break;
        }
        this.expectAt(CLOSE);
        this.depth--;
        value = container;
        const frame = outer?.pop();
        if (frame === undefined) container = undefined;
        else ({ container, keys, values, remaining, names } = frame);
      }
    }
  }

  /** Reads a scalar (or `C:`, `E:`, `r:`, `R:`), or opens an array or object and returns OPENED. */
  private item(): PhpValue | typeof OPENED {
    const buf = this.buf;
    const start = this.pos;
    const tag = buf[start];
    if (tag === 78 /* N */) {
      this.expect(start + 1, SEMI);
      this.pos = start + 2;
      this.slots.push(null);
      return null;
    }
    if (buf[start + 1] !== COLON) {
      if (tag === undefined) throw this.fail('expected a value', start);
      if (!isTag(tag)) throw this.fail('expected a value (one of N b i d s S a O C E r R)', start);
      this.expect(start + 1, COLON);
    }
    this.pos = start + 2;
    switch (tag) {
      case 115 /* s */: {
        const value = this.stringEntry();
        this.slots.push(value);
        return value;
      }
      case 105 /* i */: {
        const value = this.int(SEMI);
        this.slots.push(value);
        return value;
      }
      case 98 /* b */: {
        const digit = buf[this.pos];
        if (digit !== ZERO && digit !== ZERO + 1) throw this.fail('expected 0 or 1 after b:', this.pos);
        this.pos++;
        this.expectSemicolon();
        const value = digit === ZERO + 1;
        this.slots.push(value);
        return value;
      }
      case 100 /* d */: {
        const value = this.float();
        this.slots.push(value);
        return value;
      }
      case 97 /* a */: {
        const count = this.count(COLON);
        const array = new PhpArray();
        this.openedNames = undefined;
        return this.open(array, array, count);
      }
      case 79 /* O */: {
        // The class read last comes again more often than not: its kept head, if the input has
        // it, spares reading the name (and it was checked when first read, or is checked now).
        const last = lastPropertyNames();
        let className: string;
        if (last?.head !== undefined && this.isEntry(last.head, last.headLength, start) && validClassNames.has(last.className)) {
          this.pos = start + last.headLength;
          className = last.className;
        } else className = this.className(start);
        this.expectAt(COLON);
        const count = this.count(COLON);
        const props = new PhpArray();
        const object =
          this.allowed && !this.allowed(className) ? new PhpIncompleteObject(className, props) : new PhpObject(className, props);
        this.openedNames = propertyNamesOf(className);
        return this.open(object, props, count);
      }
      case 83 /* S */: {
        const value = this.escapedString();
        this.slots.push(value);
        return value;
      }
      case 67 /* C */:
        return this.custom();
      case 69 /* E */:
        return this.enumCase();
      case 114 /* r */:
      case 82 /* R */:
        return this.reference(tag === 114 ? 'r' : 'R', start);
      default:
        throw this.fail('expected a value (one of N b i d s S a O C E r R)', start);
    }
  }

  /**
   * `{` of an array or object: an empty one is done at once; any other is handed to `value` (in
   * the `opened` fields) to fill.
   */
  private open(container: PhpArray | PhpObject, entries: PhpArray, count: number): PhpValue | typeof OPENED {
    this.expectAt(OPEN);
    if (this.depth >= this.maxDepth) throw this.fail(`nesting deeper than maxDepth ${this.maxDepth}`, this.pos);
    this.slots.push(container);
    if (count === 0) {
      this.expectAt(CLOSE);
      return container;
    }
    this.opened = container;
    this.openedEntries = entries;
    this.openedCount = count;
    return OPENED;
  }

  private custom(): PhpSerializable {
    const start = this.pos - 2;
    const className = this.className(start);
    this.expectAt(COLON);
    const length = this.count(COLON);
    this.expectAt(OPEN);
    const from = this.pos;
    if (length > this.buf.length - from) throw this.fail(`payload of ${length} bytes runs past the end of input`, from);
    this.pos = from + length;
    this.expectAt(CLOSE);
    const value = new PhpSerializable(className, this.payload(from, from + length));
    this.slots.push(value);
    const outer = this.customAt;
    if (outer < 0) this.customAt = start;
    this.nestedSlots(from, from + length, value.data);
    this.customAt = outer;
    return value;
  }

  /**
   * A payload's bytes, kept apart from the input (which may be a buffer the next call reuses):
   * a copy for an outermost payload, a view of that copy for one nested inside it.
   */
  private payload(from: number, to: number): Uint8Array {
    const copy = this.payloadCopy;
    if (copy === undefined) return new Uint8Array(this.buf.subarray(from, to));
    return copy.subarray(this.payloadCopyAt + from, this.payloadCopyAt + to);
  }

  /**
   * A `Serializable` class that calls serialize() inside its own serialize() shares PHP's slot
   * numbering with the outer value: what its payload holds takes numbers, and later `r:`/`R:`
   * may point into it. When the payload reads as serialized values from end to end, count them
   * as PHP would; otherwise it is the class's own format and takes no numbers.
   */
  private nestedSlots(from: number, to: number, data: Uint8Array): void {
    const first = this.buf[from];
    if (from === to || first === undefined || !isTag(first)) return;
    const mark = this.slots.length;
    // One text for the whole input, sliced for each payload: made per payload, a chain of them
    // would make it once per level.
    if (this.text === undefined && this.textable) this.makeText();
    const nested = new Reader(this.buf.subarray(from, to), this.options, this.slots, this.text?.slice(from, to), this.mixed, false);
    nested.trial = true;
    nested.payloadCopy = this.payloadCopy ?? data;
    nested.payloadCopyAt = this.payloadCopy === undefined ? 0 : this.payloadCopyAt + from;
    try {
      while (nested.pos < to - from) nested.value();
    } catch (error) {
      if (!(error instanceof PhpUnserializeError)) throw error;
      this.slots.length = mark;
    }
  }

  private enumCase(): PhpEnum {
    const at = this.pos;
    const name = nameText(this.string());
    this.expectSemicolon();
    const colon = name.indexOf(':');
    if (colon < 1 || colon === name.length - 1) throw this.fail(`expected Class:Case in enum, found "${name}"`, at);
    const value = new PhpEnum(name.slice(0, colon), name.slice(colon + 1));
    this.slots.push(value);
    return value;
  }

  private reference(kind: 'r' | 'R', start: number): PhpRef {
    // Bounded by the slots, not by the input: a payload read on its own may point far outside itself.
    const index = this.count(SEMI, Number.MAX_SAFE_INTEGER);
    // PHP names a reference that points nowhere, or at what it may not, just past the `;`.
    const end = this.pos;
    const target = index >= 1 && index <= this.slots.length ? this.slots[index - 1] : undefined;
    if (target === undefined) throw this.fail(`${kind}:${index} at byte ${start} names no value read so far`, end);
    if (kind === 'r' && !isObject(target)) throw this.fail(`r:${index} at byte ${start} names a value that is not an object`, end);
    // `r:` takes a slot number of its own; `R:` shares the one it points at.
    if (kind === 'r') this.slots.push(target);
    return new PhpRef(kind, index, target);
  }

  /**
   * An array key, or the property name at place `index` of an object whose class's kept names
   * are `names` (see names.ts): only `i:` and `s:` are allowed there.
   */
  private key(names: PropertyNames | undefined, index: number): PhpKey {
    const buf = this.buf;
    const at = this.pos;
    if (names !== undefined && index < names.names.length && this.isEntry(names.words[index]!, names.lengths[index]!, at)) {
      this.pos = at + names.lengths[index]!;
      return names.names[index]!;
    }
    const tag = buf[at];
    if (buf[at + 1] === COLON) {
      this.pos = at + 2;
      if (tag === 115 /* s */) {
        const name = this.stringEntry();
        if (names !== undefined && typeof name === 'string') names.learn(index, name);
        return name;
      }
      if (tag === 105 /* i */) return this.int(SEMI);
      if (tag === 83 /* S */) return this.escapedString();
    }
    throw this.fail('expected a key (i: or s:)', at);
  }

  /** True when the input at `at` holds the kept entry of `length` bytes given as `words`. */
  private isEntry(words: Int32Array, length: number, at: number): boolean {
    const buf = this.buf;
    // The last word is read whole and masked: it must lie inside the input.
    if (at + 4 * words.length > buf.length) return false;
    let view = this.dataView;
    if (view === undefined) {
      view = this.dataView = viewOfBuffer(buf.buffer);
      this.byteOffset = buf.byteOffset;
    }
    const from = this.byteOffset + at;
    const full = length >> 2;
    for (let w = 0; w < full; w++) if (view.getInt32(from + 4 * w, true) !== words[w]) return false;
    const rest = length & 3;
    return rest === 0 || (view.getInt32(from + 4 * full, true) & ((1 << (8 * rest)) - 1)) === words[full];
  }

  /**
   * `LEN:"bytes"` after `s:`; the closing `;` is the caller's. `shared` asks for the one string
   * kept for these bytes (see decodeText) rather than a fresh slice, for names that repeat.
   */
  private string(shared = false): string | Uint8Array {
    const buf = this.buf;
    const length = this.count(COLON);
    this.expectAt(QUOTE);
    const from = this.pos;
    const to = from + length;
    if (length > buf.length - from) throw this.fail(`string of ${length} bytes runs past the end of input`, from);
    this.pos = to;
    this.expectAt(QUOTE);
    return shared ? decodeText(buf, from, to) : this.cut(from, to);
  }

  /**
   * `LEN:"bytes";` after `s:`, semicolon included: the commonest thing in a job, read in one go.
   * Anything out of the ordinary is read again by `string`, which says what is wrong and where.
   */
  private stringEntry(): string | Uint8Array {
    const buf = this.buf;
    const start = this.pos;
    const length = this.count(COLON);
    const from = this.pos + 1;
    const to = from + length;
    if (buf[from - 1] === QUOTE && length <= buf.length - from && buf[to] === QUOTE && buf[to + 1] === SEMI) {
      this.pos = to + 2;
      return this.cut(from, to);
    }
    this.pos = start;
    const value = this.string();
    this.expectSemicolon();
    return value;
  }

  /**
   * `LEN:"bytes";` after `S:`: the escaped string PHP 6 builds wrote, which PHP 8 still reads.
   * A backslash and two hex digits stand for one byte, and LEN counts the bytes meant. Like PHP,
   * `serialize` writes the string back as `s:`.
   */
  private escapedString(): string | Uint8Array {
    const buf = this.buf;
    // At most one byte meant per byte written: the count is bounded by the input, as is the copy.
    const length = this.count(COLON);
    this.expectAt(QUOTE);
    const bytes = Buffer.allocUnsafe(length);
    let pos = this.pos;
    for (let i = 0; i < length; i++) {
      let byte = buf[pos];
      if (byte === undefined) throw this.fail(`escaped string of ${length} bytes runs past the end of input`, pos);
      if (byte === BACKSLASH) {
        const high = hexDigit(buf[pos + 1]);
        const low = hexDigit(buf[pos + 2]);
        if (high < 0 || low < 0)
          throw this.fail(`expected two hex digits after '\\', found ${this.describe(high < 0 ? pos + 1 : pos + 2)}`, pos);
        byte = high * 16 + low;
        pos += 2;
      }
      bytes[i] = byte;
      pos++;
    }
    this.pos = pos;
    this.expectAt(QUOTE);
    this.expectSemicolon();
    return decodeText(bytes, 0, length);
  }

  /** The string between two offsets: a slice of the text when it is ASCII, else decoded. */
  private cut(from: number, to: number): string | Uint8Array {
    let text = this.text;
    if (text === undefined) {
      // The text costs about what decoding three strings does: it is made only when more than
      // a short string may follow this one. A value of one string, or of none, never makes it.
      if (!this.textable || this.buf.length - to < TEXT_AFTER) return decodeText(this.buf, from, to);
      text = this.makeText();
    }
    if (this.mixed && !isAsciiRun(this.buf, from, to)) return decodeUtf8(this.buf, from, to);
    return text.slice(from, to);
  }

  private makeText(): string {
    const buf = this.buf;
    this.textable = false;
    this.mixed = !isAscii(buf);
    return (this.text = latin1(buf, 0, buf.length));
  }

  /** Bytes known to be ASCII (digits, a float's spelling) as a string. */
  private asciiText(from: number, to: number): string {
    return this.text !== undefined ? this.text.slice(from, to) : latin1(this.buf, from, to);
  }

  /** The class name of the `O:` or `C:` at `start`; PHP names an empty one where its length is, any other bad one at `start`. */
  private className(start: number): string {
    const at = this.pos;
    // The same string object each time makes the check below a quick lookup.
    const name = nameText(this.string(true));
    if (validClassNames.has(name)) return name;
    if (!CLASS_NAME.test(name)) throw this.fail(`expected a class name, found ${JSON.stringify(name)}`, name === '' ? at : start);
    if (validClassNames.size > 10_000) validClassNames.clear();
    validClassNames.add(name);
    return name;
  }

  /** An int up to `terminator`: a number when safe, a bigint beyond, an error outside 64 bits. */
  private int(terminator: number): number | bigint {
    const buf = this.buf;
    const start = this.pos;
    let pos = start;
    const sign = buf[pos];
    if (sign === MINUS || sign === PLUS) pos++;
    const digitsFrom = pos;
    let n = 0;
    let c = buf[pos];
    while (c !== undefined && c >= ZERO && c <= NINE) {
      n = n * 10 + (c - ZERO);
      c = buf[++pos];
    }
    if (pos === digitsFrom) throw this.fail(`expected digits, found ${this.describe(pos)}`, pos);
    if (c !== terminator) throw this.fail(`expected '${String.fromCharCode(terminator)}', found ${this.describe(pos)}`, pos);
    this.pos = pos + 1;
    // Up to 2^53 every step above was exact; past it the double has rounded, but stays past it.
    if (n <= Number.MAX_SAFE_INTEGER) return sign === MINUS ? 0 - n : n;
    const big = int64FromDigits(buf, digitsFrom, pos, sign === MINUS);
    if (big === undefined) throw this.fail('int out of the 64-bit range', start);
    return big;
  }

  private float(): PhpFloat {
    const plain = this.plainFloat();
    if (plain !== undefined) return new PhpFloat(plain);
    const buf = this.buf;
    const start = this.pos;
    // PHP reads digits without limit (`d:0.000…1;` is a float), so the scan stops only at a
    // byte no float spelling holds: it never runs past the float, and never twice over the input.
    let end = start;
    while (end < buf.length && isFloatByte(buf[end]!)) end++;
    if (buf[end] !== SEMI) throw this.fail(`expected a float ending in ;, found ${this.describe(end)}`, start);
    const text = this.asciiText(start, end);
    this.pos = end + 1;
    // Between 1e-4 and 1e17 JavaScript and PHP spell a float alike: text that reads back as
    // itself there is PHP's own spelling, and needs no other check.
    const quick = Number(text);
    const size = Math.abs(quick);
    if (size >= 1e-4 && size < 1e17 && String(quick) === text) return readPhpFloat(quick, text);
    // Elsewhere, text that is PHP's own spelling of the number it reads as is valid as it stands.
    if (quick === quick && spellsAsPhp(text, quick)) return readPhpFloat(quick, text);
    const value = parsePhpFloat(text);
    if (value === undefined) throw this.fail(`expected a float, found "${text.slice(0, 40)}"`, start);
    return formatPhpFloat(value) === text ? readPhpFloat(value, text) : new PhpFloat(value, text);
  }

  /**
   * The commonest float, read straight from the bytes: PHP's plain spelling of a number between
   * 1e-4 and 1e15 with at most 15 significant digits (`0.5`, `-12.25`, `1700000000`, `0.0001`).
   * Such digits, as an integer m below 2^53, and a power of ten up to 10^22 are both exact, so
   * m / 10^k is the correctly rounded double. And 15 digits always come back from a double as
   * they went in, so digits with no trailing zero are the shortest that PHP writes. Anything else
   * returns undefined, with nothing consumed, and is read the careful way.
   */
  private plainFloat(): number | undefined {
    const buf = this.buf;
    let pos = this.pos;
    const negative = buf[pos] === MINUS;
    if (negative) pos++;
    let c = buf[pos];
    // A leading zero is PHP's only when it stands alone before the point.
    if (c === ZERO && buf[pos + 1] !== 46 /* . */) return undefined;
    let m = 0;
    let significant = 0;
    const digitsFrom = pos;
    while (c !== undefined && c >= ZERO && c <= NINE) {
      m = m * 10 + (c - ZERO);
      if (m !== 0) significant++;
      c = buf[++pos];
    }
    if (pos === digitsFrom) return undefined;
    let scale = 1;
    if (c === 46 /* . */) {
      const fractionFrom = ++pos;
      c = buf[pos];
      while (c !== undefined && c >= ZERO && c <= NINE) {
        m = m * 10 + (c - ZERO);
        if (m !== 0) significant++;
        scale *= 10;
        c = buf[++pos];
      }
      if (pos === fractionFrom || buf[pos - 1] === ZERO) return undefined;
    }
    if (c !== SEMI || significant > 15 || scale > 1e22) return undefined;
    // 15 digits keep it under 1e15; below 1e-4 PHP writes an exponent.
    const size = m / scale;
    if (size < 1e-4) return undefined;
    this.pos = pos + 1;
    return negative ? -size : size;
  }

  /** An unsigned count or length up to `terminator`, never more than the input could hold (or `most`). */
  private count(terminator: number, most = this.buf.length): number {
    const buf = this.buf;
    let pos = this.pos;
    const from = pos;
    let n = 0;
    let c = buf[pos];
    while (c !== undefined && c >= ZERO && c <= NINE) {
      n = n * 10 + (c - ZERO);
      c = buf[++pos];
    }
    if (pos === from) throw this.fail(`expected a number, found ${this.describe(pos)}`, pos);
    if (c !== terminator) throw this.fail(`expected '${String.fromCharCode(terminator)}', found ${this.describe(pos)}`, pos);
    if (n > most) throw this.fail(`count ${n > 1e15 ? 'of ' + (pos - from) + ' digits' : n} is more than the input could hold`, from);
    this.pos = pos + 1;
    return n;
  }

  private expectSemicolon(): void {
    this.expectAt(SEMI);
  }

  private expectAt(byte: number): void {
    if (this.buf[this.pos] !== byte) {
      throw this.fail(`expected '${String.fromCharCode(byte)}', found ${this.describe(this.pos)}`, this.pos);
    }
    this.pos++;
  }

  private expect(at: number, byte: number): void {
    if (this.buf[at] !== byte) throw this.fail(`expected '${String.fromCharCode(byte)}', found ${this.describe(at)}`, at);
  }

  describe(at: number): string {
    const byte = this.buf[at];
    if (byte === undefined) return 'end of input';
    return byte >= 32 && byte < 127 ? `'${String.fromCharCode(byte)}'` : `byte 0x${byte.toString(16).padStart(2, '0')}`;
  }

  private fail(message: string, at: number): PhpUnserializeError {
    // A trial read is expected to fail often, and its error is never seen: spare the stack trace.
    return this.trial ? TRIAL_FAILED : new PhpUnserializeError(message, at);
  }
}

/** What a trial read fails with: made once, since nobody sees it. */
const TRIAL_FAILED = new PhpUnserializeError('not serialized values', 0);

function isTag(byte: number): boolean {
  return TAGS.includes(byte);
}
const TAGS = [...'NbidsSaOCErR'].map((c) => c.charCodeAt(0));

function isObject(value: PhpValue): boolean {
  return value instanceof PhpObject || value instanceof PhpSerializable || value instanceof PhpEnum;
}

/**
 * A class or enum name as the model keeps it: a string, whose bytes, when they are not UTF-8,
 * are spelled as escape.ts says (PHP allows bytes 0x80 to 0xff in names, Latin-1 ones included).
 */
function nameText(name: string | Uint8Array): string {
  return typeof name === 'string' ? name : escapeBytes(name);
}

/**
 * PHP's rule for class names in serialized input: namespaces (but not a leading separator, which
 * PHP refuses), and any byte from 0x80 (escaped or not).
 */
const CLASS_NAME = /^(?:[A-Za-z0-9_]|[^\x00-\x7f])(?:[A-Za-z0-9_\\]|[^\x00-\x7f])*$/;
/** Names already checked: a queue sees the same few classes again and again. */
const validClassNames = new Set<string>();

/**
 * PHP strings are bytes. Bytes that are UTF-8 become a JS string (ASCII takes the quick road);
 * anything else stays bytes, copied so the value does not pin the whole input in memory.
 */
export function decodeText(buf: Buffer, from: number, to: number): string | Uint8Array {
  const length = to - from;
  if (length <= MAX_INTERNED) {
    // Job payloads repeat the same short names (properties, classes) over and over: hashing the
    // bytes while checking they are ASCII lets a repeat reuse the string made last time.
    let hash = length;
    let i = from;
    for (; i < to; i++) {
      const byte = buf[i]!;
      if (byte >= 0x80) break;
      hash = (Math.imul(hash, 31) + byte) | 0;
    }
    if (i === to) {
      const slot = hash & (INTERNED_SLOTS - 1);
      const bytes = internedBytes[slot]!;
      if (bytes.length === length) {
        let j = 0;
        while (j < length && bytes[j] === buf[from + j]) j++;
        if (j === length) return interned[slot]!;
      }
      internedBytes[slot] = new Uint8Array(buf.subarray(from, to));
      return (interned[slot] = latin1(buf, from, to));
    }
  } else if (isAsciiRun(buf, from, to)) {
    return latin1(buf, from, to);
  }
  return decodeUtf8(buf, from, to);
}

/**
 * Decimal digits (more than 15 of them, as only ints past 2^53 come here) as an int64; undefined
 * beyond PHP's 64-bit range. The value is upper × 10^9 + lower, and both parts, and every step
 * that puts them into two 32-bit halves, stay exact in doubles.
 */
function int64FromDigits(buf: Buffer, from: number, to: number, negative: boolean): bigint | undefined {
  const split = to - 9;
  let upper = 0;
  for (let i = from; i < split; i++) {
    upper = upper * 10 + (buf[i]! - ZERO);
    if (upper > 9223372036) return undefined;
  }
  let lower = 0;
  for (let i = split; i < to; i++) lower = lower * 10 + (buf[i]! - ZERO);
  // 2^63 is 9223372036 854775808: the most a negative int may reach, one past a positive one.
  if (upper === 9223372036 && lower > (negative ? 854775808 : 854775807)) return undefined;
  // upper = upperHigh × 2^16 + upperLow, so that each product below stays under 2^53.
  const upperLow = upper % 65536;
  const upperHigh = (upper - upperLow) / 65536;
  const near = upperLow * 1e9 + lower;
  const far = upperHigh * 1e9;
  const farLow = far % 65536;
  const lowSum = (near % 0x100000000) + farLow * 65536;
  const low = lowSum % 0x100000000;
  const high = Math.floor(near / 0x100000000) + (far - farLow) / 65536 + (lowSum - low) / 0x100000000;
  if (negative) {
    // Two's complement: the typed array keeps each half modulo 2^32.
    halves[LOW] = -low;
    halves[HIGH] = low === 0 ? -high : ~high;
  } else {
    halves[LOW] = low;
    halves[HIGH] = high;
  }
  return int64[0];
}

function isAsciiRun(buf: Buffer, from: number, to: number): boolean {
  let i = from;
  while (i < to && buf[i]! < 0x80) i++;
  return i === to;
}

/** Bytes that are not all ASCII: a string when they are UTF-8, else a copy of the bytes. */
function decodeUtf8(buf: Buffer, from: number, to: number): string | Uint8Array {
  if (to - from <= SHORT_UTF8_MAX) {
    const short = shortUtf8(buf, from, to);
    if (short !== undefined) return short;
  }
  // Invalid UTF-8 always decodes with a U+FFFD in place of the bad bytes, so text without one
  // was valid; text with one may have had it in the input, and is checked the long way.
  const text = utf8(buf, from, to);
  if (text.indexOf('\ufffd') < 0) return text;
  const view = buf.subarray(from, to);
  return isUtf8(view) ? text : new Uint8Array(view);
}

/**
 * Up to this many bytes, UTF-8 is decoded here: Node's decoder costs a call into C++ that takes
 * as long here as decoding some twenty bytes by hand. Longer strings are Node's.
 */
const SHORT_UTF8_MAX = 24;

/**
 * Short UTF-8 as a string, or undefined when the bytes are not valid UTF-8 (overlong forms,
 * surrogates, past U+10FFFF, cut short): then the caller's careful road decides, as for long text.
 */
function shortUtf8(buf: Buffer, from: number, to: number): string | undefined {
  let text = '';
  let i = from;
  while (i < to) {
    const lead = buf[i]!;
    if (lead < 0x80) {
      text += String.fromCharCode(lead);
      i++;
      continue;
    }
    // How many continuation bytes follow, and the least code point that many may spell.
    let more: number;
    let code: number;
    let least: number;
    if (lead >= 0xc2 && lead < 0xe0) {
      more = 1;
      code = lead & 0x1f;
      least = 0x80;
    } else if (lead >= 0xe0 && lead < 0xf0) {
      more = 2;
      code = lead & 0x0f;
      least = 0x800;
    } else if (lead >= 0xf0 && lead < 0xf5) {
      more = 3;
      code = lead & 0x07;
      least = 0x10000;
    } else return undefined;
    if (i + more >= to) return undefined;
    for (let k = 1; k <= more; k++) {
      const next = buf[i + k]!;
      if ((next & 0xc0) !== 0x80) return undefined;
      code = (code << 6) | (next & 0x3f);
    }
    if (code < least || code > 0x10ffff || (code >= 0xd800 && code < 0xe000)) return undefined;
    text += code < 0x10000 ? String.fromCharCode(code) : String.fromCharCode(0xd7c0 + (code >> 10), 0xdc00 + (code & 0x3ff));
    i += more + 1;
  }
  return text;
}

const MAX_INTERNED = 40;
const INTERNED_SLOTS = 2048;
const interned: string[] = new Array<string>(INTERNED_SLOTS).fill('');
/** The bytes of each interned string, compared faster than the string's own characters. */
const internedBytes: Uint8Array[] = new Array<Uint8Array>(INTERNED_SLOTS).fill(new Uint8Array(0));

/** Node's own UTF-8 slicer, skipping `toString`'s argument handling. */
const utf8: (buf: Buffer, from: number, to: number) => string =
  typeof (Buffer.prototype as { utf8Slice?: unknown }).utf8Slice === 'function'
    ? (buf, from, to) => (buf as unknown as { utf8Slice(from: number, to: number): string }).utf8Slice(from, to)
    : (buf, from, to) => buf.toString('utf8', from, to);

/** Node's own latin1 slicer skips `toString`'s argument handling; ASCII reads the same in latin1. */
const latin1: (buf: Buffer, from: number, to: number) => string =
  typeof (Buffer.prototype as { latin1Slice?: unknown }).latin1Slice === 'function'
    ? (buf, from, to) => (buf as unknown as { latin1Slice(from: number, to: number): string }).latin1Slice(from, to)
    : (buf, from, to) => buf.toString('latin1', from, to);
