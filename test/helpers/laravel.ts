/**
 * Real Laravel payload fixtures, all in fixtures/laravel: the sets each Laravel version's own
 * createPayload wrote (5.8 to 12, and 13), and the set Debian's Laravel 8.83 writes here
 * (from php-fixture-gen/laravel-fixtures.php).
 */
import { existsSync, readFileSync } from 'node:fs';
import { PhpArray, PhpObject, deref, type PhpValue } from '../../src/php/index.js';
import { MODEL_IDENTIFIER } from '../../src/laravel/index.js';
import { root } from './php.js';

export interface PayloadRecord {
  name?: string;
  laravel: string;
  queue: string;
  payload: string;
  reserved: string;
  appKey?: string;
  cipher?: string;
  expect: Record<string, any>;
}

function load(path: string): PayloadRecord[] {
  if (!existsSync(path)) throw new Error(`fixture ${path} is missing`);
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as PayloadRecord);
}

/** 200 payloads, 25 from each of Laravel 5.8.38, 6.20, 7.30, 8.83, 9.52, 10.50, 11.56 and 12.67. */
export const versionPayloads = (): PayloadRecord[] => load(`${root}fixtures/laravel/versions-5.8-to-12.jsonl`);
/** 120 payloads, 60 from each of Laravel 13.0.0 and 13.26.1. */
export const laravel13Payloads = (): PayloadRecord[] => load(`${root}fixtures/laravel/versions-13.jsonl`);
export const debianPayloads = (): PayloadRecord[] => load(`${root}fixtures/laravel/payloads.jsonl`);

/** Every ModelIdentifier inside a value, depth first. */
export function modelIdentifiers(value: PhpValue, found: PhpObject[] = [], seen = new Set<object>()): PhpObject[] {
  const v = deref(value);
  if (!(v instanceof PhpObject) && !(v instanceof PhpArray)) return found;
  if (seen.has(v)) return found;
  seen.add(v);
  if (v instanceof PhpObject && v.className === MODEL_IDENTIFIER) found.push(v);
  for (const item of (v instanceof PhpObject ? v.props : v).values) modelIdentifiers(item, found, seen);
  return found;
}

/** JSON as the fixtures write it: for comparing toJS output with PHP's account. */
export function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? Number(v) : v)) ?? 'null');
}
