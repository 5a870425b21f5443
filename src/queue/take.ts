/**
 * A canary share (`--take 'App\Jobs\SendInvoice=10%'`, `worker(handlers, { take: { CLASS: 0.1 } })`): Node takes
 * that share of a class's jobs and leaves the rest where they are for PHP, each job decided once
 * by something in the job itself, so that it gets the same answer wherever and however often it
 * is asked (here, the Redis reserve's Lua, after a release) and no job is popped to be declined.
 * A job's bucket, 0 to 99:
 *   - its uuid's last four hex digits (a version 4 uuid's random part) as a number, mod 100;
 *   - without a uuid (Laravel 5.8 and 6): its Redis id's last two characters as base-62 digits
 *     (Str::random's letters), or its database row's id, mod 100.
 * Node takes the job when its bucket is below the share. A job keeps its uuid through a release,
 * a backoff and `queue:retry`, so it stays on its side; Horizon's retry gives it a new uuid, so
 * it is decided again.
 */

/** Shares by class as the reserve steps read them: whole percents, 0 to 100. */
export type TakeShares = Readonly<Record<string, number>>;

/**
 * The worker's `take` option (`{ CLASS: 0.1 }`, a fraction of the class's jobs) as the percents
 * the reserve steps compare buckets with. A fraction is a whole percent (a bucket is one of a
 * hundred): 0.1 is 10, and 0.125 is refused where the option is checked (WorkerOptions.ts).
 */
export function percentShares(fractions: Readonly<Record<string, number>>): TakeShares {
  return Object.fromEntries(Object.entries(fractions).map(([className, fraction]) => [className, Math.round(fraction * 100)]));
}

/** Whether a fraction is a whole percent from 0 to 1 (0.1, 0.07, 1; not 0.125, not 10). */
export function isWholePercent(fraction: unknown): boolean {
  if (typeof fraction !== 'number' || !(fraction >= 0 && fraction <= 1)) return false;
  return Math.abs(fraction * 100 - Math.round(fraction * 100)) < 1e-9;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A job's bucket (0 to 99) from its uuid, else its id (a Redis payload's string, a database row's number); undefined with neither. */
export function takeBucket(uuid: string | undefined, id: string | number | undefined): number | undefined {
  if (uuid !== undefined && /[0-9a-fA-F]{4}$/.test(uuid)) return Number.parseInt(uuid.slice(-4), 16) % 100;
  if (typeof id === 'number') return id % 100;
  if (id === undefined || id.length < 2) return undefined;
  const [high, low] = [BASE62.indexOf(id.at(-2)!), BASE62.indexOf(id.at(-1)!)];
  return high < 0 || low < 0 ? undefined : (high * 62 + low) % 100;
}

/** Whether Node takes a job of `className` (one it handles) in bucket `bucket`: all of a class with no share; none of a job with no bucket. */
export function takesBucket(shares: TakeShares | undefined, className: string, bucket: number | undefined): boolean {
  const share = shares?.[className];
  if (share === undefined) return true;
  return bucket !== undefined && bucket < share;
}

/**
 * `CLASS=P%` (the % may be left out) as [class, percent], or a one-line reason it is not: a whole
 * percent from 0 to 100, since a job's bucket is one of a hundred.
 */
export function parseTake(text: string): [className: string, percent: number] | string {
  const match = /^(.+?)=\s*(\d+(?:\.\d+)?)\s*%?$/.exec(text.trim());
  if (!match) return `${JSON.stringify(text)} is not CLASS=PERCENT%, e.g. 'App\\Jobs\\SendInvoice=10%'`;
  const percent = Number(match[2]);
  if (!Number.isInteger(percent) || percent > 100) return `${JSON.stringify(text)}: the share is a whole percent from 0 to 100`;
  return [match[1]!.trim(), percent];
}

/**
 * The value of a JSON string field near a payload's head (`"uuid":"`), as JSON spells it, or
 * undefined: the first such key, which in Laravel's envelope is the envelope's own.
 */
function headField(head: string, field: string): string | undefined {
  const marker = `"${field}":"`;
  const start = head.indexOf(marker);
  if (start < 0) return undefined;
  const from = start + marker.length;
  for (let i = from; i < head.length; i++) {
    const c = head.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return head.slice(from, i);
  }
  return undefined;
}

/**
 * Whether a worker taking `classes` with `shares` takes a job from its payload's head (its first
 * few KB) and, on the database, its row id: its displayName (else its commandName) handled, and
 * within its class's share.
 */
export function takesHead(classes: readonly string[], shares: TakeShares | undefined, head: string, rowId?: number): boolean {
  const named = [headField(head, 'displayName'), headField(head, 'commandName')].map((json) =>
    json === undefined ? undefined : jsonText(json),
  );
  const className = named.find((name) => name !== undefined && classes.includes(name));
  if (className === undefined) return false;
  return takesBucket(shares, className, takeBucket(headField(head, 'uuid'), rowId ?? headField(head, 'id')));
}

/** A JSON string's inside as text (escapes read). */
function jsonText(inside: string): string {
  try {
    return JSON.parse(`"${inside}"`) as string;
  } catch {
    return inside;
  }
}
