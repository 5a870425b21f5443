/**
 * The lossless model of a PHP value.
 *
 * Everything `unserialize` returns is one of these, and `serialize` writes each back to the
 * exact bytes it came from. JavaScript already has a faithful type for most of PHP's:
 *
 * | PHP                 | here                                                    |
 * |---------------------|---------------------------------------------------------|
 * | null, bool          | `null`, `boolean`                                       |
 * | int                 | `number` when |n| ≤ 2^53−1, else `bigint`               |
 * | float               | `PhpFloat` (a JS number alone would lose int vs float)  |
 * | string              | `string` when the bytes are UTF-8, else `Uint8Array`    |
 * | array               | `PhpArray` (ordered, int and string keys)               |
 * | object              | `PhpObject` (class name, properties by mangled name)    |
 * | Serializable (`C:`) | `PhpSerializable` (its payload kept as bytes)           |
 * | enum (`E:`)         | `PhpEnum`                                               |
 * | `r:` / `R:`         | `PhpRef` (the slot number PHP wrote, and what it names) |
 */

/** An array key: an int, or a string (bytes that are not UTF-8 stay a `Uint8Array`). */
export type PhpKey = number | bigint | string | Uint8Array;

export type PhpValue =
  null | boolean | number | bigint | string | Uint8Array | PhpFloat | PhpArray | PhpObject | PhpSerializable | PhpEnum | PhpRef;

/** A float as the reader found it, spelled as PHP spells it (for `unserialize` only). */
export let readPhpFloat: (value: number, spelling: string) => PhpFloat;
/** The text `serialize` may write for a float as it is, if known: its source, or the spelling it was read with. */
export let writtenSpelling: (float: PhpFloat) => string | undefined;

/**
 * A PHP float. `source` is kept only when the input spelled the number in a way PHP 8's
 * `serialize()` would not (`d:0.10000000000000001;` from an old PHP, `d:1e3;`), so that such
 * input still re-encodes byte for byte.
 */
export class PhpFloat {
  /**
   * PHP's own spelling of the value, when the reader had already made it (a float it had to
   * check the long way): `serialize` then need not format the number again. Not part of the
   * value, and invisible to comparisons; only `readPhpFloat` sets it.
   */
  #spelling: string | undefined = undefined;

  constructor(
    readonly value: number,
    readonly source?: string,
  ) {}

  static {
    readPhpFloat = (value, spelling) => {
      const float = new PhpFloat(value);
      float.#spelling = spelling;
      return float;
    };
    writtenSpelling = (float) => float.source ?? float.#spelling;
  }
}

/**
 * A PHP array: an ordered map whose keys are ints or strings. Keys and values live in two
 * parallel lists because that is what decoding builds fastest; a lookup index is made on demand.
 */
export class PhpArray {
  readonly keys: PhpKey[];
  readonly values: PhpValue[];
  #index: Map<PhpKey, number> | undefined;

  constructor(keys: PhpKey[] = [], values: PhpValue[] = []) {
    this.keys = keys;
    this.values = values;
  }

  /** Builds a list (keys 0..n-1). */
  static list(values: PhpValue[]): PhpArray {
    return new PhpArray(
      values.map((_, i) => i),
      values,
    );
  }

  /** Builds an array from [key, value] pairs, in order. */
  static from(entries: Iterable<readonly [PhpKey, PhpValue]>): PhpArray {
    const array = new PhpArray();
    for (const [key, value] of entries) array.set(key, value);
    return array;
  }

  get size(): number {
    return this.keys.length;
  }

  /** True when the keys are exactly the ints 0..n-1 in order, what PHP calls a list. */
  isList(): boolean {
    const keys = this.keys;
    for (let i = 0; i < keys.length; i++) if (keys[i] !== i) return false;
    return true;
  }

  has(key: PhpKey): boolean {
    return this.#lookup(key) !== undefined;
  }

  get(key: PhpKey): PhpValue | undefined {
    const at = this.#lookup(key);
    return at === undefined ? undefined : this.values[at];
  }

  /** Sets a key, keeping its place if it exists (as PHP does), appending it otherwise. */
  set(key: PhpKey, value: PhpValue): this {
    const at = this.#lookup(key);
    if (at !== undefined) {
      this.values[at] = value;
    } else {
      this.#index?.set(normalKey(key), this.keys.length);
      this.keys.push(key);
      this.values.push(value);
    }
    return this;
  }

  /**
   * Appends a key the caller knows the array does not hold yet (a list's next index, a JS
   * object's own key): no lookup, and no index made for it, where set() would make one first.
   */
  append(key: PhpKey, value: PhpValue): this {
    this.#index?.set(normalKey(key), this.keys.length);
    this.keys.push(key);
    this.values.push(value);
    return this;
  }

