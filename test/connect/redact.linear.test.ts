/**
 * The scrubber costs a bounded number of character reads per character of the text, whatever it
 * holds (counted by the scrubber itself, never timed), and finds exactly what the patterns it
 * replaced found: those patterns are copied here as the reference, and run on texts short enough
 * for their backtracking to finish. A cut made for a log line or a page never leaves a piece of a
 * password or a kept secret at its end.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countingVisits, cutForShowing, keepSecret, redactSecrets, redactUrl, redactUrlPasswords } from '../../src/connect/redact.js';

/** The scrubber as it was (src/connect/redact.ts before issue 42): quadratic, kept as the meaning to match. */
const reference = {
  urlPasswords(text: string): string {
    const afterScheme = text.replace(/([a-z][a-z0-9+.-]*:\/\/)([^:@/\s"']*):[^\s"']*@/gi, '$1$2:***@');
    return afterScheme.replace(/(^|[\s"'/=(])([^:@/\s"'=]*):[^/\s"']*@/g, '$1$2:***@');
  },
  url(text: string): string {
    return reference.urlPasswords(text).replace(/([?&](?:password|pass|pwd)=)[^&\s"']*/gi, '$1***');
  },
};

/**
 * Reads a walk may make per character of its text, all walks together: three walks, each reading a
 * character a few times at most. The most found: 22 a character for a run of '&' or '?' (each one
 * a query's separator to the URL rule), 23 for a text of one of them.
 */
const READS_PER_CHARACTER = 24;

/** The characters and pieces the patterns turn on, and some that only look like them. */
const PIECES = [
  ':',
  '@',
  '/',
  '=',
  '(',
  '"',
  "'",
  ' ',
  '\t',
  '\n',
  '\u00a0',
  '\u2028',
  '\ufeff',
  '?',
  '&',
  '+',
  '.',
  '-',
  '*',
  'a',
  'B',
  'z',
  '1',
  'x',
  'ſ',
  'K',
  'İ',
  '://',
  'redis',
  'HTTP',
  'password=',
  'PASS=',
  'pwd=',
  'passwd=',
  'u:p@h',
];
const piece = fc.constantFrom(...PIECES);
const shortText = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(''));

describe('the scrubber finds what the patterns it replaced found', () => {
  it('on random texts of the characters the patterns turn on', () => {
    fc.assert(
      fc.property(shortText, (text) => {
        expect(redactUrl(text), `redactUrl(${JSON.stringify(text)})`).toBe(reference.url(text));
        expect(redactUrlPasswords(text), `redactUrlPasswords(${JSON.stringify(text)})`).toBe(reference.urlPasswords(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it("with every UTF-16 code unit as the character around a password (the patterns' \\s, quotes and classes)", () => {
    for (let code = 0; code < 0x10000; code++) {
      const c = String.fromCharCode(code);
      const text = `x a:${c}b@c ${c}q:w@e${c}redis://u:v${c}w@h${c}?pwd=1${c}2 (${c}:y@z`;
      const found = redactUrl(text);
      if (found !== reference.url(text)) expect(found, `with U+${code.toString(16).padStart(4, '0')}`).toBe(reference.url(text));
    }
  });

  it('with kept secrets as well (redactSecrets)', () => {
    keepSecret('Sec:r@t=1');
    keepSecret('k3pt');
    const referenceSecrets = (line: string) => {
      let text = reference.url(line);
      for (const secret of ['Sec%3Ar%40t%3D1', 'Sec:r@t=1', 'k3pt']) text = text.split(secret).join('***');
      return text;
    };
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, fc.constantFrom('Sec:r@t=1', 'k3pt', 'Sec%3Ar%40t%3D1')), { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        expect(redactSecrets(text), `redactSecrets(${JSON.stringify(text)})`).toBe(referenceSecrets(text));
      }),
      { numRuns: 5000 },
    );
  });
});

/**
 * The reads per character scrubbing `text` took, within the bound. redactUrl walks whatever the
 * text holds (redactSecrets skips a text with no '@' and no '=', so it is asked with one added).
 */
function expectLinear(text: string, what: string): void {
  for (const [scrub, line] of [
    [redactUrl, text],
    [redactSecrets, `${text} =@`],
  ] as const) {
    const { visits } = countingVisits(() => scrub(line));
    expect(visits / line.length, `${scrub.name} of ${what} (${line.length} characters): ${visits} reads`).toBeLessThanOrEqual(
      READS_PER_CHARACTER,
    );
  }
}

const MB = 1 << 20;
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

describe('the scrubber reads each character a bounded number of times', () => {
  const adversarial: [string, (size: number) => string][] = [
    ['a JSON pad of letters then a "b=c" (the issue\'s)', (n) => `{"pad":"${'x'.repeat(n)}","a":"b=c"}`],
    ['schemes with no password ("a://" repeated)', (n) => 'a://'.repeat(n / 4)],
    ['scheme letters then "://u:" and no "@"', (n) => `${'a'.repeat(n / 2)}://u:${'p'.repeat(n / 2)}`],
    ['users after "(" with no "@" ("(" repeated, then ":")', (n) => `${'('.repeat(n)}:${'x'.repeat(64)}`],
    ['"/a:" repeated, no "@"', (n) => '/a:'.repeat(n / 3)],
    ['"=a:" repeated, an "@" at the end', (n) => `${'=a:'.repeat(n / 3)}@`],
    ['a password of "@"s after a scheme', (n) => `redis://u:${'p@'.repeat(n / 2)}`],
    ['many short passwords', (n) => ' u:p@h'.repeat(n / 6)],
    ['"?password=" repeated', (n) => '?password='.repeat(n / 10)],
    ['only "@"', (n) => '@'.repeat(n)],
    ['only ":"', (n) => ':'.repeat(n)],
    ['only "="', (n) => '='.repeat(n)],
    ['a URL with a password as long as the text', (n) => `redis://:${'A'.repeat(n)}@h`],
  ];
  for (const [what, make] of adversarial) {
    it(what, () => {
      for (const size of [10_000, 100_000, MB]) expectLinear(make(size), what);
    });
  }

  it('base64 runs up to 1 MB with "@", "=", ":", "//" sprinkled at random', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MB }),
        fc.integer({ min: 2, max: 5000 }),
        fc.constantFrom('@', '=', ':', '//', ':@', '://', ' '),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (size, every, sprinkle, seed) => {
          let state = seed;
          const parts: string[] = [];
          let length = 0;
          while (length < size) {
            state = (state * 1103515245 + 12345) >>> 0;
            const run = 1 + (state % every);
            const chars: string[] = [];
            for (let i = 0; i < run; i++) chars.push(BASE64[(state >>> (i % 24)) & 63]!);
            parts.push(chars.join(''), sprinkle);
            length += run + sprinkle.length;
          }
          expectLinear(parts.join(''), `base64 runs of up to ${every} with ${JSON.stringify(sprinkle)}`);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('a motif of the characters the patterns turn on, repeated up to 1 MB', () => {
    fc.assert(
      fc.property(shortText.filter(Boolean), fc.integer({ min: 1, max: MB }), (motif, size) => {
        expectLinear(motif.repeat(Math.ceil(size / motif.length)), `${JSON.stringify(motif)} repeated`);
      }),
      { numRuns: 40 },
    );
  });
});

describe('cutForShowing', () => {
  // Pieces of the password and the kept secret use letters nothing else holds, so any of them left shows.
  keepSecret('ZZZ ZZZZ');
  const token = fc.oneof(
    fc.constantFrom('error', 'at', 'x=1', '(', '"', 'redis://h:1', 'a/b', ' '),
    fc.integer({ min: 1, max: 30 }).map((n) => `redis://u:${'Q'.repeat(n)}@h`),
    fc.integer({ min: 1, max: 30 }).map((n) => `u:${'Q@'.repeat(n)}h`),
    fc.integer({ min: 1, max: 30 }).map((n) => `?password=${'Q'.repeat(n)}&b`),
    fc.constant('ZZZ ZZZZ'),
  );

  it('leaves no piece of a password or a kept secret, and shows what scrubbing the whole would have shown', () => {
    fc.assert(
      fc.property(
        fc.array(token, { maxLength: 60 }),
        fc.constantFrom(' ', '', ','),
        fc.integer({ min: 0, max: 400 }),
        (tokens, gap, limit) => {
          const text = tokens.join(gap);
          const cut = cutForShowing(text, limit);
          const kept = cut.replace(/… \(\d+ more characters\)$/, '');
          if (cut !== text) {
            expect(kept.length, `cut at ${limit}: ${JSON.stringify(cut)} keeps more`).toBeLessThanOrEqual(limit);
            expect(cut, `cut at ${limit}: says what it left off`).toBe(`${kept}… (${text.length - kept.length} more characters)`);
          }
          const shown = redactSecrets(cut);
          expect(shown, `cut at ${limit}: ${JSON.stringify(text)}`).not.toMatch(/[QZ]/);
          const head = redactSecrets(kept);
          expect(redactSecrets(text).startsWith(head), `cut at ${limit}: ${JSON.stringify(head)} begins the whole scrubbed`).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('says how much it left off, and leaves a short text as it is', () => {
    expect(cutForShowing('short', 10)).toBe('short');
    expect(cutForShowing(`failed: ${'x'.repeat(100)}`, 20)).toBe('failed:… (101 more characters)');
  });
});
