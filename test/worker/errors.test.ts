/**
 * The exception text of a failed-jobs record, against the layout of PHP's own (string) $e.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ManuallyFailedError, exceptionText, manualFailure } from '../../src/worker/errors.js';
import { php } from '../helpers/php.js';

/** `Class: message in FILE:LINE`, `Stack trace:`, numbered frames, the last `{main}`. */
const LAYOUT = /^(\S+): ([^]*) in (.+):(\d+)\nStack trace:\n(?:#\d+ .+\n)*#(\d+) \{main\}$/;

describe('exceptionText', () => {
  it("lays an error out as PHP's (string) $e does, naming the file and line it was thrown at", () => {
    const phpText = php(
      `function thrower() { throw new RuntimeException("boom"); } try { thrower(); } catch (Exception $e) { echo (string) $e; }`,
    ).toString();
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

  it('leaves an empty message out, and writes a chain of causes deepest first, each outer one after "Next", as PHP does', () => {
    const phpText = php(
      `function thrower() { throw new RuntimeException("outer", 0, new LogicException("", 0, new Exception("root"))); } try { thrower(); } catch (Exception $e) { echo (string) $e; }`,
    ).toString();
    const named = (name: string, message: string, cause?: Error) => Object.assign(new Error(message, { cause }), { name });
    const ours = exceptionText(named('RuntimeException', 'outer', named('LogicException', '', named('Exception', 'root'))));
    expect(headlines(ours), ours).toEqual(headlines(phpText));
    expect(headlines(phpText), phpText).toEqual([
      ['Exception', 'root'],
      ['LogicException', undefined],
      ['RuntimeException', 'outer'],
    ]);
    for (const part of ours.split('\n\nNext '))
      expect(part.split('\n').at(-1), `each exception of the chain ends its trace: ${part}`).toMatch(/^#\d+ \{main\}$/);
  });
});

describe('job.fail(error?)', () => {
  it('without a reason: a ManuallyFailedException with no message, laid out as PHP writes `(string) new ManuallyFailedException`', () => {
    const phpFirst = php(`echo (string) new RuntimeException();`).toString().split('\n')[0]!;
    expect(phpFirst).toMatch(/^RuntimeException in [^:]+:\d+$/);
    const ours = exceptionText(manualFailure(undefined)).split('\n')[0]!;
    expect(ours).toMatch(/^Illuminate\\Queue\\ManuallyFailedException in \S+:\d+$/);
  });

  it("a string: a ManuallyFailedException with it as the message (Laravel 9+’s fail('reason')); an Error as it is", () => {
    const failure = manualFailure('the card was declined');
    expect(failure).toBeInstanceOf(ManuallyFailedError);
    expect(exceptionText(failure).split('\n')[0]).toMatch(/^Illuminate\\Queue\\ManuallyFailedException: the card was declined in \S+:\d+$/);
    const error = new TypeError('typed');
    expect(manualFailure(error)).toBe(error);
  });
});

/** Each exception's class and message (undefined when PHP left it out), from the headline lines of a record. */
function headlines(text: string): [string, string | undefined][] {
  return text
    .split('\n')
    .map((line) => /^(?:Next )?(\S+?)(?:: (.*))? in (.+):(\d+)$/.exec(line))
    .filter((match) => match !== null)
    .map((match) => [match[1]!, match[2]]);
}
