/**
 * The evaluator of the expressions `lqb shapes` translates uniqueId(), backoff(), retryUntil(),
 * tags() and displayName() into (src/shapes/methods.php writes them): pure functions of the
 * serialized command, with PHP 8's own conversions (concatenation, casts), and each method's
 * result turned into what Laravel writes (a lock key's id, the envelope's backoff string, its
 * retryUntil timestamp, Horizon's tags, the displayName).
 */
import { PhpArray, PhpFloat, PhpObject, deref, phpStringOfFloat, toJS, type PhpValue } from '../php/index.js';
import { PhpStringError, phpString } from '../php/string.js';
import type { ClassShape, Expression, TranslatedMethod } from './shape.js';

const MODEL_IDENTIFIER = 'Illuminate\\Contracts\\Database\\ModelIdentifier';

/** An expression that cannot give a value for this command: a property missing, a value PHP would not convert. */
export class ExpressionError extends Error {
  override name = 'ExpressionError';
}

/** A Carbon instant: now() and its additions, in UNIX seconds. */
export class Instant {
  constructor(readonly timestamp: number) {}
}

/** A value an expression yields: a PHP value, or a Carbon instant. */
export type ExpressionValue = PhpValue | Instant;

export interface EvaluateOptions {
  /** UNIX seconds for now() (the clock by default). */
  now?: number;
}

/** The translated expression of a method the class defines, or why there is none. */
export function translatedMethod(
  shape: ClassShape | undefined,
  method: TranslatedMethod,
): { expression: Expression } | { untranslated: string } | undefined {
  if (!shape?.methods.includes(method)) return undefined;
  const found = shape.expressions?.[method];
  if (!found) return { untranslated: 'the shapes file carries no translation of it (run lqb shapes again)' };
  return 'untranslated' in found ? { untranslated: found.untranslated } : { expression: found };
}

/** The expression's value on the command, as PHP would compute it on the object. */
export function evaluate(expression: Expression, command: PhpObject, options: EvaluateOptions = {}): ExpressionValue {
  if ('prop' in expression) return property(command, expression.prop);
  if ('modelKey' in expression) return modelKey(command, expression.modelKey, expression.orNull === true);
  if ('lit' in expression) return expression.lit;
  if ('float' in expression) return new PhpFloat(expression.float);
  if ('concat' in expression) return expression.concat.map((part) => expressionString(evaluate(part, command, options))).join('');
  if ('cast' in expression) return cast(expression.cast, evaluate(expression.of, command, options));
  if ('array' in expression) return PhpArray.list(expression.array.map((item) => toPhp(evaluate(item, command, options))));
  if ('now' in expression) return new Instant((options.now ?? Math.floor(Date.now() / 1000)) + expression.now.addSeconds);
  if ('commandClass' in expression) return command.className;
  if ('returns' in expression) return returned(expression, evaluate(expression.of, command, options));
  throw new ExpressionError(`unknown expression ${JSON.stringify(expression)}`);
}

function property(command: PhpObject, name: string): PhpValue {
  const value = command.get(name);
  if (value === undefined)
    throw new ExpressionError(`${command.className}'s payload has no $${name} (uninitialized when it was dispatched)`);
  return deref(value);
}

/** The key a model property's ModelIdentifier carries: what `$this->model->getKey()` gave at dispatch. */
function modelKey(command: PhpObject, name: string, orNull: boolean): PhpValue {
  const identifier = property(command, name);
  // `$this->product?->id` of a null product is null; through `->` PHP warns, and no value is given.
  if (identifier === null && orNull) return null;
  if (!(identifier instanceof PhpObject) || identifier.className !== MODEL_IDENTIFIER) {
    throw new ExpressionError(`${command.className}'s $${name} is not a model in the payload`);
  }
  const id = deref(identifier.get('id') ?? null);
  if (id instanceof PhpArray) throw new ExpressionError(`${command.className}'s $${name} holds a collection, which has no single key`);
  return id;
}

type Returns = Extract<Expression, { returns: string }>;

/**
 * What a method declared `: type` gives back of the value its body returns, as PHP 8.2 checks a
 * return type: in a strict_types file only the type itself (an int for a float); otherwise PHP's
 * coercions. Where PHP would throw a TypeError, or only warn (a leading-numeric string, a float
 * losing its fraction to an int, deprecated since 8.1), no value is given.
 */
