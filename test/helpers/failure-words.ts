/**
 * The words Laravel 12.67 and 13.26's own exception classes give a job out of attempts and a job
 * past its timeout (fixtures/laravel/failure-words.jsonl, made by php-fixture-gen/live/failure-words.php).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './php.js';

export interface FailureWords {
  laravel: string;
  outOfAttempts: { class: string; message: string };
  timedOut: { class: string; message: string };
}

export const failureWords: FailureWords[] = readFileSync(join(root, 'fixtures/laravel/failure-words.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as FailureWords);
