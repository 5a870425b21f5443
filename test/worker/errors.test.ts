/**
 * The failures a worker records, worded as the app's Laravel version words them: 8.x to 10.9 one
 * way (checked against Debian's Laravel 8.83 in test/e2e), 10.10 on another (the words Laravel
 * 12.67 and 13.26's own exception classes gave, fixtures/laravel/failure-words.jsonl).
 */
import { describe, expect, it } from 'vitest';
import { MaxAttemptsExceededError, failureWording, timedOutFailure } from '../../src/worker/errors.js';
import { failureWords } from '../helpers/failure-words.js';

describe('failureWording', () => {
  it.each([
    ['8.83.26', 'before-10.10'],
    ['v9.52.16', 'before-10.10'],
    ['10.9.0', 'before-10.10'],
    ['10', 'before-10.10'],
    ['10.10.0', 'from-10.10'],
    ['11', 'from-10.10'],
    ['12.67.0', 'from-10.10'],
    ['v13.26.1', 'from-10.10'],
  ] as const)('Laravel %s words its failures %s', (version, wording) => {
    expect(failureWording(version)).toBe(wording);
  });

  it('without a version, reads the envelope: createdAt (12.11+) means the newer words, none the older', () => {
    expect(failureWording(undefined, { uuid: 'u', createdAt: 1700000000 }), 'an envelope with createdAt').toBe('from-10.10');
    expect(failureWording(undefined, { uuid: 'u' }), 'an envelope without it').toBe('before-10.10');
    expect(failureWording('not a version', { uuid: 'u' }), 'a version that reads as none').toBe('before-10.10');
    expect(failureWording('8.83.26', { createdAt: 1 }), 'a known version wins over the envelope').toBe('before-10.10');
  });
});

describe.each(failureWords)('the failures a Laravel $laravel app records', (words) => {
  const wording = failureWording(words.laravel);

  it('out of attempts: the class and message its MaxAttemptsExceededException::forJob gives', () => {
    const error = new MaxAttemptsExceededError('App\\Jobs\\Slow', wording);
    expect([error.name, error.message]).toEqual([words.outOfAttempts.class, words.outOfAttempts.message]);
  });

  it('past its timeout: the class and message its TimeoutExceededException::forJob gives', () => {
    const error = timedOutFailure('App\\Jobs\\Slow', wording);
    expect([error.name, error.message]).toEqual([words.timedOut.class, words.timedOut.message]);
  });
});
