/**
 * Between the lossless model and plain JavaScript.
 *
 * `toJS` is what a handler wants to read: numbers, strings, arrays and objects. It forgets what
 * only PHP cares about (int vs float, visibility, slot numbers) but never a value. `fromJS` goes
 * the other way for producers; hints say what plain JavaScript cannot (a class, a visibility,
 * a float that happens to be whole).
 */
import { PhpSerializeError } from './errors.js';
import { escapeBytes, escapedBytes, hasEscapes } from './escape.js';
import { isInt64 } from './int64.js';
import {
  PhpArray,
  PhpEnum,
  PhpFloat,
  PhpIncompleteObject,
  PhpObject,
  PhpRef,
  PhpSerializable,
  demangle,
  mangle,
  type PhpKey,
  type PhpValue,
  type Visibility,
} from './values.js';

/** The PHP class of an object `toJS` made. Read it with `phpClassOf`. */
export const PHP_CLASS: unique symbol = Symbol.for('laravel-queue-bridge.phpClass');
/** The raw payload of a `Serializable` object (`C:`) that `toJS` made. */
export const PHP_SERIALIZED: unique symbol = Symbol.for('laravel-queue-bridge.phpSerialized');
/** Set on the enum cases `toJS` makes, so `fromJS` writes them back as enums. */
export const PHP_ENUM: unique symbol = Symbol.for('laravel-queue-bridge.phpEnum');

/** A PHP object as plain JavaScript: its properties, with the class behind `PHP_CLASS`. */
export interface JSPhpObject {
  [name: string]: unknown;
  [PHP_CLASS]?: string;
  [PHP_ENUM]?: true;
  [PHP_SERIALIZED]?: Uint8Array;
}

/** The class name of an object made by `toJS`, or undefined for anything else. */
export function phpClassOf(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? (value as JSPhpObject)[PHP_CLASS] : undefined;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Plain JavaScript for a PHP value:
 * - null and booleans as they are; ints as `number` within ±(2^53−1), else `bigint`;
 * - floats as `number` (INF, -INF, NAN and -0 kept);
 * - strings as `string`, or `Uint8Array` when the bytes are not UTF-8;
 * - arrays keyed exactly 0..n−1 as `Array`, other arrays as null-prototype objects; a key (or
 *   property name) whose bytes are not UTF-8 is spelled with each byte that is not part of valid
 *   UTF-8 as the lone surrogate U+DC00 + byte ("\xff" is "\udcff"), so two such keys never
 *   merge, none equals a UTF-8 key, and `fromJS` turns the spelling back into the bytes;
 * - objects as null-prototype objects of their plain property names (visibility stripped; a
 *   parent's private property gives way to the object's own of the same name); the class name
 *   through `phpClassOf` (for a class `allowedClasses` kept out, `__PHP_Incomplete_Class`, with
 *   the class in `__PHP_Incomplete_Class_Name`, as PHP shows it). Enums are `{ name: 'Case' }`
 *   with the enum's class; `Serializable` objects carry their raw payload behind `PHP_SERIALIZED`;
 * - back-references resolved to the value they name; the same object twice is one JS object.
 */
export function toJS(value: PhpValue): unknown {
  return convert(value, new Map());
}

function convert(value: PhpValue, seen: Map<object, unknown>): unknown {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint' && value >= -MAX_SAFE && value <= MAX_SAFE) return Number(value);
    return value;
  }
  if (value instanceof PhpFloat) return value.value;
  if (value instanceof Uint8Array) return value;
  if (value instanceof PhpRef) return convert(value.target, seen);
  const done = seen.get(value);
  if (done !== undefined) return done;

  if (value instanceof PhpArray) {
    const { keys, values } = value;
    if (value.isList()) {
      const list: unknown[] = new Array(keys.length);
      seen.set(value, list);
      for (let i = 0; i < keys.length; i++) list[i] = convert(values[i]!, seen);
      return list;
    }
    const record = Object.create(null) as Record<string, unknown>;
    seen.set(value, record);
    for (let i = 0; i < keys.length; i++) record[keyText(keys[i]!)] = convert(values[i]!, seen);
    return record;
  }

  const object = Object.create(null) as JSPhpObject;
  seen.set(value, object);
  Object.defineProperty(object, PHP_CLASS, { value: value.className });
  if (value instanceof PhpObject) {
    // Where PHP keeps the class an incomplete object stands for, and shows it (var_dump, (array)).
    if (value instanceof PhpIncompleteObject) object[INCOMPLETE_NAME] = value.originalClassName;
    const { keys, values } = value.props;
    const own = value instanceof PhpIncompleteObject ? value.originalClassName : value.className;
    // Names that came from a parent's private property, which the object's own may replace.
    let foreign: Set<string> | undefined;
    for (let i = 0; i < keys.length; i++) {
      const prop = demangle(keyText(keys[i]!));
      const name = prop.name;
      const isForeign = prop.visibility === 'private' && prop.declaringClass !== own;
      if (name in object && (isForeign || !foreign?.has(name))) continue;
      if (isForeign) (foreign ??= new Set()).add(name);
      else foreign?.delete(name);
      object[name] = convert(values[i]!, seen);
    }
  } else if (value instanceof PhpEnum) {
    Object.defineProperty(object, PHP_ENUM, { value: true });
    object.name = value.caseName;
  } else if (value instanceof PhpSerializable) {
    Object.defineProperty(object, PHP_SERIALIZED, { value: value.data });
  }
  return object;
}

