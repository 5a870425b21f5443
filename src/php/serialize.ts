/**
 * Writes the lossless model back to PHP's serialize() bytes.
 *
 * A value `unserialize` returned comes back byte for byte: back-references keep the slot numbers
 * they were read with. Values built by hand follow PHP's own rules: the same `PhpObject` written
 * twice becomes `r:N;` the second time, numbered the way PHP numbers slots (every value but keys
 * and `R:` takes the next number, from 1).
 */
import { PhpSerializeError } from './errors.js';
import { escapedBytes, hasEscapes } from './escape.js';
import { formatPhpFloat } from './float.js';
import { fromJS } from './js.js';
import { propertyNamesOf, type PropertyNames } from './names.js';
import { HIGH, LOW, halves, int64, isInt64 } from './int64.js';
import {
  PhpArray,
  PhpEnum,
  PhpFloat,
  PhpIncompleteObject,
  PhpObject,
  PhpRef,
  PhpSerializable,
  writtenSpelling,
  type PhpKey,
  type PhpValue,
} from './values.js';

export interface SerializeOptions {
  /** Deepest nesting written before giving up; guards against an array that contains itself. */
  maxDepth?: number;
}

/**
 * Serializes a lossless value. Plain JavaScript is accepted too, converted the way `fromJS`
 * converts it (integers become ints, other numbers floats, arrays lists, objects string-keyed arrays).
 *
 * Like a small `Buffer.allocUnsafe`, the result may be a view of a shared pool: copy it before
 * transferring its `ArrayBuffer` to another thread.
 */
export function serialize(value: unknown, options: SerializeOptions = NO_OPTIONS): Buffer {
  const maxDepth = options.maxDepth ?? 4096;
  // A value that does not fit is written again from the start in a buffer twice the size: rare,
  // and it lets the writer treat its buffer as fixed, which keeps the hot loop tight. A call made
  // while another writes (a getter of plain JavaScript being converted can do that) takes a
  // buffer of its own, so the two never write into the same part of the slab.
  let size = writing > 0 ? SLAB_SIZE * 2 : 0;
  const open = (openLists[writing] ??= []);
  writing++;
  try {
    for (;;) {
      const writer = new Writer(maxDepth, size, open);
      try {
        writer.write(value);
        return writer.finish();
      } catch (error) {
        if (error !== OUT_OF_ROOM) {
          // What a failed write left in the list is let go (a retry writes over all of it).
          open.length = 0;
          throw error;
        }
        size = Math.max(SLAB_SIZE, 2 * writer.capacity);
      }
    }
  } finally {
    writing--;
  }
}

/** How many `serialize` calls are under way: more than one only when a getter calls it. */
let writing = 0;

/**
 * For each level of `writing`, the list of the arrays and objects open around the one being
 * written, each with where it goes on and its kept property names (three slots each). It is
 * kept for the next call at that level: made afresh, these lists were half of what a call
 * allocated.
 */
const openLists: OpenList[] = [];
type OpenList = (PhpArray | number | PropertyNames | undefined)[];

/** Where a writer points its entry lists before any array or object is open: never written to. */
const NO_ENTRIES: never[] = Object.freeze([]) as never[];

/**
 * Results are written straight into a shared slab and handed out as views of their own part of
 * it, the way Node pools small Buffers, so nothing is copied at the end. A value that outgrows
 * the slab is written into a buffer of its own.
 */
const SLAB_SIZE = 1 << 16;
let slab: Buffer = Buffer.allocUnsafe(SLAB_SIZE);
let slabView = viewOf(slab);
let slabUsed = 0;
/** The slab's memory and where the slab starts in it: a Buffer's own getters are slow to ask each time. */
let slabMemory = slab.buffer as ArrayBuffer;
let slabOffset = slab.byteOffset;

