/**
 * PHP values as JSON a person can read: what `lqb decode` prints. JSON has no ints beyond 2^53,
 * no INF or NAN, no bytes, no classes and no references, so those get a spelling of their own:
 * `{"@class": "App\\Jobs\\X", …props}`, `{"@enum": "Class::Case"}`, `{"@bytes": "<base64>"}`,
 * big ints and INF/-INF/NAN/-0 as strings. A reference (`r:N;` or `R:N;`) is `{"@ref": N}`, and the
 * array or object it names carries `"@slot": N` (a list so marked is shown keyed, as
 * `{"@slot": N, "0": …}`); a reference to a scalar shows it beside (`"@value"`, long strings cut).
 * An array or object met again other than through a reference, as only a value built by hand
 * can hold one, is `{"@cycle": "Class"}` (or `"array"`).
 * Printing each reference as a reference keeps the output as long as the input, however many
 * times a value is named; expanded, a few hundred bytes of references can name 2^30 values.
 *
 * Everything here walks with a stack of its own: no depth PHP can write overflows the call stack.
 */
import { escapeBytes } from '../php/escape.js';
import { PhpArray, PhpEnum, PhpFloat, PhpObject, PhpRef, PhpSerializable, demangle, type PhpKey, type PhpValue } from '../php/index.js';

/** The arrays and objects that references name, each with the slot number it is shown under. */
export type NamedSlots = Map<object, number>;

/**
 * A value as readable JSON. `named` says which arrays and objects references point at; a part
 * of a larger value is given the whole value's, so its references match the slots shown there.
 */
export function readable(value: PhpValue, named: NamedSlots = namedSlots(value)): unknown {
  const printed = new Set<object>();
  const stack: Frame[] = [];
  const root = show(value, named, printed, stack);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const at = frame.next++;
    if (at >= frame.values.length) {
      stack.pop();
      continue;
    }
    place(frame, at, show(frame.values[at]!, named, printed, stack));
  }
  return root;
}

/**
 * The slot number each array or object named by a reference is shown under: the least that
 * names it (an `r:` may name a slot that is itself an `r:` to the same object).
 */
export function namedSlots(root: PhpValue): NamedSlots {
  const named: NamedSlots = new Map();
  const seen = new Set<object>();
  const pending: PhpValue[] = [root];
  while (pending.length > 0) {
    const value = pending.pop()!;
    if (value instanceof PhpRef) {
      const target = value.target;
      if (!isContainer(target)) continue;
      const known = named.get(target);
      if (known === undefined || value.index < known) named.set(target, value.index);
      continue;
    }
    const entries = value instanceof PhpArray ? value : value instanceof PhpObject ? value.props : undefined;
    if (entries === undefined || seen.has(entries)) continue;
    seen.add(entries);
    for (let i = entries.values.length - 1; i >= 0; i--) pending.push(entries.values[i]!);
  }
  return named;
}

/** An array or object being shown: its entries, the next to show, and where they go. */
interface Frame {
  keys: PhpKey[];
  values: PhpValue[];
  next: number;
  out: unknown[] | Record<string, unknown>;
  /** For an object: its class, to tell a parent's private property from the object's own. */
  className?: string;
}

/** One value shown: a scalar at once; an array or object opened empty, its entries stacked to fill. */
function show(value: PhpValue, named: NamedSlots, printed: Set<object>, stack: Frame[]): unknown {
  if (value === null || typeof value === 'boolean' || typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof PhpFloat) return readableFloat(value);
  if (value instanceof Uint8Array) return { '@bytes': Buffer.from(value).toString('base64') };
  if (value instanceof PhpRef) return reference(value, named);
  const slot = named.get(value);
  const marked: Record<string, unknown> = {};
  if (slot !== undefined) marked['@slot'] = slot;
  if (value instanceof PhpEnum) return { ...marked, '@enum': `${value.className}::${value.caseName}` };
  if (value instanceof PhpSerializable)
    return { ...marked, '@class': value.className, '@serialized': Buffer.from(value.data).toString('utf8') };
  // Met again other than through a reference: only a value built by hand shares itself so.
  if (printed.has(value)) return { '@cycle': value instanceof PhpObject ? value.className : 'array' };
  printed.add(value);
  if (value instanceof PhpArray) {
    const out = value.isList() && slot === undefined ? new Array<unknown>(value.size) : marked;
    if (value.size > 0) stack.push({ keys: value.keys, values: value.values, next: 0, out });
    return out;
  }
  marked['@class'] = value.className;
  if (value.props.size > 0)
    stack.push({ keys: value.props.keys, values: value.props.values, next: 0, out: marked, className: value.className });
  return marked;
}

