/**
 * Which side a failure's exception text says ran the job, on real texts only: PHP's from Laravel
 * 8.83's worker failing a job (the failed record Horizon 5.22.1 kept, fixtures/horizon/events.jsonl)
 * and from Debian's PHP, Node's from the worker's exceptionText of errors Node itself threw.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sideOfException } from '../../src/ui/side.js';
import { exceptionText, manualFailure, MaxAttemptsExceededError } from '../../src/worker/errors.js';
import { exceptionText as horizonExceptionText } from '../../src/horizon/HorizonRecorder.js';
import { php, root } from '../helpers/php.js';

/** The exceptions Laravel 8.83's worker recorded in the fixture's failed Horizon records. */
function laravelExceptions(): string[] {
  const texts = new Set<string>();
  const find = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(find);
    else if (value !== null && typeof value === 'object')
      for (const [key, item] of Object.entries(value)) {
        if (key === 'exception' && typeof item === 'string' && item !== '') texts.add(item);
        else find(item);
      }
  };
  for (const line of readFileSync(join(root, 'fixtures/horizon/events.jsonl'), 'utf8').split('\n').filter(Boolean)) find(JSON.parse(line));
  return [...texts];
}

/** What a function throws, through the worker's exceptionText. */
function nodeText(thrower: () => unknown): string {
  try {
    thrower();
  } catch (error) {
    return exceptionText(error);
  }
  throw new Error('the thrower did not throw');
}

describe('sideOfException: PHP', () => {
  it("says php for the exception Laravel 8.83's worker recorded failing a job", () => {
    const texts = laravelExceptions();
    expect(texts.length, 'failed records in the fixture').toBeGreaterThan(0);
    for (const text of texts) {
      expect(text, 'a Laravel-made trace').toMatch(/\nStack trace:\n#0 \/usr\/share\/php\/Illuminate\//);
      expect(sideOfException(text), text.split('\n')[0]).toBe('php');
    }
  });

  it("says php for PHP's own texts: [internal function] frames, a chain whose outer exception has only {main}", () => {
    const chained = php(
      'function f(){ array_map(function($x){ throw new LogicException("inner"); }, [1]); } ' +
        'try { f(); } catch (Exception $e) { echo new RuntimeException("outer", 0, $e); }',
    ).toString();
    expect(chained, 'PHP wrote a chain').toMatch(/#0 \[internal function\]: [^]*\nNext RuntimeException: outer[^]*#0 \{main\}$/);
    expect(sideOfException(chained)).toBe('php');
  });

  it("reads the trace, not a message that quotes Node's frames", () => {
    const text = php(
      'function f(){ throw new RuntimeException("node said: #0 run (/app/worker.js:12:5)\\n#1 /app/worker.js:3:1"); } ' +
        'try { f(); } catch (Exception $e) { echo $e; }',
    ).toString();
    expect(sideOfException(text)).toBe('php');
  });
});

describe('sideOfException: Node', () => {
  it("says node for the worker's text of an Error a handler threw, and of its causes", () => {
    const thrown = nodeText(() => {
      throw new Error('outer', { cause: new TypeError('inner') });
    });
    expect(thrown, 'a chain, as PHP writes previous exceptions').toMatch(/^TypeError: inner [^]*\n\nNext Error: outer/);
    expect(sideOfException(thrown)).toBe('node');
  });

  it("says node for errors Node's own code threw (JSON.parse, fs) and for the worker's own failures", () => {
    const parse = nodeText(() => JSON.parse('{'));
    expect(parse).toMatch(/^SyntaxError: /);
    expect(sideOfException(parse)).toBe('node');
    const fs = nodeText(() => readFileSync('/nonexistent/lqb-side-test'));
    expect(fs).toMatch(/^Error: ENOENT/);
    expect(sideOfException(fs)).toBe('node');
    expect(sideOfException(exceptionText(new MaxAttemptsExceededError('App\\Jobs\\X')))).toBe('node');
    expect(sideOfException(exceptionText(manualFailure('no reason')))).toBe('node');
  });

  it('reads the trace, not a message that quotes a PHP trace', () => {
    const body = 'upstream failed:\nStack trace:\n#0 /app/Http/Controller.php(12): App\\Foo->bar()\n#1 {main}';
    const text = nodeText(() => {
      throw new Error(body);
    });
    expect(sideOfException(text)).toBe('node');
  });

  it("says node for a V8 stack, as the library's Horizon recorder keeps an Error handed to it", () => {
    const text = horizonExceptionText(new RangeError('out of range'));
    expect(text).toMatch(/^RangeError: out of range\n\s+at /);
    expect(sideOfException(text)).toBe('node');
  });
});

describe('sideOfException: not known', () => {
  it('says nothing when no frame names a place', () => {
    const phpTop = php('echo new Exception("made at the top");').toString();
    expect(phpTop).toMatch(/\nStack trace:\n#0 \{main\}$/);
    expect(sideOfException(phpTop), "PHP's, with only {main}").toBeNull();
    // What a handler's `throw 'a string'` is recorded as.
    const thrownString = exceptionText('a string');
    expect(thrownString).toBe('Error: a string\nStack trace:\n#0 {main}');
    expect(sideOfException(thrownString), "Node's, of a thrown non-Error").toBeNull();
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    const bare = new Error('no frames');
    Error.stackTraceLimit = limit;
    expect(sideOfException(exceptionText(bare)), 'an Error with no stack frames').toBeNull();
    for (const empty of ['', null, undefined, 'just a message']) expect(sideOfException(empty), String(empty)).toBeNull();
  });

  it('says nothing when the frames are of both kinds', () => {
    const phpFrame = laravelExceptions()[0]!.split('\n')[2]!;
    const nodeFrame = exceptionText(new Error('x')).split('\n')[2]!;
    expect([phpFrame, nodeFrame].map((frame) => frame.slice(0, 3))).toEqual(['#0 ', '#0 ']);
    const mixed = `Error: mixed\nStack trace:\n${phpFrame}\n${nodeFrame.replace('#0', '#1')}\n#2 {main}`;
    expect(sideOfException(mixed)).toBeNull();
  });
});