function useSlab(buf: Buffer): void {
  slab = buf;
  slabView = viewOf(buf);
  slabUsed = 0;
  slabMemory = buf.buffer as ArrayBuffer;
  slabOffset = buf.byteOffset;
}

/**
 * What serialize hands out from the slab: a Buffer in all but the one link of its prototype
 * chain before Buffer's own. Node's `subarray()` checks its arguments and runs a derived
 * constructor, which costs more here (about 85 ns) than writing a small value; this view costs
 * a third of that. Every Buffer method is reached through the chain, `Buffer.isBuffer` holds,
 * and `constructor` is Buffer, as it is on a Buffer.
 */
class SlabBytes extends Uint8Array {}
Object.setPrototypeOf(SlabBytes.prototype, Buffer.prototype as object);
Object.defineProperty(SlabBytes.prototype, 'constructor', { value: Buffer, writable: true, configurable: true });

const NO_OPTIONS: SerializeOptions = Object.freeze({});

function viewOf(buf: Buffer): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.length);
}

/** What a writer throws when its buffer is full; `serialize` starts over in a bigger one. */
const OUT_OF_ROOM = new Error('serialize: out of room');

/** How many objects after the first a writer looks for in a list before it makes a Map. */
const FEW_OBJECTS = 8;

/** Room enough for any tag, int or length written around a value: `i:-9223372036854775808;` and more. */
const HEAD_ROOM = 32;

/**
 * Writes into one buffer of fixed size. The hot paths (strings, ints, array and object heads)
 * check for room once per token, not once per byte.
 */
class Writer {
  private readonly buf: Buffer;
  /** The same bytes, for writing the words of kept property names (see names.ts). */
  private readonly view: DataView;
  /** The property names of the object `value` or `composite` just opened, for `write` to take. */
  private openedNames: PropertyNames | undefined;
  private readonly start: number;
  private pos: number;
  /** The slot number of the last value written. */
  private slot = 0;
  /**
   * Objects (enum cases by name) written so far, with their slots, so a second sighting becomes
   * `r:N;`. Most values hold one object (the job itself), some a few (a model identifier, a
   * date): the first is kept in two fields, the next few in a list of pairs, and only past
   * those is a Map made, which costs more to make than a short list costs to search.
   */
  private firstObject: object | string | undefined;
  private firstSlot = 0;
  private fewObjects: (object | string | number)[] | undefined;
  private objects: Map<object | string, number> | undefined;

  /** Size 0 writes after the last result in the slab; another size, into a fresh buffer. */
  constructor(
    private readonly maxDepth: number,
    size: number,
    /** The arrays and objects open around the one being written (see openLists). */
    private readonly open: OpenList,
  ) {
    if (size === 0) {
      if (SLAB_SIZE - slabUsed < 1024) useSlab(Buffer.allocUnsafe(SLAB_SIZE));
      this.buf = slab;
      this.view = slabView;
      this.start = slabUsed;
    } else {
      this.buf = Buffer.allocUnsafe(size);
      this.view = viewOf(this.buf);
      this.start = 0;
      // A fresh slab-sized buffer becomes the slab, so what this value leaves of it is not wasted.
      if (size === SLAB_SIZE) useSlab(this.buf);
    }
    this.pos = this.start;
  }

  /** The room this writer had. */
  get capacity(): number {
    return this.buf.length - this.start;
  }

  finish(): Buffer {
    if (this.buf !== slab) return this.buf.subarray(this.start, this.pos);
    const out = new SlabBytes(slabMemory, slabOffset + this.start, this.pos - this.start) as Buffer;
    // Later results go after this one, 8-byte aligned as Node aligns its pool.
    slabUsed = (this.pos + 7) & ~7;
    return out;
  }

