/**
 * Laravel's Worker rules for one job, as pure functions of its envelope, its attempt and the
 * worker's options: when it is out of attempts, how long it may run, how long it waits before
 * its next try. The Worker applies them; nothing here touches Redis.
 */
import { jsonNumber, type JsonObject, type JsonValue } from '../laravel/index.js';

/** The envelope fields the rules read (as decoded, or as JSON.parse reads the reserved copy). */
export type RuleFields =
  Pick<JsonObject, 'maxTries' | 'retryUntil' | 'timeoutAt' | 'timeout' | 'backoff' | 'delay'> | Record<string, unknown>;

/** The worker's defaults the payload may override (`--tries`, `--timeout`, `--backoff`). */
export interface RuleDefaults {
  tries: number;
  timeout: number;
  backoff: number[];
}

const numberOf = (value: unknown): number | undefined => {
  const n = jsonNumber(value as JsonValue | undefined);
  return n !== undefined && Number.isFinite(n) ? n : undefined;
};

/** `maxTries` from the payload, else `--tries`. */
export function maxTriesOf(fields: RuleFields, defaults: Pick<RuleDefaults, 'tries'>): number {
  return numberOf(fields.maxTries) ?? defaults.tries;
}

/** `retryUntil` (`timeoutAt` before 8), UNIX seconds, or null. */
export function retryUntilOf(fields: RuleFields): number | null {
  return numberOf(fields.retryUntil ?? fields.timeoutAt) ?? null;
}

/** Laravel's markJobAsFailedIfAlreadyExceedsMaxAttempts: this attempt is one too many. */
export function alreadyExceedsMaxAttempts(
  fields: RuleFields,
  attempts: number,
  now: number,
  defaults: Pick<RuleDefaults, 'tries'>,
): boolean {
  const retryUntil = retryUntilOf(fields);
  if (retryUntil) return now > retryUntil;
  const maxTries = maxTriesOf(fields, defaults);
  return maxTries !== 0 && attempts > maxTries;
}

/** Laravel's markJobAsFailedIfWillExceedMaxAttempts: this attempt was the last one allowed. */
export function attemptsUsedUp(fields: RuleFields, attempts: number, now: number, defaults: Pick<RuleDefaults, 'tries'>): boolean {
  const retryUntil = retryUntilOf(fields);
  if (retryUntil) return retryUntil <= now;
  const maxTries = maxTriesOf(fields, defaults);
  return maxTries > 0 && attempts >= maxTries;
}

/** Seconds the job may run: the payload's `timeout`, else `--timeout`; 0 is no limit. */
export function timeoutOf(fields: RuleFields, defaults: Pick<RuleDefaults, 'timeout'>): number {
  return Math.max(0, Math.floor(numberOf(fields.timeout) ?? defaults.timeout));
}

/**
 * Laravel's calculateBackoff: the payload's `backoff` (or, 5.8 to 7, its `delay`), else
 * `--backoff`; the entry for this attempt, else the last.
 */
export function backoffFor(fields: RuleFields, attempts: number, defaults: Pick<RuleDefaults, 'backoff'>): number {
  const fromPayload = fields.backoff ?? fields.delay;
  const list = fromPayload === null || fromPayload === undefined ? defaults.backoff.map(String) : String(fromPayload).split(',');
  const chosen = list[attempts - 1] ?? list[list.length - 1] ?? '0';
  return phpInt(chosen);
}

/** PHP's (int) of a string: its numeric part (`"1.5"` 1, `"1e3"` 1000, `"-3"` -3, `"5 s"` 5), else 0. */
function phpInt(text: string): number {
  const whole = Number(text.trim());
  if (Number.isFinite(whole)) return Math.trunc(whole);
  const leading = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(text);
  return leading ? Math.trunc(Number(leading[0])) : 0;
}
