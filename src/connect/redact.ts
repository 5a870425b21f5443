/**
 * Credentials never reach the terminal or a log: `lqb` prints Redis and database URLs with the
 * password replaced by `***`, and blots out, in every line it writes to standard error or as a
 * log event, each password and APP_KEY it was given.
 *
 * Every scrub is one left-to-right walk over the text's char codes, never a backtracking pattern:
 * a line may be a job's megabyte of base64, and the walk costs a bounded number of reads per
 * character whatever the text holds (test/connect/redact.linear.test.ts counts them). What each
 * walk finds is exactly what the patterns it replaced found (the differential test holds them side
 * by side): a pattern's meaning is kept, its cost is not.
 */

const MASK = '***';

/** The secrets this process was given (passwords, APP_KEY), longest first when applied. */
const secrets = new Set<string>();
/** The secrets longest first, sorted once after each one kept rather than for every line. */
let longestFirst: string[] | undefined;

/**
 * Remembers a secret so no line `redactSecrets` passes shows it, as given or URL-encoded (the
 * form it takes inside a URL). Called where the connection settings are read.
 */
export function keepSecret(value: string | undefined): void {
  if (!value) return;
  longestFirst = undefined;
  secrets.add(value);
  secrets.add(encodeURIComponent(value));
  try {
    secrets.add(decodeURIComponent(value));
  } catch {
    // A value that is no valid URL encoding has no decoded form to hide.
  }
}

/** Characters read by the walks since the process started: a test's measure of their cost, never a clock. */
let visited = 0;

/** How many characters the walks read while `run` ran, with what it returned. */
export function countingVisits<T>(run: () => T): { result: T; visits: number } {
  const before = visited;
  const result = run();
  return { result, visits: visited - before };
}

/**
 * The password of every `user:password@` in the text, replaced by `***`: in a URL of any scheme
 * (a Redis URL, a database URL in a driver's message), and in a string that was meant to be one
 * and is not (`redis//user:pw@host`), which a usage error quotes.
 */
export function redactUrlPasswords(text: string): string {
  // After a scheme's '//', up to the token's last '@': a password may hold an '@' or a '/' that
  // was never encoded (a base64 password), and such a URL, unparsable, is quoted whole.
  // Then, without a scheme, up to the last '@' before a path.
  return maskPasswordsWithoutScheme(maskPasswordsAfterScheme(text));
}

/** A URL for printing: `redis://:***@host:port/db`; the user name (no secret) is kept. */
export function redactUrl(url: string): string {
  return maskPasswordParameters(redactUrlPasswords(url));
}

/**
 * A line as it may be printed: URL passwords and every kept secret replaced by `***`. The kept
 * secrets go longest first, so a secret that contains another is hidden whole.
 */
export function redactSecrets(line: string): string {
  // A URL's password sits before an '@', a query's after an '=': a line with neither (a job's
  // line, mostly) has none, and `lqb work` writes two lines a job.
  const text = line.includes('@') || line.includes('=') ? redactUrl(line) : line;
  return hideKeptSecrets(text);
}

/** The most characters of one log line's own text: a line quoting a megabyte says how much more there was. */
export const LINE_SHOWN = 8192;

/** A log line as printed: cut to LINE_SHOWN characters first, then scrubbed, so its cost is bounded whatever it quotes. */
export function redactLine(line: string): string {
  return redactSecrets(cutForShowing(line, LINE_SHOWN));
}

/**
 * Every kept secret replaced by `***`, longest first, and nothing else: what a download of a
 * job's raw payload goes through (the payload is the user's; the process's own passwords and
 * APP_KEY are not). Each secret is one native search along the text (V8's string search, linear
 * in the text), so the cost is the text's length times the number of secrets.
 */
export function hideKeptSecrets(text: string): string {
  longestFirst ??= [...secrets].sort((a, b) => b.length - a.length);
  for (const secret of longestFirst) if (text.includes(secret)) text = text.split(secret).join(MASK);
  return text;
}

/**
 * `text` cut to at most `limit` characters for a log line or a page, before it is scrubbed, with
 * what was left off said: `… (N more characters)`. The cut never leaves part of a secret at its
 * end: it falls back before the word it would split (a URL's password runs to the next space or
 * quote, so a URL is kept whole or not at all) and before any beginning of a kept secret, so
 * scrubbing the cut text hides all that scrubbing the whole text would have hidden of it.
 */
export function cutForShowing(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const kept = keptForShowing(text, limit);
  return `${kept}… (${text.length - kept.length} more characters)`;
}

/** What cutForShowing keeps of a text: at most `limit` characters, cut at a word's start and never inside a kept secret. */
export function keptForShowing(text: string, limit: number): string {
  return text.length <= limit ? text : text.slice(0, safeCutBefore(text, limit));
}