/**
 * An object of a class `allowedClasses` kept out is, to PHP, one of `__PHP_Incomplete_Class` with
 * its own class in this property: `toJS` shows it so, and `fromJS` takes such an object back to
 * its own class, as PHP's serialize() writes it.
 */
const INCOMPLETE_CLASS = '__PHP_Incomplete_Class';
const INCOMPLETE_NAME = '__PHP_Incomplete_Class_Name';

/** A key as a property name: bytes that are not UTF-8 in their escaped spelling (see escape.ts). */
function keyText(key: PhpKey): string {
  return key instanceof Uint8Array ? escapeBytes(key) : String(key);
}

/**
 * What `fromJS` cannot see in plain JavaScript. A hint mirrors the value it describes:
 * `'float'` or `'int'` for a number; for an object or array, `class` makes it a PHP object,
 * `visibility` and `declaringClass` place its properties, `props` hints each property and
 * `items` every element.
 */
export type FromJSHint =
  | 'int'
  | 'float'
  | {
      class?: string;
      visibility?: Record<string, Visibility>;
      /** For a private property inherited from a parent class, the class that declares it. */
      declaringClass?: Record<string, string>;
      props?: Record<string, FromJSHint>;
      items?: FromJSHint;
    };

/**
 * A lossless PHP value for plain JavaScript. Integers become ints (within 64 bits; past 2^53 as
 * bigints), other numbers floats, bigints ints, strings strings, `Uint8Array` byte strings,
 * arrays lists, `Map`s arrays with their keys, plain objects string-keyed arrays (integer-like
 * keys become int keys, as PHP makes them; a key in the escaped spelling `toJS` gives bytes that
 * are not UTF-8 becomes those bytes), and objects that `toJS` made go back to their class.
 * `PhpValue`s inside are taken as they are.
 */
export function fromJS(js: unknown, hint?: FromJSHint): PhpValue {
  return fromJSAt(js, hint, '$');
}

/** fromJS, an error's path starting at `root` and `key` in it (a job's property: `$` and `items` make `$.items`, then `$.items[2]`). */
export function fromJSAt(js: unknown, hint: FromJSHint | undefined, root: string, key?: string): PhpValue {
  // A scalar meets no object: most of a job's properties are scalars, and need no record of them.
  return build(js, hint, typeof js === 'object' && js !== null ? new Map<object, PhpValue>() : NOTHING_SEEN, root, key);
}

/** The record of objects met for a scalar: never written, since a scalar has nothing inside. */
const NOTHING_SEEN: Map<object, PhpValue> = new Map();

/**
 * Where a value is, for an error: its parent's path and its own key (`$.items` and 2 make
 * `$.items[2]`), joined only when an error or an array or object inside asks: a list of forty
 * scalars would make forty paths for errors that never come.
 */
function pathOf(parent: string, key: string | number | undefined, brackets: boolean): string {
  if (key === undefined) return parent;
  return brackets ? `${parent}[${key}]` : `${parent}.${key}`;
}

