/**
 * toJS output in comparable terms: numbers (int and float alike) as {num}, lists as {list},
 * other arrays and objects as {record} in JS key order (objects with their class), bytes as
 * {bin}, and an object met again on its own path as {cycle}.
 */
import { expect } from 'vitest';
import { phpClassOf } from '../../src/php/index.js';

export function normalJS(
  js: unknown,
  open: Set<object> = new Set(),
  classOf: (object: object) => string | undefined = phpClassOf,
): unknown {
  if (js === null || typeof js === 'boolean' || typeof js === 'string') return js;
  if (typeof js === 'number')
    return { num: Object.is(js, -0) ? '-0' : Number.isNaN(js) ? 'NAN' : js === Infinity ? 'INF' : js === -Infinity ? '-INF' : String(js) };
  if (typeof js === 'bigint') return { num: String(js) };
  if (js instanceof Uint8Array) return { bin: Buffer.from(js).toString('base64') };
  const object = js as object;
  const className = classOf(object);
  if (open.has(object)) return className ? { cycle: className } : { cycle: 'array' };
  open.add(object);
  try {
    if (Array.isArray(object)) return { list: object.map((v) => normalJS(v, open, classOf)) };
    if (classOf === phpClassOf) expect(Object.getPrototypeOf(object)).toBeNull();
    const record = Object.keys(object)
      .filter((k) => classOf === phpClassOf || k !== '__PHP_Incomplete_Class_Name')
      .map((k) => [k, normalJS((object as Record<string, unknown>)[k], open, classOf)]);
    return className ? { record, class: className } : { record };
  } finally {
    open.delete(object);
  }
}
