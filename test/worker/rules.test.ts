/**
 * The worker's per-job rules as pure functions, without Redis: backoff and timeout against what
 * Laravel 8.83's own Worker computes for the same payload and options (php-fixture-gen/
 * worker-rules.php, on a real RedisJob), and the attempts rules by how they relate.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { alreadyExceedsMaxAttempts, attemptsUsedUp, backoffFor, maxTriesOf, retryUntilOf, timeoutOf } from '../../src/worker/rules.js';
import { runPhpScript } from '../helpers/php.js';

describe('backoff and timeout, as Laravel’s Worker computes them', () => {
  const cases: { payload: Record<string, unknown>; backoff: string; timeout: number }[] = [];
  for (const attempts of [0, 1, 2, 3, 6]) {
    for (const backoff of [null, '5', '5,10,15', '0,30', '1.5,2', '-3,4', '1e3,5 s,abc, 7']) {
      for (const [flag, timeout] of [
        ['0', null],
        ['7,8', 30],
        ['12', 0],
      ] as const) {
        cases.push({ payload: { attempts, backoff, timeout, maxTries: null }, backoff: flag, timeout: 45 });
        cases.push({
          payload: { attempts, delay: backoff === null ? null : Number.parseInt(backoff, 10), timeout },
          backoff: flag,
          timeout: 60,
        });
      }
    }
  }
  const laravel = JSON.parse(runPhpScript('worker-rules.php', JSON.stringify(cases))) as { backoff: number; timeout: number }[];

  it(`${cases.length} payloads and options`, () => {
    const wrong = cases.flatMap((c, i) => {
      const attempts = Number(c.payload.attempts) + 1;
      const defaults = { backoff: c.backoff.split(',').map(Number), timeout: c.timeout };
      const ours = { backoff: backoffFor(c.payload, attempts, defaults), timeout: timeoutOf(c.payload, defaults) };
      return ours.backoff === laravel[i]!.backoff && ours.timeout === laravel[i]!.timeout
        ? []
        : [`${JSON.stringify(c)}: ours ${JSON.stringify(ours)}, Laravel's ${JSON.stringify(laravel[i])}`];
    });
    expect(wrong).toEqual([]);
  });
});

describe('attempts', () => {
  const fields = fc.record({
    maxTries: fc.option(fc.integer({ min: 0, max: 6 }), { nil: null }),
    retryUntil: fc.option(fc.integer({ min: 100, max: 110 }), { nil: null }),
  });

  it('one too many is exactly one past the last allowed, with maxTries; with retryUntil, the second after it', () => {
    fc.assert(
      fc.property(
        fields,
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 95, max: 115 }),
        fc.integer({ min: 0, max: 4 }),
        (f, attempts, now, tries) => {
          const defaults = { tries };
          if (retryUntilOf(f) !== null) {
            expect(alreadyExceedsMaxAttempts(f, attempts, now, defaults)).toBe(now > f.retryUntil!);
            expect(attemptsUsedUp(f, attempts, now, defaults)).toBe(f.retryUntil! <= now);
            return;
          }
          const maxTries = maxTriesOf(f, defaults);
          expect(maxTries).toBe(f.maxTries ?? tries);
          // 0 means no limit: never out of attempts.
          if (maxTries === 0) {
            expect([alreadyExceedsMaxAttempts(f, attempts, now, defaults), attemptsUsedUp(f, attempts, now, defaults)]).toEqual([
              false,
              false,
            ]);
            return;
          }
          expect(alreadyExceedsMaxAttempts(f, attempts, now, defaults)).toBe(
            attemptsUsedUp(f, attempts - 1, now, defaults) && attempts - 1 >= maxTries,
          );
          expect(attemptsUsedUp(f, attempts, now, defaults)).toBe(attempts >= maxTries);
        },
      ),
    );
  });

  it('timeoutAt (Laravel 5.8 to 7) stands for retryUntil', () => {
    expect(retryUntilOf({ timeoutAt: 1234, retryUntil: undefined })).toBe(1234);
    expect(alreadyExceedsMaxAttempts({ timeoutAt: 100 }, 1, 101, { tries: 1 })).toBe(true);
  });
});