/** Rounds of falling back before the cut is made at nothing: each round's steps are bounded by the secrets' lengths. */
const CUT_ROUNDS = 8;

/** Where `text` may be cut at or before `limit`: a word's start, and no kept secret's beginning just before it. */
function safeCutBefore(text: string, limit: number): number {
  longestFirst ??= [...secrets].sort((a, b) => b.length - a.length);
  let end = limit;
  for (let round = 0; round < CUT_ROUNDS; round++) {
    end = wordStartAtOrBefore(text, end);
    let overlap = 0;
    for (const secret of longestFirst) overlap = Math.max(overlap, secretBeginningBefore(text, end, secret));
    if (overlap === 0) return end;
    end -= overlap;
  }
  return 0;
}

/** The last place at or before `end` that no URL token runs across: after a space or a quote, or 0. */
function wordStartAtOrBefore(text: string, end: number): number {
  // The char at `end` is the first one left off: a cut just before a boundary splits nothing.
  for (let i = end; i > 0; i--) if (endsToken(text.charCodeAt(i))) return i;
  return 0;
}

/** The longest part of `text` ending at `end` that begins `secret` (and is not all of it); 0 when none. */
function secretBeginningBefore(text: string, end: number, secret: string): number {
  for (let length = Math.min(secret.length - 1, end); length > 0; length--)
    if (text.startsWith(secret.slice(0, length), end - length)) return length;
  return 0;
}

// The characters the walks test, by code.
const COLON = 0x3a;
const AT = 0x40;
const SLASH = 0x2f;
const EQUALS = 0x3d;
const PAREN = 0x28;
const QUOTE = 0x22;
const APOSTROPHE = 0x27;
const QUESTION = 0x3f;
const AMPERSAND = 0x26;

/** JavaScript's `\s`: ECMAScript's WhiteSpace and LineTerminator, as a pattern's `\s` reads them. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** A space or a quote: where every password the walks find has ended. */
function endsToken(c: number): boolean {
  return c === QUOTE || c === APOSTROPHE || isSpace(c);
}

const isLetter = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
/** A URL scheme's characters after its first letter (RFC 3986): letters, digits, '+', '.', '-'. */
const inScheme = (c: number): boolean => isLetter(c) || isDigit(c) || c === 0x2b || c === 0x2e || c === 0x2d;

/** A user name after a scheme: anything up to ':' but '@', '/', a space or a quote. */
const inUserAfterScheme = (c: number): boolean => c !== COLON && c !== AT && c !== SLASH && !endsToken(c);
/** A user name without a scheme: as after one, and no '=' (a query's `name=` is no user). */
const inUserWithoutScheme = (c: number): boolean => inUserAfterScheme(c) && c !== EQUALS;
/** A password after a scheme runs to a space or a quote: it may hold '/' and '@' never encoded. */
const inPasswordAfterScheme = (c: number): boolean => !endsToken(c);
/** A password without a scheme runs to a path's '/' as well. */
const inPasswordWithoutScheme = (c: number): boolean => c !== SLASH && !endsToken(c);
/** What may stand before a scheme-less `user:`: a space, a quote, '/', '=', '('. */
const opensUserWithoutScheme = (c: number): boolean => c === SLASH || c === EQUALS || c === PAREN || endsToken(c);

/**
 * The end of the run of characters `inRun` takes from `from`, remembered: the walks ask for the
 * run from places that only move right, and every place inside a run it has measured shares that
 * run's end, so each character is read once however often it is asked about.
 */
class RunEnds {
  private start = -1;
  private end = -1;
  /** The last '@' in [start, end), or -1. */
  private lastAt = -1;

  constructor(
    private readonly text: string,
    private readonly inRun: (c: number) => boolean,
  ) {}

  /** Where the run from `from` ends (the first character it does not take, or the text's end). */
  endFrom(from: number): number {
    this.measure(from);
    return this.end;
  }

  /** The last '@' in the run from `from`, or -1. */
  lastAtFrom(from: number): number {
    this.measure(from);
    return this.lastAt >= from ? this.lastAt : -1;
  }

  private measure(from: number): void {
    if (from >= this.start && from <= this.end) return;
    const text = this.text;
    let i = from;
    let lastAt = -1;
    while (i < text.length) {
      visited++;
      const c = text.charCodeAt(i);
      if (!this.inRun(c)) break;
      if (c === AT) lastAt = i;
      i++;
    }
    this.start = from;
    this.end = i;
    this.lastAt = lastAt;
  }
}

