/**
 * fixtures/laravel/unique-12-13.jsonl: what Laravel 12.67 and 13.26's own dispatch() pushed for
 * unique jobs, with the lock each took (see fixtures/README.md). Read once per test file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './php.js';

export interface UniqueRecord {
  laravel: string;
  kind: string;
  class: string;
  payload: string;
  lock: { db: number; key: string; value: string; ttl: number } | null;
}

export function uniqueRecords(): UniqueRecord[] {
  return readFileSync(join(root, 'fixtures/laravel/unique-12-13.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as UniqueRecord);
}
