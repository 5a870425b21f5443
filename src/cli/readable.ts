/**
 * PHP values as JSON a person can read: what `lqb decode` prints. JSON has no ints beyond 2^53,
 * no INF or NAN, no bytes and no classes, so those get a spelling of their own:
 * `{"@class": "App\\Jobs\\X", …props}`, `{"@enum": "Class::Case"}`, `{"@bytes": "<base64>"}`,
 * big ints and INF/-INF/NAN as strings, `{"@cycle": "Class"}` where an object contains itself.
 */
import { PhpArray, PhpEnum, PhpFloat, PhpObject, PhpRef, PhpSerializable, demangle, type PhpValue } from '../php/index.js';

export function readable(value: PhpValue, path: Set<object> = new Set()): unknown {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof PhpFloat) return Number.isFinite(value.value) ? value.value : String(value.value).replace('Infinity', 'INF').replace('NaN', 'NAN');
  if (value instanceof Uint8Array) return { '@bytes': Buffer.from(value).toString('base64') };
  if (value instanceof PhpRef) return readable(value.target, path);
  if (value instanceof PhpEnum) return { '@enum': `${value.className}::${value.caseName}` };
  if (value instanceof PhpSerializable) return { '@class': value.className, '@serialized': Buffer.from(value.data).toString('utf8') };
  if (path.has(value)) return { '@cycle': value instanceof PhpObject ? value.className : 'array' };
  path.add(value);
  try {
    if (value instanceof PhpArray) {
      if (value.isList()) return value.values.map((item) => readable(item, path));
      const record: Record<string, unknown> = {};
      for (const [key, item] of value) define(record, typeof key === 'string' ? key : String(key), readable(item, path));
      return record;
    }
    const record: Record<string, unknown> = { '@class': value.className };
    for (const [key, item] of value.props) {
      const prop = demangle(key);
      define(record, prop.name in record ? `${prop.declaringClass ?? '*'}::${prop.name}` : prop.name, readable(item, path));
    }
    return record;
  } finally {
    path.delete(value);
  }
}

/** Own data property even for `__proto__`, so printing never touches a prototype. */
function define(record: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}