  /**
   * Writes a whole value. Arrays and objects are walked with a stack of our own, not recursion,
   * so any depth PHP can read is written without regard to the call stack.
   *
   * What a job is mostly made of (ASCII strings, nulls, ints, array heads) is written
   * here with the buffer and position in locals, one check for room per token; anything else
   * goes through the methods below, with the position handed over and taken back.
   */
  write(root: unknown): void {
    // The entries being written (of an array or object), the next one, and the ones they are inside.
    let current: PhpArray | undefined;
    let keys: PhpKey[] = NO_ENTRIES;
    let values: PhpValue[] = NO_ENTRIES;
    let i = 0;
    // The property names kept for the object being written (undefined for an array).
    let names: PropertyNames | undefined;
    const outer = this.open;
    let top = 0;
    const buf = this.buf;
    const view = this.view;
    let pos = this.pos;
    let value = root;
    for (;;) {
      let entries: PhpArray | undefined;
      if (typeof value === 'string' && pos + value.length + HEAD_ROOM <= buf.length) {
        this.slot++;
        const end = asciiString(buf, pos, value);
        if (end >= 0) pos = end;
        else {
          this.pos = pos;
          this.string(value);
          pos = this.pos;
        }
      } else if (value === null && pos + 2 <= buf.length) {
        this.slot++;
        buf[pos] = 78;
        buf[pos + 1] = 59;
        pos += 2;
      } else if (typeof value === 'number' && Number.isSafeInteger(value) && !Object.is(value, -0) && pos + HEAD_ROOM <= buf.length) {
        this.slot++;
        pos = intAt(buf, pos, value);
      } else if (value instanceof PhpArray && pos + HEAD_ROOM <= buf.length) {
        this.slot++;
        buf[pos] = 97;
        pos = countOpen(buf, pos + 1, value.keys.length);
        entries = value;
      } else {
        this.pos = pos;
        entries = this.value(value);
        pos = this.pos;
      }
      if (entries !== undefined) {
        // Arrays and objects open around this one: as many as are stacked, and the one being written.
        const depth = current === undefined ? 0 : top / 3 + 1;
        if (depth >= this.maxDepth) throw new PhpSerializeError(`nesting deeper than maxDepth ${this.maxDepth} (a cycle?)`, '');
        if (current !== undefined) {
          outer[top++] = current;
          outer[top++] = i;
          outer[top++] = names;
        }
        current = entries;
        keys = entries.keys;
        values = entries.values;
        i = 0;
        names = this.openedNames;
        this.openedNames = undefined;
      }
      // On to the next entry, closing every array or object that has none left.
      while (current !== undefined && i >= keys.length) {
        if (pos >= buf.length) throw OUT_OF_ROOM;
        buf[pos++] = 125;
        if (top === 0) {
          this.pos = pos;
          return;
        }
        names = outer[--top] as PropertyNames | undefined;
        i = outer[--top] as number;
        current = outer[--top] as PhpArray;
        // Nothing of this value stays referenced from the list once written.
        outer[top] = undefined;
        keys = current.keys;
        values = current.values;
      }
      if (current === undefined) {
        this.pos = pos;
        return;
      }
      const at = i++;
      const key = keys[at]!;
      value = values[at];
      if (typeof key === 'string' && pos + key.length + HEAD_ROOM <= buf.length) {
        if (names !== undefined) {
          if (key === names.names[at]) {
            // The entry kept for this name (the padding is written over next).
            copyWords(view, pos, names.words[at]!);
            pos += names.lengths[at]!;
            continue;
          }
          names.learn(at, key);
        }
        const end = asciiString(buf, pos, key);
        if (end >= 0) {
          pos = end;
          continue;
        }
      }
      this.pos = pos;
      if (typeof key === 'string') this.string(key);
      else this.key(key);
      pos = this.pos;
    }
  }

