/**
 * Writes the lossless model back to PHP's serialize() bytes.
 *
 * A value `unserialize` returned comes back byte for byte: back-references keep the slot numbers
 * they were read with. Values built by hand follow PHP's own rules: the same `PhpObject` written
 * twice becomes `r:N;` the second time, numbered the way PHP numbers slots (every value but keys
 * and `R:` takes the next number, from 1).
 */
import { PhpSerializeError } from './errors.js';
import { formatPhpFloat } from './float.js';
import { fromJS } from './js.js';
import { PhpArray, PhpEnum, PhpFloat, PhpObject, PhpRef, PhpSerializable, type PhpKey } from './values.js';

export interface SerializeOptions {
  /** Deepest nesting written before giving up; guards against an array that contains itself. */
  maxDepth?: number;
}

/**
 * Serializes a lossless value. Plain JavaScript is accepted too, converted the way `fromJS`
 * converts it (integers become ints, other numbers floats, arrays lists, objects string-keyed arrays).
 */
export function serialize(value: unknown, options: SerializeOptions = {}): Buffer {
  const writer = new Writer(options.maxDepth ?? 4096);
  writer.write(value);
  return writer.finish();
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/** One scratch buffer for every call: a call copies out only what it wrote. */
let scratch = Buffer.allocUnsafe(1 << 16);

class Writer {
  private buf = scratch;
  private pos = 0;
  /** The slot number of the last value written. */
  private slot = 0;
  /** Objects (enum cases by name) written so far, by slot, so a second sighting becomes `r:N;`. Made on first need. */
  private objects: Map<object | string, number> | undefined;
  private firstObject: object | string | undefined;
  private firstSlot = 0;

  constructor(private readonly maxDepth: number) {}

  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    // Keep a grown buffer for next time, unless it grew past what is worth holding on to.
    if (this.buf.length <= 1 << 22) scratch = this.buf;
    return out;
  }

  /**
   * Writes a whole value. Arrays and objects are walked with a stack of our own, not recursion,
   * so any depth PHP can read is written without regard to the call stack.
   */
  write(root: unknown): void {
    const open: { entries: PhpArray; next: number }[] = [];
    let entries = this.value(root);
    for (;;) {
      if (entries !== undefined) {
        open.push({ entries, next: 0 });
        if (open.length > this.maxDepth) throw new PhpSerializeError(`nesting deeper than maxDepth ${this.maxDepth} (a cycle?)`, '');
      }
      const frame = open[open.length - 1];
      if (frame === undefined) return;
      if (frame.next === frame.entries.size) {
        this.byte(125);
        open.pop();
        entries = undefined;
        continue;
      }
      const i = frame.next++;
      this.key(frame.entries.keys[i]!);
      entries = this.value(frame.entries.values[i]);
    }
  }

  /** Writes a scalar whole, or the head of an array or object and returns its entries to write. */
  private value(value: unknown): PhpArray | undefined {
    switch (typeof value) {
      case 'string':
        this.slot++;
        this.two(115, 58);
        this.text(value);
        this.byte(59);
        return;
      case 'number':
        this.slot++;
        if (Number.isSafeInteger(value) && !Object.is(value, -0)) {
          this.two(105, 58);
          this.int(value);
          this.byte(59);
        } else this.ascii(`d:${formatPhpFloat(value)};`);
        return;
      case 'boolean':
        this.slot++;
        this.ascii(value ? 'b:1;' : 'b:0;');
        return;
      case 'bigint':
        this.slot++;
        this.ascii(`i:${checkInt(value)};`);
        return;
      case 'object':
        if (value === null) {
          this.slot++;
          this.two(78, 59);
          return;
        }
        return this.composite(value);
      case 'undefined':
        this.slot++;
        this.two(78, 59);
        return;
      default:
        throw new PhpSerializeError(`cannot write a JavaScript ${typeof value} as PHP`, '');
    }
  }

  private composite(value: object): PhpArray | undefined {
    if (value instanceof PhpFloat) {
      this.slot++;
      this.ascii(`d:${value.source ?? formatPhpFloat(value.value)};`);
    } else if (value instanceof PhpArray) {
      this.slot++;
      this.two(97, 58);
      this.int(value.size);
      this.two(58, 123);
      return value;
    } else if (value instanceof PhpObject) {
      if (this.seenObject(value)) return;
      this.two(79, 58);
      this.text(value.className);
      this.byte(58);
      this.int(value.props.size);
      this.two(58, 123);
      return value.props;
    } else if (value instanceof PhpRef) {
      // `r:` takes a slot number of its own; `R:` shares the one it points at.
      if (value.kind === 'r') this.slot++;
      this.ascii(`${value.kind}:${value.index};`);
    } else if (value instanceof Uint8Array) {
      this.slot++;
      this.ascii('s:');
      this.text(value);
      this.byte(59);
    } else if (value instanceof PhpEnum) {
      // A case is one object in PHP, so its second sighting is `r:N;` however it was built.
      if (this.seenObject(`${value.className}:${value.caseName}`)) return;
      this.ascii('E:');
      this.text(`${value.className}:${value.caseName}`);
      this.byte(59);
    } else if (value instanceof PhpSerializable) {
      if (this.seenObject(value)) return;
      this.ascii('C:');
      this.text(value.className);
      this.ascii(`:${value.data.length}:{`);
      this.bytes(value.data);
      this.byte(125);
    } else {
      // Plain JavaScript inside a tree: convert it where it stands.
      return this.value(fromJS(value));
    }
    return undefined;
  }

  /** Counts the object's slot; if it was written before, writes `r:N;` and says so. */
  private seenObject(object: object | string): boolean {
    this.slot++;
    // Most values hold one object (the job itself): a Map is made only for a second one.
    const earlier = object === this.firstObject ? this.firstSlot : this.objects?.get(object);
    if (earlier !== undefined) {
      this.two(114, 58);
      this.int(earlier);
      this.byte(59);
      return true;
    }
    if (this.firstObject === undefined) {
      this.firstObject = object;
      this.firstSlot = this.slot;
    } else {
      (this.objects ??= new Map()).set(object, this.slot);
    }
    return false;
  }

  private key(key: PhpKey): void {
    if (typeof key === 'number') {
      if (!Number.isSafeInteger(key)) throw new PhpSerializeError(`array key ${key} is not an int`, '');
      this.two(105, 58);
      this.int(key);
      this.byte(59);
    } else if (typeof key === 'bigint') {
      this.ascii(`i:${checkInt(key)};`);
    } else {
      this.two(115, 58);
      this.text(key);
      this.byte(59);
    }
  }

  /** `LEN:"bytes"`, LEN counted in bytes as PHP counts it. */
  private text(text: string | Uint8Array): void {
    if (typeof text === 'string') {
      const length = text.length;
      // Most strings in a job are ASCII: copy them by hand, which beats a call into Buffer.write.
      const start = this.pos;
      this.int(length);
      this.room(length + 3);
      const buf = this.buf;
      let pos = this.pos;
      buf[pos++] = 58;
      buf[pos++] = 34;
      let i = 0;
      for (; i < length; i++) {
        const code = text.charCodeAt(i);
        if (code >= 0x80) break;
        buf[pos++] = code;
      }
      if (i === length) {
        buf[pos++] = 34;
        this.pos = pos;
        return;
      }
      this.pos = start;
      const bytes = Buffer.byteLength(text, 'utf8');
      this.int(bytes);
      this.ascii(':"');
      this.room(bytes + 1);
      this.pos += this.buf.write(text, this.pos, bytes, 'utf8');
    } else {
      this.ascii(`${text.length}:"`);
      this.bytes(text);
    }
    this.byte(34);
  }

  /** A safe integer in decimal, without making a string of it first. */
  private int(n: number): void {
    if (n < 0) {
      this.byte(45);
      n = -n;
    }
    if (n < 10) return this.byte(48 + n);
    const digits = n < 100 ? 2 : n < 1000 ? 3 : n < 1e4 ? 4 : n < 1e5 ? 5 : Math.floor(Math.log10(n)) + 1;
    // log10 can land a hair low on exact powers of ten; a string settles those rare cases.
    if (digits > 5 && (10 ** (digits - 1) > n || 10 ** digits <= n)) return this.ascii(String(n));
    this.room(digits);
    const buf = this.buf;
    let pos = this.pos + digits;
    this.pos = pos;
    while (n >= 10) {
      const next = Math.floor(n / 10);
      buf[--pos] = 48 + (n - next * 10);
      n = next;
    }
    buf[--pos] = 48 + n;
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

  private two(first: number, second: number): void {
    this.room(2);
    this.buf[this.pos++] = first;
    this.buf[this.pos++] = second;
  }

  private byte(byte: number): void {
    this.room(1);
    this.buf[this.pos++] = byte;
  }

  private room(extra: number): void {
    const needed = this.pos + extra;
    if (needed <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, this.buf.length * 2));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }
}

function checkInt(value: bigint): bigint {
  if (value > INT64_MAX || value < INT64_MIN) throw new PhpSerializeError(`int ${value} is outside PHP's 64-bit range`, '');
  return value;
}
