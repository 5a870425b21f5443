/**
 * The timeout race both a handler and its failed() hook run against (src/worker/timeout.ts).
 */
import { describe, expect, it } from 'vitest';
import { withinTimeout } from '../../src/worker/timeout.js';

describe('withinTimeout', () => {
  it('is done for a call that settles in time, and for any call with no limit', async () => {
    expect(await withinTimeout(async () => 'ok', 5), 'an async call that returned at once').toBe('done');
    expect(await withinTimeout(() => 'ok', 0), 'a call with no limit (0 s)').toBe('done');
  });

  it('throws what a call throws in time, also when it throws as it is called', async () => {
    await expect(
      withinTimeout(async () => Promise.reject(new Error('async throw')), 5),
      'an async throw',
    ).rejects.toThrow('async throw');
    await expect(
      withinTimeout(() => {
        throw new Error('sync throw');
      }, 5),
      'a throw as it is called',
    ).rejects.toThrow('sync throw');
    await expect(
      withinTimeout(async () => Promise.reject(new Error('unlimited')), 0),
      'a throw with no limit',
    ).rejects.toThrow('unlimited');
  });

  it('is timeout for a call that never settles', async () => {
    expect(await withinTimeout(() => new Promise(() => undefined), 0.05), 'a call that never settles').toBe('timeout');
  });

  it('is late for a call that blocked the event loop past its deadline, whether it returned or threw', async () => {
    const block = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    expect(await withinTimeout(() => block(80), 0.02), 'a blocking call that returned').toBe('late');
    expect(
      await withinTimeout(() => {
        block(80);
        throw new Error('after the deadline');
      }, 0.02),
      'a blocking call that threw',
    ).toBe('late');
  });

  it('a thenable that is no Promise is waited for; a value whose then cannot be read is a throw', async () => {
    let settle: (() => void) | undefined;
    const thenable = { then: (done: () => void) => (settle = done) };
    const waiting = withinTimeout(() => thenable, 5);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settle, 'the thenable was asked to settle').toBeTypeOf('function');
    settle!();
    expect(await waiting, 'a thenable that settled in time').toBe('done');
    const hostile = Object.defineProperty({}, 'then', {
      get() {
        throw new Error('then cannot be read');
      },
    });
    await expect(
      withinTimeout(() => hostile, 5),
      'with a limit',
    ).rejects.toThrow('then cannot be read');
    await expect(
      withinTimeout(() => hostile, 0),
      'with no limit',
    ).rejects.toThrow('then cannot be read');
  });

  it('a call that returns no promise is done at once, with a limit or without', async () => {
    expect(await withinTimeout(() => undefined, 5), 'a plain function with a limit').toBe('done');
    expect(await withinTimeout(() => 42, 0), 'a plain function with no limit').toBe('done');
  });
});