  /** Writes a scalar whole, or the head of an array or object and returns its entries to write. */
  private value(value: unknown): PhpArray | undefined {
    switch (typeof value) {
      case 'string':
        this.slot++;
        this.string(value);
        return;
      case 'number':
        if (Number.isSafeInteger(value) && !Object.is(value, -0)) {
          this.slot++;
          this.int(value);
          return;
        }
        // Any other number as fromJS makes it: an int past 2^53 while it fits 64 bits, else a float.
        return this.value(fromJS(value));
      case 'boolean':
        this.slot++;
        this.scalar(98, value ? '1' : '0');
        return;
      case 'bigint':
        this.slot++;
        this.room(HEAD_ROOM);
        this.pos = bigIntAt(this.buf, this.pos, value);
        return;
      case 'object':
        if (value === null) {
          this.slot++;
          this.pair(78, 59);
          return;
        }
        return this.composite(value);
      case 'undefined':
        this.slot++;
        this.pair(78, 59);
        return;
      default:
        throw new PhpSerializeError(`cannot write a JavaScript ${typeof value} as PHP`, '');
    }
  }

  private composite(value: object): PhpArray | undefined {
    if (value instanceof PhpArray) {
      this.slot++;
      this.head(97, value.keys.length);
      return value;
    } else if (value instanceof PhpObject) {
      if (this.seenObject(value)) return;
      const name = value instanceof PhpIncompleteObject ? value.originalClassName : value.className;
      const names = propertyNamesOf(name);
      const head = names?.head;
      if (head !== undefined) {
        // `O:N:"Class"` as kept, then the count.
        this.room(4 * head.length + HEAD_ROOM);
        copyWords(this.view, this.pos, head);
        this.pos = countOpen(this.buf, this.pos + names!.headLength, value.props.keys.length);
      } else this.head(79, value.props.keys.length, name);
      this.openedNames = names;
      return value.props;
    } else if (value instanceof PhpFloat) {
      this.slot++;
      this.scalar(100, writtenSpelling(value) ?? formatPhpFloat(value.value));
    } else if (value instanceof PhpRef) {
      // `r:` takes a slot number of its own; `R:` shares the one it points at.
      if (value.kind === 'r') this.slot++;
      this.scalar(value.kind === 'r' ? 114 : 82, String(value.index));
    } else if (value instanceof Uint8Array) {
      this.slot++;
      this.byteString(value);
    } else if (value instanceof PhpEnum) {
      // A case is one object in PHP, so its second sighting is `r:N;` however it was built.
      if (this.seenObject(`${value.className}:${value.caseName}`)) return;
      this.tag(69);
      this.quotedName(`${value.className}:${value.caseName}`);
      this.buf[this.pos++] = 59;
    } else if (value instanceof PhpSerializable) {
      if (this.seenObject(value)) return;
      this.tag(67);
      this.quotedName(value.className);
      this.ascii(`:${value.data.length}:{`);
      this.bytes(value.data);
      this.ascii('}');
    } else {
      // Plain JavaScript inside a tree: convert it where it stands.
      return this.value(fromJS(value));
    }
    return undefined;
  }

  /** Counts the object's slot; if it was written before, writes `r:N;` and says so. */
  private seenObject(object: object | string): boolean {
    this.slot++;
    const earlier = this.slotOf(object);
    if (earlier !== undefined) {
      this.scalar(114, String(earlier));
      return true;
    }
    if (this.firstObject === undefined) {
      this.firstObject = object;
      this.firstSlot = this.slot;
    } else if (this.objects === undefined && (this.fewObjects ??= []).length < 2 * FEW_OBJECTS) {
      this.fewObjects.push(object, this.slot);
    } else {
      (this.objects ??= new Map()).set(object, this.slot);
    }
    return false;
  }

  private slotOf(object: object | string): number | undefined {
    if (object === this.firstObject) return this.firstSlot;
    const few = this.fewObjects;
    if (few !== undefined) for (let i = 0; i < few.length; i += 2) if (few[i] === object) return few[i + 1] as number;
    return this.objects?.get(object);
  }

