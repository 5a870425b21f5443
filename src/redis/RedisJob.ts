/**
 * A job reserved from a Redis queue: the payload as it was pushed (`raw`, what a failed-job
 * record stores) and the reserved string Redis wrote into `:reserved` (what delete and
 * release must name, byte for byte).
 */
import { decodePayload, type DecodedPayload, type JsonObject } from '../laravel/index.js';
import { readEnvelope } from '../laravel/payload.js';
import type { RedisQueue } from './RedisQueue.js';
import type { DeleteEnding, Reservation, ReservedFields, ReservedJob } from '../queue/contract.js';

export type { ReservedFields } from '../queue/contract.js';

export class RedisJob implements ReservedJob {
  #decoded: DecodedPayload | undefined;
  /** The pushed envelope as decodeJson read it; null when it does not read as a JSON object. */
  #envelope: JsonObject | null | undefined;
  #fields: ReservedFields | undefined;
  #reserved: string | undefined;
  #leadingUuid: string | null | undefined;
  #firstAttempt: boolean | undefined;
  /** @internal Its place among the jobs its queue holds (see RedisQueue's `held`), or -1. */
  heldAt = -1;

  constructor(
    readonly redisQueue: RedisQueue,
    /** The queue's name, without `queues:`. */
    readonly queue: string,
    /** The payload as pushed. */
    readonly raw: string,
    /** The payload as reserved, as Redis sent it (bytes, or a string): what delete and release send back. */
    readonly reservedBytes: Buffer | string,
  ) {}

