/**
 * The property names of each class, kept across calls for the reader and the writer alike.
 *
 * Objects of one class carry the same names in the same order, again and again: every job of a
 * queue has `job`, `connection`, `queue`, `chainConnection`… PHP keeps each class's names once,
 * with their lengths, and copies them. Here each name is kept with its whole entry as written,
 * `s:N:"name";`, in words of four bytes:
 *
 * - the reader compares the input with the entry kept for that place, a word at a time, and on a
 *   match hands out the string kept: no new string, and the same one every time;
 * - the writer, given that very string at that place, copies the words, where it would otherwise
 *   read the name's characters one by one.
 *
 * Anything else (another name at a place, a name not yet kept, one that is not ASCII) goes the
 * usual way, so what is kept changes neither what is read nor what is written.
 */
export class PropertyNames {
  /** The head `O:N:"Class"` as words, when the class name is ASCII (else undefined), and its length. */
  readonly head: Int32Array | undefined;
  readonly headLength: number;
  /** The name kept at each place. */
  readonly names: string[] = [];
  /** Its entry `s:N:"name";` as little-endian words of four bytes, the last one padded with zeros. */
  readonly words: Int32Array[] = [];
  /** The entry's length in bytes. */
  readonly lengths: number[] = [];

  constructor(readonly className: string) {
    const head = `O:${className.length}:"${className}"`;
    this.head = asWords(head);
    this.headLength = head.length;
  }

  /** Keeps an ASCII `name` at `index` if that is the next free place, within bounds. */
  learn(index: number, name: string): void {
    if (index !== this.names.length || index >= MAX_NAMES || name.length > MAX_NAME_LENGTH) return;
    const entry = `s:${name.length}:"${name}";`;
    const words = asWords(entry);
    if (words === undefined) return;
    this.names.push(name);
    this.words.push(words);
    this.lengths.push(entry.length);
  }
}

/** ASCII text as little-endian words of four bytes, the last padded with zeros; undefined if not ASCII. */
function asWords(text: string): Int32Array | undefined {
  const words = new Int32Array((text.length + 3) >> 2);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) return undefined;
    words[i >> 2]! |= code << (8 * (i & 3));
  }
  return words;
}

/** Places kept per class, and the longest class or property name kept: no input can make them grow further. */
const MAX_NAMES = 256;
const MAX_NAME_LENGTH = 256;
/** Classes kept at most; past that the cache starts again. */
const MAX_CLASSES = 512;

const byClass = new Map<string, PropertyNames>();

/** The names kept for a class, made empty on first sight; none for a class name over the bound. */
export function propertyNamesOf(className: string): PropertyNames | undefined {
  // A queue runs the same class again and again: the last one answers without a lookup.
  if (className === lastClass) return lastNames!;
  if (className.length > MAX_NAME_LENGTH) return undefined;
  let names = byClass.get(className);
  if (names === undefined) {
    if (byClass.size >= MAX_CLASSES) byClass.clear();
    names = new PropertyNames(className);
    byClass.set(className, names);
  }
  lastClass = className;
  lastNames = names;
  return names;
}
let lastClass: string | undefined;
let lastNames: PropertyNames | undefined;

/** The names of the class asked for last: a reader tries that class's head first. */
export function lastPropertyNames(): PropertyNames | undefined {
  return lastNames;
}

/**
 * A DataView over all of an ArrayBuffer. The last one asked for is kept when it is small (Node's
 * pooled Buffers share one, and string inputs are read through one scratch buffer), so a large
 * input is never held on to after its call.
 */
export function viewOfBuffer(buffer: ArrayBufferLike): DataView {
  if (buffer === lastBuffer) return lastView!;
  const view = new DataView(buffer);
  if (buffer.byteLength <= 1 << 16) {
    lastBuffer = buffer;
    lastView = view;
  }
  return view;
}
let lastBuffer: ArrayBufferLike | undefined;
let lastView: DataView | undefined;