  /** An int key, or a string key that is bytes (string keys take the `string` road). */
  private key(key: Exclude<PhpKey, string>): void {
    if (typeof key === 'number') {
      if (!Number.isSafeInteger(key)) throw new PhpSerializeError(`array key ${key} is not an int`, '');
      this.int(key);
    } else if (typeof key === 'bigint') {
      this.room(HEAD_ROOM);
      this.pos = bigIntAt(this.buf, this.pos, key);
    } else {
      this.byteString(key);
    }
  }

  /** `s:LEN:"bytes";` for a string that is not UTF-8, kept as bytes. */
  private byteString(bytes: Uint8Array): void {
    this.ascii(`s:${bytes.length}:"`);
    this.bytes(bytes);
    this.ascii('";');
  }

  /** `s:LEN:"text";`, LEN counted in bytes as PHP counts it. */
  private string(text: string): void {
    this.tag(115);
    this.quoted(text);
    this.buf[this.pos++] = 59;
  }

  /** `X:`, a tag and its colon. */
  private tag(tag: number): void {
    this.pair(tag, 58);
  }

  private pair(first: number, second: number): void {
    this.room(2);
    this.buf[this.pos] = first;
    this.buf[this.pos + 1] = second;
    this.pos += 2;
  }

  /** `LEN:"text"` and room for one byte after it; LEN counted in bytes as PHP counts it. */
  private quoted(text: string): void {
    this.room(text.length + HEAD_ROOM);
    const end = quotedAt(this.buf, this.pos, text);
    if (end >= 0) this.pos = end;
    else this.text(text);
  }

  /**
   * `LEN:"Name"` for a class or enum name: a name whose bytes are not UTF-8 was read into an
   * escaped spelling (see escape.ts), and is written back as those bytes.
   */
  private quotedName(name: string): void {
    this.room(name.length + HEAD_ROOM);
    const end = quotedAt(this.buf, this.pos, name);
    if (end >= 0) this.pos = end;
    else if (hasEscapes(name)) {
      const bytes = escapedBytes(name);
      this.ascii(`${bytes.length}:"`);
      this.bytes(bytes);
      this.ascii('"');
      this.room(1);
    } else this.text(name);
  }

  /** `i:N;` for a safe integer. */
  private int(n: number): void {
    this.room(HEAD_ROOM);
    this.pos = intAt(this.buf, this.pos, n);
  }

  /** `a:N:{`, or `O:LEN:"Class":N:{`. */
  private head(tag: number, size: number, className?: string): void {
    this.room(1);
    this.buf[this.pos++] = tag;
    if (className !== undefined) {
      this.room(1);
      this.buf[this.pos++] = 58;
      this.quotedName(className);
    }
    this.room(HEAD_ROOM);
    this.pos = countOpen(this.buf, this.pos, size);
  }

  /** `LEN:"text"` for text that is not all ASCII, and room for one byte after it. */
  private text(text: string): void {
    if (text.length < NATIVE_FROM) {
      // Short text is encoded by hand, as short ASCII is copied: Node's two calls (to count the
      // bytes, then to write them) cost here what encoding some forty characters does.
      const bytes = utf8Length(text);
      this.room(bytes + HEAD_ROOM);
      const buf = this.buf;
      const pos = digits(buf, this.pos, bytes);
      buf[pos] = 58;
      buf[pos + 1] = 34;
      const end = utf8At(buf, pos + 2, text);
      buf[end] = 34;
      this.pos = end + 1;
      return;
    }
    const bytes = Buffer.byteLength(text, 'utf8');
    this.ascii(`${bytes}:"`);
    this.room(bytes + 2);
    this.pos += this.buf.write(text, this.pos, bytes, 'utf8');
    this.buf[this.pos++] = 34;
  }

  /** `X:text;`: a tag and the ASCII text of a number or reference, with one check for room. */
  private scalar(tag: number, text: string): void {
    const length = text.length;
    this.room(length + 3);
    const buf = this.buf;
    let pos = this.pos;
    buf[pos++] = tag;
    buf[pos++] = 58;
    for (let i = 0; i < length; i++) buf[pos++] = text.charCodeAt(i);
    buf[pos] = 59;
    this.pos = pos + 1;
  }