/** The text with the characters between each [from, to) pair replaced by `***`, pairs in order. */
function masked(text: string, spans: number[]): string {
  if (spans.length === 0) return text;
  let out = '';
  let kept = 0;
  for (let i = 0; i < spans.length; i += 2) {
    out += text.slice(kept, spans[i]) + MASK;
    kept = spans[i + 1]!;
  }
  return out + text.slice(kept);
}

/**
 * `scheme://user:password@`: the scheme a letter and then letters, digits, '+', '.', '-'; the
 * password from the first ':' after the user to the last '@' before a space or a quote. Walks the
 * text once, keeping where the current run of scheme characters has its first letter.
 */
function maskPasswordsAfterScheme(text: string): string {
  const users = new RunEnds(text, inUserAfterScheme);
  const passwords = new RunEnds(text, inPasswordAfterScheme);
  const spans: number[] = [];
  let letterInScheme = false;
  let i = 0;
  while (i < text.length) {
    visited++;
    const c = text.charCodeAt(i);
    if (inScheme(c)) {
      letterInScheme ||= isLetter(c);
      i++;
      continue;
    }
    const schemeBefore = letterInScheme;
    letterInScheme = false;
    if (!schemeBefore || c !== COLON || text.charCodeAt(i + 1) !== SLASH || text.charCodeAt(i + 2) !== SLASH) {
      i++;
      continue;
    }
    visited += 2;
    const at = passwordEnd(text, i + 3, users, passwords);
    if (at < 0) {
      i++;
      continue;
    }
    spans.push(users.endFrom(i + 3) + 1, at);
    i = at + 1;
  }
  return masked(text, spans);
}

/**
 * Where a password that begins `user:` at `from` ends: its last '@' (the password is between
 * the ':' and it), or -1 when there is no ':' after the user or no '@' after the ':'.
 */
function passwordEnd(text: string, from: number, users: RunEnds, passwords: RunEnds): number {
  const colon = users.endFrom(from);
  visited++;
  if (text.charCodeAt(colon) !== COLON) return -1;
  return passwords.lastAtFrom(colon + 1);
}

/**
 * `user:password@` without a scheme: at the text's start or after a space, a quote, '/', '=' or
 * '('; the user without '=', the password up to the last '@' before a '/', a space or a quote.
 */
function maskPasswordsWithoutScheme(text: string): string {
  const users = new RunEnds(text, inUserWithoutScheme);
  const passwords = new RunEnds(text, inPasswordWithoutScheme);
  const spans: number[] = [];
  let i = 0;
  // At the start, the user begins at 0; a '(' opening the text is a user's character all the
  // same, and any other opener is none, so the user then begins after it.
  if (text.length > 0) {
    visited++;
    const first = text.charCodeAt(0);
    const from = opensUserWithoutScheme(first) && first !== PAREN ? 1 : 0;
    const at = passwordEnd(text, from, users, passwords);
    if (at >= 0) {
      spans.push(users.endFrom(from) + 1, at);
      i = at + 1;
    } else i = 1;
  }
  while (i < text.length) {
    visited++;
    if (!opensUserWithoutScheme(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const at = passwordEnd(text, i + 1, users, passwords);
    if (at < 0) {
      i++;
      continue;
    }
    spans.push(users.endFrom(i + 1) + 1, at);
    i = at + 1;
  }
  return masked(text, spans);
}

/** The parameter names whose value is a password, as ioredis and the database drivers read them, longest tried first. */
const PASSWORD_PARAMETERS = ['password', 'pass', 'pwd'];

/** A `?password=` (or `pass`, `pwd`, in any case) query parameter's value, up to '&', a space or a quote. */
function maskPasswordParameters(text: string): string {
  const spans: number[] = [];
  let i = 0;
  while (i < text.length) {
    visited++;
    const c = text.charCodeAt(i);
    const named = c === QUESTION || c === AMPERSAND ? passwordParameterAt(text, i + 1) : -1;
    if (named < 0) {
      i++;
      continue;
    }
    let end = named;
    while (end < text.length) {
      visited++;
      const v = text.charCodeAt(end);
      if (v === AMPERSAND || endsToken(v)) break;
      end++;
    }
    spans.push(named, end);
    i = end;
  }
  return masked(text, spans);
}

/** Where the value begins when a password parameter's `name=` begins at `from`, else -1. */
function passwordParameterAt(text: string, from: number): number {
  for (const name of PASSWORD_PARAMETERS) {
    visited += name.length + 1;
    if (
      text.length - from > name.length &&
      text.slice(from, from + name.length).toLowerCase() === name &&
      text.charCodeAt(from + name.length) === EQUALS
    )
      return from + name.length + 1;
  }
  return -1;
}