/** Puts the entry shown for place `at` of a frame where it belongs. */
function place(frame: Frame, at: number, shown: unknown): void {
  const out = frame.out;
  if (Array.isArray(out)) {
    out[at] = shown;
    return;
  }
  const key = keyText(frame.keys[at]!);
  if (frame.className === undefined) {
    define(out, key, shown);
    return;
  }
  // A parent's private property of a name already shown is told apart by its class.
  const prop = demangle(key);
  define(out, Object.hasOwn(out, prop.name) ? `${prop.declaringClass ?? '*'}::${prop.name}` : prop.name, shown);
}

/** `{"@ref": N}` naming the slot an array or object is shown under; a scalar is shown beside. */
function reference(ref: PhpRef, named: NamedSlots): unknown {
  const target = ref.target;
  if (isContainer(target)) return { '@ref': named.get(target) ?? ref.index };
  return { '@ref': ref.index, '@value': preview(target) };
}

/** A scalar named by a reference, short: a string past PREVIEW characters is cut, with an ellipsis. */
function preview(value: PhpValue): unknown {
  if (typeof value === 'string') return value.length > PREVIEW ? `${value.slice(0, PREVIEW)}…` : value;
  if (value instanceof Uint8Array) {
    const shown = { '@bytes': Buffer.from(value.subarray(0, PREVIEW)).toString('base64') };
    return value.length > PREVIEW ? { ...shown, '@length': value.length } : shown;
  }
  if (value instanceof PhpRef) return { '@ref': value.index };
  return show(value, new Map(), new Set(), []);
}
const PREVIEW = 64;

function isContainer(value: PhpValue): value is PhpArray | PhpObject | PhpSerializable | PhpEnum {
  return value instanceof PhpArray || value instanceof PhpObject || value instanceof PhpSerializable || value instanceof PhpEnum;
}

function readableFloat(value: PhpFloat): number | string {
  // JSON would print -0 as 0: it is spelled as PHP spells it, like INF and NAN.
  if (Object.is(value.value, -0)) return '-0';
  return Number.isFinite(value.value) ? value.value : String(value.value).replace('Infinity', 'INF').replace('NaN', 'NAN');
}

/** A key as text; bytes that are not UTF-8 in the escaped spelling `toJS` uses (see src/php/escape.ts). */
function keyText(key: PhpKey): string {
  return key instanceof Uint8Array ? escapeBytes(key) : String(key);
}

/** Own data property even for `__proto__`, so printing never touches a prototype. */
function define(record: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Past this depth, lines are indented no further: indenting every level would make deep output grow as its square. */
const MAX_INDENT = 32;

/**
 * JSON as `JSON.stringify(value, null, 2)` writes it, but with a stack of its own (no depth
 * overflows the call stack) and indentation that stops growing at MAX_INDENT levels.
 * Takes what readable JSON holds: null, booleans, finite numbers, strings, arrays and plain objects.
 */
export function formatJson(value: unknown): string {
  const parts: string[] = [];
  // Each open array or object: its entries as [key, value] (key undefined in an array), and the next.
  const stack: { entries: [string | undefined, unknown][]; next: number; close: string }[] = [];
  let pending: unknown = value;
  for (;;) {
    if (pending !== NOTHING) {
      const entries = entriesOf(pending);
      if (entries === undefined) parts.push(scalarJson(pending));
      else if (entries.length === 0) parts.push(Array.isArray(pending) ? '[]' : '{}');
      else {
        parts.push(Array.isArray(pending) ? '[' : '{');
        stack.push({ entries, next: 0, close: Array.isArray(pending) ? ']' : '}' });
      }
      pending = NOTHING;
    }
    const top = stack[stack.length - 1];
    if (top === undefined) return parts.join('');
    if (top.next === top.entries.length) {
      stack.pop();
      parts.push('\n', indent(stack.length), top.close);
      continue;
    }
    const [key, entry] = top.entries[top.next]!;
    parts.push(top.next++ === 0 ? '\n' : ',\n', indent(stack.length));
    if (key !== undefined) parts.push(JSON.stringify(key), ': ');
    pending = entry;
  }
}

const NOTHING = Symbol('nothing');

/** The entries of an array or object as JSON shows them (undefined in an array as null, in an object left out); undefined for a scalar. */
function entriesOf(value: unknown): [string | undefined, unknown][] | undefined {
  if (Array.isArray(value)) return Array.from(value, (item): [undefined, unknown] => [undefined, item === undefined ? null : item]);
  if (typeof value !== 'object' || value === null) return undefined;
  return Object.entries(value).filter(([, item]) => item !== undefined);
}

function scalarJson(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

const indents: string[] = [];
function indent(depth: number): string {
  const level = Math.min(depth, MAX_INDENT);
  return (indents[level] ??= '  '.repeat(level));
}
