/**
 * Credentials never reach the terminal or a log: `lqb` prints Redis and database URLs with the
 * password replaced by `***`, and blots out, in every line it writes to standard error or as a
 * log event, each password and APP_KEY it was given.
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

/**
 * The password of every `user:password@` in the text, replaced by `***`: in a URL of any scheme
 * (a Redis URL, a database URL in a driver's message), and in a string that was meant to be one
 * and is not (`redis//user:pw@host`), which a usage error quotes.
 */
export function redactUrlPasswords(text: string): string {
  // After a scheme's '//', up to the token's last '@': a password may hold an '@' or a '/' that
  // was never encoded (a base64 password), and such a URL, unparsable, is quoted whole.
  const afterScheme = text.replace(/([a-z][a-z0-9+.-]*:\/\/)([^:@/\s"']*):[^\s"']*@/gi, `$1$2:${MASK}@`);
  // Without a scheme, up to the last '@' before a path.
  return afterScheme.replace(/(^|[\s"'/=(])([^:@/\s"'=]*):[^/\s"']*@/g, `$1$2:${MASK}@`);
}

/** A `?password=` (or `pass`, `pwd`) query parameter's value, as ioredis and database drivers read them. */
function redactPasswordParameters(text: string): string {
  return text.replace(/([?&](?:password|pass|pwd)=)[^&\s"']*/gi, `$1${MASK}`);
}

/** A URL for printing: `redis://:***@host:port/db`; the user name (no secret) is kept. */
export function redactUrl(url: string): string {
  return redactPasswordParameters(redactUrlPasswords(url));
}

/**
 * A line as it may be printed: URL passwords and every kept secret replaced by `***`. The kept
 * secrets go longest first, so a secret that contains another is hidden whole.
 */
export function redactSecrets(line: string): string {
  // A URL's password sits before an '@', a query's after an '=': a line with neither (a job's
  // line, mostly) has none, and `lqb work` writes two lines a job.
  let text = line.includes('@') || line.includes('=') ? redactUrl(line) : line;
  longestFirst ??= [...secrets].sort((a, b) => b.length - a.length);
  for (const secret of longestFirst) if (text.includes(secret)) text = text.split(secret).join(MASK);
  return text;
}