function returned(type: Returns, value: ExpressionValue): ExpressionValue {
  const v = value instanceof Instant ? value : deref(value);
  const refuse = () =>
    new ExpressionError(
      `a method declared to return ${type.nullable ? '?' : ''}${type.returns} returns ${describeValue(v)}, which PHP refuses or warns of`,
    );
  if (v === null) {
    if (type.nullable) return null;
    throw refuse();
  }
  if (type.returns === 'instant') {
    if (v instanceof Instant) return v;
    throw refuse();
  }
  if (type.returns === 'array') {
    if (v instanceof PhpArray) return v;
    throw refuse();
  }
  const scalar =
    typeof v === 'string' ||
    v instanceof Uint8Array ||
    typeof v === 'number' ||
    typeof v === 'bigint' ||
    typeof v === 'boolean' ||
    v instanceof PhpFloat;
  if (!scalar) throw refuse();
  const isInt = typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
  const isFloat = v instanceof PhpFloat || (typeof v === 'number' && !Number.isInteger(v));
  const isString = typeof v === 'string' || v instanceof Uint8Array;
  if (type.strict) {
    if (type.returns === 'int' && isInt) return v;
    if (type.returns === 'float' && (isInt || isFloat)) return new PhpFloat(phpFloatOf(v));
    if (type.returns === 'string' && isString) return v;
    if (type.returns === 'bool' && typeof v === 'boolean') return v;
    throw refuse();
  }
  switch (type.returns) {
    case 'string':
      return expressionString(v);
    case 'bool':
      return phpBool(v);
    case 'float': {
      if (!isString) return new PhpFloat(phpFloatOf(v));
      const number = numericString(v);
      if (number === undefined) throw refuse();
      return new PhpFloat(Number(number));
    }
    case 'int': {
      if (isInt) return v;
      if (typeof v === 'boolean') return v ? 1 : 0;
      if (isString) {
        const number = numericString(v);
        if (number === undefined) throw refuse();
        if (/^[+-]?\d+$/.test(number)) {
          const int = BigInt(number);
          if (int <= INT_MAX && int >= INT_MIN) return narrow(int);
        }
        return integralFloat(Number(number), refuse);
      }
      return integralFloat(phpFloatOf(v), refuse);
    }
  }
}

/** A float PHP takes as an int without a word: finite, integral, in range. */
function integralFloat(value: number, refuse: () => ExpressionError): number | bigint {
  if (!Number.isFinite(value) || !Number.isInteger(value) || value >= 2 ** 63 || value < -(2 ** 63)) throw refuse();
  return narrow(BigInt(value));
}

/** A PHP 8 numeric string's number (whitespace either side allowed), or undefined for any other string. */
function numericString(value: string | Uint8Array): string | undefined {
  const text = typeof value === 'string' ? value : Buffer.from(value).toString('latin1');
  return /^[ \t\n\r\v\f]*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)[ \t\n\r\v\f]*$/.exec(text)?.[1];
}

function describeValue(value: ExpressionValue): string {
  if (value instanceof Instant) return 'a Carbon';
  if (value instanceof PhpArray) return 'an array';
  if (value instanceof PhpFloat) return `the float ${phpStringOfFloat(value.value)}`;
  if (value === null) return 'null';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'object' && 'className' in (value as object)) return `an object`;
  return `${typeof value === 'boolean' ? 'the bool' : 'the int'} ${String(value)}`;
}

function toPhp(value: ExpressionValue): PhpValue {
  if (value instanceof Instant) throw new ExpressionError('a Carbon inside an array is not translated');
  return value;
}

function cast(to: 'string' | 'int' | 'float' | 'bool', value: ExpressionValue): PhpValue {
  switch (to) {
    case 'string':
      return expressionString(value);
    case 'int':
      return phpInt(value);
    case 'float':
      return new PhpFloat(phpFloatOf(value));
    case 'bool':
      return phpBool(value);
  }
}

/** PHP's string conversion, as `.` and `(string)` make it (src/php/string.ts), of what an expression yields. */
export function expressionString(value: ExpressionValue): string {
  if (value instanceof Instant) throw new ExpressionError('a Carbon as a string (its format) is not translated');
  try {
    return phpString(value);
  } catch (error) {
    if (error instanceof PhpStringError) throw new ExpressionError(error.message);
    throw error;
  }
}