  private ascii(text: string): void {
    const length = text.length;
    this.room(length);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < length; i++) buf[pos++] = text.charCodeAt(i);
    this.pos = pos;
  }

  private bytes(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  private room(extra: number): void {
    if (this.pos + extra > this.buf.length) throw OUT_OF_ROOM;
  }
}

/**
 * Writes `s:LEN:"text";` at `pos` when the text is all ASCII and returns the end; returns -1,
 * having written nothing that counts, when it is not. The caller has made room for the text
 * and HEAD_ROOM more.
 */
function asciiString(buf: Buffer, pos: number, text: string): number {
  buf[pos] = 115;
  buf[pos + 1] = 58;
  const end = quotedAt(buf, pos + 2, text);
  if (end < 0) return -1;
  buf[end] = 59;
  return end + 1;
}

/**
 * From this length on a string is copied by Node's writer. Alone, its call costs about what
 * copying 30 characters one by one does here; in the writer's loop it only paid clearly from
 * about 64 (a chained job's serialized command, a mail body), and at 500 it is over 5× faster.
 */
const NATIVE_FROM = 64;

/** Writes `LEN:"text"` at `pos` when the text is all ASCII and returns the end; -1 when it is not. */
function quotedAt(buf: Buffer, pos: number, text: string): number {
  const length = text.length;
  pos = digits(buf, pos, length);
  buf[pos] = 58;
  buf[pos + 1] = 34;
  pos += 2;
  if (length >= NATIVE_FROM && pos + 3 * length + 2 <= buf.length) {
    // Node's writer copies a long string for one call's cost. Given room for any UTF-8 it could
    // make, it writes exactly as many bytes as there are characters only when all are ASCII.
    if (buf.write(text, pos, 3 * length, 'utf8') !== length) return -1;
  } else {
    // Copied by hand, which beats a call into Buffer.write for the short strings of a job.
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) return -1;
      buf[pos + i] = code;
    }
  }
  pos += length;
  buf[pos] = 34;
  return pos + 1;
}

/**
 * The bytes of `text` in UTF-8, as Node counts them: a surrogate without its pair counts as
 * U+FFFD, three bytes, which is what Node writes for it.
 */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code < 0xdc00 && isLowSurrogate(text.charCodeAt(i + 1))) {
      // A pair: two characters, four bytes.
      bytes += 2;
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** Writes `text` as UTF-8 at `pos`, as Node's writer does (see utf8Length); returns the end. */
function utf8At(buf: Buffer, pos: number, text: string): number {
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      buf[pos++] = code;
      continue;
    }
    if (code < 0x800) {
      buf[pos++] = 0xc0 | (code >> 6);
      buf[pos++] = 0x80 | (code & 0x3f);
      continue;
    }
    if (code >= 0xd800 && code < 0xe000) {
      const next = text.charCodeAt(i + 1);
      if (code < 0xdc00 && isLowSurrogate(next)) {
        const point = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        buf[pos++] = 0xf0 | (point >> 18);
        buf[pos++] = 0x80 | ((point >> 12) & 0x3f);
        buf[pos++] = 0x80 | ((point >> 6) & 0x3f);
        buf[pos++] = 0x80 | (point & 0x3f);
        i++;
        continue;
      }
      code = 0xfffd;
    }
    buf[pos++] = 0xe0 | (code >> 12);
    buf[pos++] = 0x80 | ((code >> 6) & 0x3f);
    buf[pos++] = 0x80 | (code & 0x3f);
  }
  return pos;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code < 0xe000;
}

