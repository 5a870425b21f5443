/**
 * "This column holds this text", in each dialect's SQL, for the payload and exception columns
 * Laravel writes: PostgreSQL by `strpos` (its planner reckons `like '%…%'` matches almost no row
 * and would read and sort every row rather than walk the key), the others by LIKE with '!'
 * escaping its wildcards, so a backslash (in every class name) is plain text on every engine.
 */
import { encodeString } from '../laravel/json.js';
import type { Dialect } from './url.js';

/** The condition, its one parameter made by containsParam. */
export function containsSql(dialect: Dialect, column: string): string {
  return dialect === 'pgsql' ? `strpos(${column}, ?) > 0` : `${column} like ? escape '!'`;
}

/** containsSql's parameter for `text`. */
export function containsParam(dialect: Dialect, text: string): string {
  return dialect === 'pgsql' ? text : `%${text.replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

/** The texts by which a payload names its job's class: `"displayName":` or `"commandName":`, in each JSON spelling Laravel writes. */
export function classNamingTexts(className: string): string[] {
  const spelled = new Set([encodeString(className, false), encodeString(className, true)]);
  return [...spelled].flatMap((json) => [`"displayName":${json}`, `"commandName":${json}`]);
}
