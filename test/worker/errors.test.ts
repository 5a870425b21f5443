/**
 * The exception text of a failed-jobs record, against the layout of PHP's own (string) $e.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { exceptionText } from '../../src/worker/errors.js';
import { php } from '../helpers/php.js';

/** `Class: message in FILE:LINE`, `Stack trace:`, numbered frames, the last `{main}`. */
const LAYOUT = /^(\S+): ([^]*) in (.+):(\d+)\nStack trace:\n(?:#\d+ .+\n)*#(\d+) \{main\}$/;

describe('exceptionText', () => {
  it("lays an error out as PHP's (string) $e does, naming the file and line it was thrown at", () => {
    const phpText = php(`function thrower() { throw new RuntimeException("boom"); } try { thrower(); } catch (Exception $e) { echo (string) $e; }`).toString();
    expect(phpText).toMatch(LAYOUT);

    const thrower = () => {
      throw new RangeError('boom');
    };
    let text = '';
    try {
      thrower();
    } catch (error) {
      text = exceptionText(error);
    }
    const [, name, message, file, line, last] = LAYOUT.exec(text) ?? [];
    expect([name, message, file]).toEqual(['RangeError', 'boom', fileURLToPath(import.meta.url)]);
    expect(Number(line)).toBeGreaterThan(10);
    expect(Number(last)).toBe(text.split('\n').length - 3);
  });
});