/** Writes `i:N;` for a safe integer at `pos`, with HEAD_ROOM made; returns the end. */
function intAt(buf: Buffer, pos: number, n: number): number {
  buf[pos] = 105;
  buf[pos + 1] = 58;
  pos += 2;
  if (n < 0) {
    buf[pos++] = 45;
    n = -n;
  }
  pos = digits(buf, pos, n);
  buf[pos] = 59;
  return pos + 1;
}

/**
 * Writes `i:N;` for an int beyond 2^53, with HEAD_ROOM made; returns the end. Its two 32-bit
 * halves are read through a typed array, and the digits worked out in doubles: `String()` or
 * `Number()` of a bigint each cost a call into the runtime, several times all of this.
 */
function bigIntAt(buf: Buffer, pos: number, value: bigint): number {
  int64[0] = checkInt(value);
  let high = halves[HIGH]!;
  let low = halves[LOW]!;
  buf[pos] = 105;
  buf[pos + 1] = 58;
  pos += 2;
  if (high >= 0x80000000) {
    // Negative: write the sign, then the magnitude, the two's complement of the halves.
    buf[pos++] = 45;
    high = 0xffffffff - high;
    low = 0x100000000 - low;
    if (low === 0x100000000) {
      low = 0;
      high++;
    }
  }
  // The magnitude is high * 2^32 + low, at most 2^63. Divided by 10^9 (the high half, then
  // sixteen bits at a time), every step stays below 2^53, so each is exact.
  let step = high;
  const q2 = Math.floor(step / 1e9);
  step = (step - q2 * 1e9) * 65536 + (low >>> 16);
  const q1 = Math.floor(step / 1e9);
  step = (step - q1 * 1e9) * 65536 + (low & 0xffff);
  const q0 = Math.floor(step / 1e9);
  let rest = step - q0 * 1e9;
  const quotient = (q2 * 65536 + q1) * 65536 + q0;
  if (quotient === 0) pos = digits(buf, pos, rest);
  else {
    // The last nine digits, zeros included.
    pos = digits(buf, pos, quotient) + 9;
    for (let at = pos - 1; at >= pos - 9; at--) {
      const next = Math.floor(rest / 10);
      buf[at] = 48 + (rest - next * 10);
      rest = next;
    }
  }
  buf[pos] = 59;
  return pos + 1;
}

/** Writes kept words (see names.ts) at `pos`, four bytes at a time, padding included. */
function copyWords(view: DataView, pos: number, words: Int32Array): void {
  for (let w = 0; w < words.length; w++) view.setInt32(pos + 4 * w, words[w]!, true);
}

/** Writes `:N:{`, the count that opens an array or object, with HEAD_ROOM made; returns the end. */
function countOpen(buf: Buffer, pos: number, count: number): number {
  buf[pos] = 58;
  pos = digits(buf, pos + 1, count);
  buf[pos] = 58;
  buf[pos + 1] = 123;
  return pos + 2;
}

/** Writes a non-negative safe integer in decimal at `pos`, without making a string of it; returns the end. */
function digits(buf: Buffer, pos: number, n: number): number {
  if (n < 10) {
    buf[pos] = 48 + n;
    return pos + 1;
  }
  let count = 2;
  for (let bound = 100; n >= bound && count < 16; bound *= 10) count++;
  let end = pos + count;
  // Beyond 2^31 `| 0` would wrap, so only small numbers take the integer division.
  if (n <= 0x7fffffff) {
    while (n >= 10) {
      const rest = (n / 10) | 0;
      buf[--end] = 48 + (n - rest * 10);
      n = rest;
    }
  } else {
    while (n >= 10) {
      const rest = Math.floor(n / 10);
      buf[--end] = 48 + (n - rest * 10);
      n = rest;
    }
  }
  buf[--end] = 48 + n;
  return pos + count;
}

function checkInt(value: bigint): bigint {
  if (!isInt64(value)) throw new PhpSerializeError(`int ${value} is outside PHP's 64-bit range`, '');
  return value;
}