/** The leading number of a string, as PHP 8 reads one (leading whitespace allowed), or undefined. */
const NUMERIC_PREFIX = /^[ \t\n\r\v\f]*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)/;

function phpInt(value: ExpressionValue): number | bigint {
  const v = value instanceof Instant ? value : deref(value);
  if (v === null || v === false) return 0;
  if (v === true) return 1;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'bigint') return v;
  if (v instanceof PhpFloat || typeof v === 'number') return floatToInt(typeof v === 'number' ? v : v.value);
  if (typeof v === 'string' || v instanceof Uint8Array) {
    const text = typeof v === 'string' ? v : Buffer.from(v).toString('latin1');
    const prefix = NUMERIC_PREFIX.exec(text)?.[1];
    if (prefix === undefined) return 0;
    // An integer's digits are read as one, saturating; a float's as a float, then capped.
    if (/^[+-]?\d+$/.test(prefix)) return narrow(clamp(BigInt(prefix)));
    // An infinite one ("1e400") is 0, as PHP caps only finite floats.
    const float = Number(prefix);
    if (!Number.isFinite(float)) return 0;
    return narrow(clamp(BigInt(Math.trunc(float))));
  }
  if (v instanceof Instant) throw new ExpressionError('(int) of a Carbon is not translated');
  throw new ExpressionError('(int) of an array or an object is not translated');
}

const INT_MAX = (1n << 63n) - 1n;
const INT_MIN = -(1n << 63n);
const clamp = (n: bigint) => (n > INT_MAX ? INT_MAX : n < INT_MIN ? INT_MIN : n);
const narrow = (n: bigint) => (n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n);

/** (int) of a float on 64-bit PHP: NaN and infinities are 0, the rest wraps modulo 2^64. */
function floatToInt(value: number): number | bigint {
  if (!Number.isFinite(value)) return 0;
  return narrow(BigInt.asIntN(64, BigInt(Math.trunc(value))));
}

function phpFloatOf(value: ExpressionValue): number {
  const v = value instanceof Instant ? value : deref(value);
  if (v === null || v === false) return 0;
  if (v === true) return 1;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof PhpFloat) return v.value;
  if (typeof v === 'string' || v instanceof Uint8Array) {
    const prefix = NUMERIC_PREFIX.exec(typeof v === 'string' ? v : Buffer.from(v).toString('latin1'))?.[1];
    return prefix === undefined ? 0 : Number(prefix);
  }
  throw new ExpressionError('(float) of an array, an object or a Carbon is not translated');
}

function phpBool(value: ExpressionValue): boolean {
  const v = value instanceof Instant ? value : deref(value);
  if (v === null) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (v instanceof PhpFloat) return v.value !== 0;
  if (typeof v === 'string') return v !== '' && v !== '0';
  if (v instanceof Uint8Array) return !(v.length === 0 || (v.length === 1 && v[0] === 0x30));
  if (v instanceof PhpArray) return v.size > 0;
  return true;
}

// --- what Laravel writes of each method's result -------------------------------------------------

/** A lock key's uniqueId: `'laravel_unique_job:'.$class.$uniqueId` converts it to a string. */
export const uniqueIdOfValue = (value: ExpressionValue): string => expressionString(value);

/**
 * The envelope's backoff (Queue::getJobBackoff): Arr::wrap of the value, a Carbon as the seconds
 * until it, joined with commas; null for null.
 */
export function backoffOfValue(value: ExpressionValue, now = Math.floor(Date.now() / 1000)): string | null {
  const v = value instanceof Instant ? value : deref(value);
  if (v === null) return null;
  const items = v instanceof PhpArray ? v.values.map((item) => deref(item)) : [v];
  return items.map((item) => (item instanceof Instant ? String(Math.max(0, item.timestamp - now)) : expressionString(item))).join(',');
}

/** The envelope's retryUntil (Queue::getJobExpiration): a Carbon's timestamp, else the value as it is. */
export function retryUntilOfValue(value: ExpressionValue): unknown {
  return value instanceof Instant ? value.timestamp : toJS(value);
}

/** Horizon's tags, and the envelope's displayName: the value as JSON. */
export function jsonOfValue(value: ExpressionValue): unknown {
  if (value instanceof Instant) throw new ExpressionError('a Carbon as JSON is not translated');
  return toJS(value);
}