  /** The payload as reserved: cjson's re-encoding with attempts + 1. */
  get reserved(): string {
    return (this.#reserved ??= typeof this.reservedBytes === 'string' ? this.reservedBytes : this.reservedBytes.toString('utf8'));
  }

  /** The decoded envelope and command; throws a PayloadError for a payload that is not one. */
  get payload(): DecodedPayload {
    const decoded = (this.#decoded ??= decodePayload(this.raw, this.#envelope ?? undefined));
    // Laravel's Redis pop counts attempts in the payload: one without a number there is not a job it can run.
    if (typeof decoded.envelope.attempts !== 'number')
      throw new Error('the payload has no numeric "attempts" (Laravel’s own pop fails on it)');
    return decoded;
  }

  /**
   * The envelope as pushed, its command left a string; undefined when it is not a JSON object.
   * A retried job is judged by it before its command is read, and the payload is then decoded
   * from it, so its text is parsed once.
   */
  get envelope(): JsonObject | undefined {
    if (this.#envelope === undefined) this.#envelope = this.#decoded?.envelope ?? readEnvelope(this.raw);
    return this.#envelope ?? undefined;
  }

  /**
   * The envelope as reserved, read without decoding the command, so a bad (or hostile) command
   * still has an id, a uuid and its attempts, and can be judged out of attempts before it is read.
   */
  get fields(): ReservedFields {
    if (this.#fields === undefined) {
      try {
        const parsed = JSON.parse(this.reserved) as unknown;
        this.#fields = parsed !== null && typeof parsed === 'object' ? (parsed as ReservedFields) : {};
      } catch {
        this.#fields = {};
      }
    }
    return this.#fields;
  }

  /** The envelope as far as it was read already (decoded, or parsed as pushed), else undefined. */
  get #read(): JsonObject | null | undefined {
    return this.#decoded?.envelope ?? this.#envelope;
  }

  /** This attempt's number: the pushed payload's `attempts` plus one, as Laravel's RedisJob counts. */
  attempts(): number {
    // Once the payload is decoded its attempts are at hand; the reserved copy counts one more.
    const pushed = this.#read?.attempts;
    if (typeof pushed === 'number') return pushed + 1;
    const attempts = Number(this.fields.attempts);
    return Number.isFinite(attempts) ? attempts : 1;
  }

  /** The payload's `id` (Str::random(32), or the uuid under Horizon). */
  get id(): string {
    const id = this.#read?.id ?? this.fields.id;
    return String(id ?? '');
  }

  get uuid(): string | undefined {
    const uuid = this.#read?.uuid ?? this.fields.uuid;
    return typeof uuid === 'string' ? uuid : undefined;
  }

  /**
   * The uuid the payload as pushed opens with (`{"uuid":"…"`, as Laravel 7+ writes every payload),
   * read without parsing the rest, once: the queue looks at it as it takes and lets go of the job.
   * Undefined for other payloads.
   */
  get leadingUuid(): string | undefined {
    if (this.#leadingUuid === undefined) this.#leadingUuid = openingUuid(this.raw);
    return this.#leadingUuid ?? undefined;
  }

  /**
   * True when the payload as pushed says `"attempts":0` at its end, where Laravel writes it (12.x
   * puts `delay` after it, Horizon's queue its type, tags, silenced and pushedAt, and a retry from
   * Horizon `retry_of`): this is the job's first attempt. Read from the text's tail, without
   * parsing it; false when it cannot tell.
   */
  get firstAttempt(): boolean {
    // Asked by the queue and the worker alike: read once.
    return (this.#firstAttempt ??= firstAttemptOf(this.raw));
  }

  /**
   * True when Redis reserved the payload as it was pushed: its cjson could not read it (a lone
   * surrogate such as `\ud800`, which Node's JSON reads) or it has no numeric attempts, so its
   * attempts were never counted and Laravel's own pop fails on it.
   */
  get unreadableByRedis(): boolean {
    const reserved = this.reservedBytes;
    if (typeof reserved === 'string') return reserved === this.raw;
    // The opening bytes first (cjson writes its keys in an order of its own, so a re-encoded copy
    // differs there), then the lengths, and only then the whole text made into bytes.
    if (!opensAlike(reserved, this.raw)) return false;
    return reserved.length === Buffer.byteLength(this.raw) && reserved.equals(Buffer.from(this.raw));
  }

  /** Why Laravel's own pop could not read this job (so Laravel fails it), or undefined. */
  unreadable(): string | undefined {
    return this.unreadableByRedis ? whyRedisCouldNotReserve(this.raw) : undefined;
  }

  /** Removes the job from `:reserved` for good (the promise its batch of deletes shares). */
  delete(ending?: DeleteEnding): Promise<void> {
    return this.redisQueue.deleteReserved(this, ending);
  }

  /** Gives the job back as it was pushed, without spending this attempt (see RedisQueue.giveBack); false when its reservation was gone. */
  giveBack(delay = 0): Promise<boolean> {
    return this.redisQueue.giveBack(this, delay);
  }

  /** Puts the job back to run again after `delay` seconds; false when its reservation was gone (see RedisQueue.release). */
  release(delay = 0): Promise<boolean> {
    return this.redisQueue.release(this, delay);
  }

  /** The `:reserved` zset and the reserved bytes it is held under: what the watchdog thread renews. */
  reservation(): Reservation {
    return { key: this.redisQueue.reservedKey(this.queue), member: this.reservedBytes };
  }
}

/** `"attempts":0` at the payload's end, as Laravel writes it (12.x's `delay` after it). */
const LARAVEL_FIRST_ATTEMPT = /"attempts":0(,"delay":[^,{}[\]]*)?\}\s*$/;
/**
 * The same under Horizon: JobPayload::prepare appends type, tags, silenced and pushedAt, and a
 * retry from its Failed tab `retry_of`. Tags past HORIZON_TAIL characters are not read: such a
 * job is judged as a retried one is, which costs a parse and changes nothing else.
 */
const HORIZON_FIRST_ATTEMPT =
  /"attempts":0(?:,"delay":[^,{}[\]]*)?(?:,"type":"[a-z]+","tags":\[(?:"(?:[^"\\]|\\.)*"(?:,"(?:[^"\\]|\\.)*")*)?\],"silenced":(?:true|false),"pushedAt":"[0-9.E+-]+")?(?:,"retry_of":"[^"\\]*")?\}\s*$/y;
const HORIZON_TAIL = 1024;

/** RedisJob.firstAttempt of a payload as pushed. */
function firstAttemptOf(raw: string): boolean {
  if (LARAVEL_FIRST_ATTEMPT.test(raw.slice(-64))) return true;
  // Horizon's additions end in a string: only then is the longer tail worth reading, from the
  // last `"attempts":` on (no string holds those quotes unescaped, and no key after it is attempts).
  if (!raw.endsWith('"}')) return false;
  const at = raw.lastIndexOf('"attempts":');
  if (at < 0 || at < raw.length - HORIZON_TAIL) return false;
  HORIZON_FIRST_ATTEMPT.lastIndex = at;
  return HORIZON_FIRST_ATTEMPT.test(raw);
}

const UUID_OPENING = '{"uuid":"';

/**
 * The uuid a payload opens with, `{"uuid":"` then 1 to 64 of `[0-9a-zA-Z-]` and a quote; null
 * when it does not open so. Read by hand, not by a regular expression on a slice: it is asked of
 * every job a worker takes.
 */
function openingUuid(raw: string): string | null {
  if (!raw.startsWith(UUID_OPENING)) return null;
  const start = UUID_OPENING.length;
  for (let i = start; i < raw.length && i <= start + 64; i++) {
    const c = raw.charCodeAt(i);
    if (c === 34 /* " */) return i > start ? raw.slice(start, i) : null;
    const allowed = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45; /* 0-9 A-Z a-z - */
    if (!allowed) return null;
  }
  return null;
}

/**
 * False when the bytes open otherwise than the text's UTF-8 would: its characters, as far as
 * they are ASCII (one byte each, the same in both), compared without making bytes of the text.
 * cjson keeps the uuid first but orders the other keys its own way, so a re-encoded copy parts
 * within a few dozen bytes. True when they agree up to a non-ASCII character or the end: the
 * whole must then tell.
 */
function opensAlike(bytes: Buffer, text: string): boolean {
  const end = Math.min(text.length, bytes.length);
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return true;
    if (bytes[i] !== c) return false;
  }
  return true;
}

/** Why Redis reserved a payload unchanged: it is not JSON, has no numeric attempts, or cjson refuses what Node reads. */
function whyRedisCouldNotReserve(raw: string): string {
  let envelope: unknown;
  try {
    envelope = JSON.parse(raw);
  } catch (error) {
    return `payload is not JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  const attempts = envelope !== null && typeof envelope === 'object' ? (envelope as { attempts?: unknown }).attempts : undefined;
  if (typeof attempts !== 'number') return 'the payload has no numeric "attempts" (Laravel’s own pop fails on it)';
  return 'Redis’s cjson cannot read this payload (a lone surrogate such as \\ud800 is one case), so its attempts are never counted and Laravel’s workers cannot run it';
}