  delete(key: PhpKey): boolean {
    const at = this.#lookup(key);
    if (at === undefined) return false;
    this.keys.splice(at, 1);
    this.values.splice(at, 1);
    this.#index = undefined;
    return true;
  }

  *entries(): IterableIterator<[PhpKey, PhpValue]> {
    for (let i = 0; i < this.keys.length; i++) yield [this.keys[i]!, this.values[i]!];
  }

  [Symbol.iterator](): IterableIterator<[PhpKey, PhpValue]> {
    return this.entries();
  }

  #lookup(key: PhpKey): number | undefined {
    if (this.#index === undefined) {
      // Later duplicates win, as they do when PHP reads an array with a repeated key.
      this.#index = new Map();
      for (let i = 0; i < this.keys.length; i++) this.#index.set(normalKey(this.keys[i]!), i);
    }
    return this.#index.get(normalKey(key));
  }
}

/** Int keys that fit a number are compared as numbers, so `1n` and `1` name the same slot. */
function normalKey(key: PhpKey): PhpKey {
  return typeof key === 'bigint' && key >= -MAX_SAFE && key <= MAX_SAFE ? Number(key) : key;
}
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export type Visibility = 'public' | 'protected' | 'private';

/** A property name as PHP stores it, split into its parts. */
export interface PropertyName {
  name: string;
  visibility: Visibility;
  /** For a private property, the class that declared it. */
  declaringClass?: string;
}

/**
 * PHP writes protected properties as `\0*\0name` and private ones as `\0Class\0name`.
 * These two functions are the whole of that convention.
 */
export function mangle(name: string, visibility: Visibility = 'public', declaringClass = ''): string {
  if (visibility === 'protected') return `\0*\0${name}`;
  if (visibility === 'private') return `\0${declaringClass}\0${name}`;
  return name;
}

export function demangle(key: PhpKey): PropertyName {
  if (typeof key !== 'string' || key.charCodeAt(0) !== 0) return { name: String(key), visibility: 'public' };
  const end = key.indexOf('\0', 1);
  // A lone leading NUL is not a mangled name; PHP would show it as a public name too.
  if (end < 0) return { name: key, visibility: 'public' };
  const owner = key.slice(1, end);
  const name = key.slice(end + 1);
  return owner === '*' ? { name, visibility: 'protected' } : { name, visibility: 'private', declaringClass: owner };
}

/**
 * A PHP object: `O:` in the wire format. Property keys are kept exactly as serialized (mangled
 * names, or ints when a `__serialize()` returned a list), so nothing is lost.
 */
export class PhpObject {
  constructor(
    /** Bytes that are not UTF-8 (PHP allows 0x80 to 0xff) in the escaped spelling of escape.ts. */
    public className: string,
    readonly props: PhpArray = new PhpArray(),
  ) {}

  /**
   * A property by its plain name, whatever its visibility. A property of the object's own class
   * (or a public or protected one) is preferred over a parent's private one of the same name.
   */
  get(name: string): PhpValue | undefined {
    let found: PhpValue | undefined;
    const { keys, values } = this.props;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (key === name) return values[i];
      if (typeof key !== 'string' || key.charCodeAt(0) !== 0) continue;
      const prop = demangle(key);
      if (prop.name !== name) continue;
      if (prop.visibility !== 'private' || prop.declaringClass === this.className) return values[i];
      found ??= values[i];
    }
    return found;
  }

  /** Sets a property under its mangled name. */
  set(name: string, value: PhpValue, visibility: Visibility = 'public', declaringClass = this.className): this {
    this.props.set(mangle(name, visibility, declaringClass), value);
    return this;
  }
}

/**
 * An object of a class that `allowedClasses` kept out; `originalClassName` says which class.
 * Like PHP, `serialize` writes it back under that name.
 */
export class PhpIncompleteObject extends PhpObject {
  constructor(
    readonly originalClassName: string,
    props?: PhpArray,
  ) {
    super('__PHP_Incomplete_Class', props);
  }
}

/** An object of a class implementing `Serializable`: `C:`. Its payload is the class's own format. */
export class PhpSerializable {
  constructor(
    public className: string,
    readonly data: Uint8Array,
  ) {}
}

/** An enum case: `E:`, e.g. `App\Enums\Status:Active`. */
export class PhpEnum {
  constructor(
    public className: string,
    public caseName: string,
  ) {}
}

/**
 * A back-reference. PHP numbers every value it writes (keys excepted) from 1, and writes a value
 * it has written before as `r:N;` (the same object again) or `R:N;` (a PHP `&` reference; `R:`
 * takes no number of its own). `target` is the value slot N holds, resolved when decoding.
 */
export class PhpRef {
  constructor(
    readonly kind: 'r' | 'R',
    readonly index: number,
    readonly target: PhpValue,
  ) {}
}

/** Follows `PhpRef`s to the value they name. */
export function deref(value: PhpValue): PhpValue {
  while (value instanceof PhpRef) value = value.target;
  return value;
}