function build(
  js: unknown,
  hint: FromJSHint | undefined,
  seen: Map<object, PhpValue>,
  parent: string,
  key?: string | number,
  brackets = false,
): PhpValue {
  switch (typeof js) {
    case 'undefined':
      return null;
    case 'boolean':
    case 'string':
      return js;
    case 'bigint':
      return hint === 'float' ? new PhpFloat(Number(js)) : js;
    case 'number':
      if (hint === 'float') return new PhpFloat(js);
      // -0 is a float unless an int is asked for: PHP's ints have no negative zero, (int) -0.0 is 0.
      if (Number.isSafeInteger(js) && (!Object.is(js, -0) || hint === 'int')) return js === 0 ? 0 : js;
      // A whole number past 2^53 is still exact as a double, and an int to PHP while it fits
      // 64 bits (json_decode reads 1152921504606846976 as one); it is kept as a bigint.
      if (Number.isInteger(js) && js !== 0 && isInt64(BigInt(js))) return BigInt(js);
      if (hint === 'int') throw new PhpSerializeError(`${js} is not an int`, pathOf(parent, key, brackets));
      return new PhpFloat(js);
    case 'object':
      break;
    default:
      throw new PhpSerializeError(`cannot make a PHP value of a JavaScript ${typeof js}`, pathOf(parent, key, brackets));
  }
  if (js === null) return null;
  if (isPhpValue(js)) return js;
  const path = pathOf(parent, key, brackets);
  refuseHiddenState(js, path);
  const done = seen.get(js);
  if (done !== undefined) {
    if (done instanceof PhpObject) return done;
    throw new PhpSerializeError('a cycle through arrays cannot be written (only objects can be shared)', path);
  }
  const shape = typeof hint === 'object' ? hint : undefined;
  const className = shape?.class ?? phpClassOf(js);

  if (className !== undefined) {
    // Enums and Serializable objects as toJS shows them go back to what they were.
    const made = js as JSPhpObject;
    if (made[PHP_ENUM]) return new PhpEnum(className, String(made.name));
    if (made[PHP_SERIALIZED]) return new PhpSerializable(className, made[PHP_SERIALIZED]);
    const original = className === INCOMPLETE_CLASS ? (js as JSPhpObject)[INCOMPLETE_NAME] : undefined;
    const object = typeof original === 'string' ? new PhpIncompleteObject(original) : new PhpObject(className);
    seen.set(js, object);
    for (const [name, value] of Object.entries(js)) {
      if (name === INCOMPLETE_NAME && object instanceof PhpIncompleteObject) continue;
      const visibility = shape?.visibility?.[name] ?? 'public';
      const owner = shape?.declaringClass?.[name] ?? (typeof original === 'string' ? original : className);
      object.props.set(byteKey(mangle(name, visibility, owner)), build(value, shape?.props?.[name], seen, path, name));
    }
    return object;
  }

  const array = new PhpArray();
  seen.set(js, array);
  // A list's indexes and an object's keys are each one PHP key of their own: appended as they
  // come, with no lookup made (PhpArray.append). A Map's keys may meet (1 and '1' are one PHP
  // key): set() keeps the first one's place.
  if (Array.isArray(js)) {
    js.forEach((item, i) => array.append(i, build(item, shape?.items, seen, path, i, true)));
  } else if (js instanceof Map) {
    for (const [key, item] of js)
      array.set(phpKey(key, path), build(item, shape?.items ?? shape?.props?.[String(key)], seen, path, String(key), true));
  } else {
    for (const key of Object.keys(js))
      array.append(phpKey(key, path), build((js as Record<string, unknown>)[key], shape?.props?.[key] ?? shape?.items, seen, path, key));
  }
  seen.delete(js);
  return array;
}

/**
 * Built-ins whose value lives in internal slots, not in properties: as an array of their
 * properties they would be written empty (a Date as a:0:{}), a value lost without a word.
 */
function refuseHiddenState(js: object, path: string): void {
  const kind =
    js instanceof Date
      ? 'Date'
      : js instanceof Set
        ? 'Set'
        : js instanceof WeakMap
          ? 'WeakMap'
          : js instanceof WeakSet
            ? 'WeakSet'
            : js instanceof RegExp
              ? 'RegExp'
              : js instanceof Promise
                ? 'Promise'
                : js instanceof ArrayBuffer
                  ? 'ArrayBuffer'
                  : undefined;
  if (kind === undefined) return;
  const instead =
    kind === 'Date'
      ? ' (for a Carbon, build it with buildDate from the package root)'
      : kind === 'Set'
        ? ' (give its values as an array)'
        : '';
  throw new PhpSerializeError(`a JavaScript ${kind} has no PHP value of its own${instead}`, path);
}

function isPhpValue(js: object): js is Exclude<PhpValue, null | boolean | number | bigint | string> {
  return (
    js instanceof PhpArray ||
    js instanceof PhpObject ||
    js instanceof PhpFloat ||
    js instanceof PhpRef ||
    js instanceof PhpEnum ||
    js instanceof PhpSerializable ||
    js instanceof Uint8Array
  );
}

/** PHP turns a decimal-integer string key into an int key; other keys stay strings. */
function phpKey(key: unknown, path: string): PhpKey {
  if (typeof key === 'number') {
    if (!Number.isSafeInteger(key)) throw new PhpSerializeError(`array key ${key} is not an int`, path);
    return key;
  }
  if (typeof key === 'bigint') return key;
  if (key instanceof Uint8Array) return key;
  const text = String(key);
  if (hasEscapes(text)) return byteKey(text);
  if (INT_KEY.test(text)) {
    const n = Number(text);
    if (Number.isSafeInteger(n)) return n;
    const big = BigInt(text);
    if (isInt64(big)) return big;
  }
  return text;
}

/** A string key as PHP holds it: the bytes an escaped spelling (see toJS) stands for, else the text. */
function byteKey(text: string): string | Uint8Array {
  return hasEscapes(text) ? new Uint8Array(escapedBytes(text)) : text;
}

const INT_KEY = /^(?:0|-?[1-9][0-9]*)$/;
