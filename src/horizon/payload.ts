/**
 * The payload as Horizon's queue pushes it, and what Horizon's listeners read back from one.
 *
 * Horizon's `RedisQueue` makes the payload's `id` its uuid, then its `JobPayload::prepare()`
 * reads the JSON into PHP arrays, adds `type`, `tags`, `silenced` and `pushedAt` (a key that is
 * there already keeps its place, a new one goes last) and writes it again with a plain
 * `json_encode`: non-ASCII as `\uXXXX`, `/` as `\/`, and whatever PHP arrays make of the JSON
 * (an empty object `{}` comes back as `[]`, an object keyed "0", "1"… as a list).
 */
import { randomUUID } from 'node:crypto';
import { decodeJson, encodeJson, encodeString, isJsonRecord, type JsonValue } from '../laravel/json.js';
import { phpFloatString } from './clock.js';

/** What Horizon's listeners read from a payload (its `JobPayload`). */
export interface HorizonFacts {
  /** `uuid`, else `id`: the job's record is the hash of that name. */
  id: string;
  /** `displayName`: the record's name and the job metrics' key. */
  name: string;
  tags: string[];
  silenced: boolean;
  /** `retry_of`: the failed job this one retries (Horizon's Retry), if any. */
  retryOf: string | undefined;
}

/** What Horizon's queue adds to a payload it pushes. */
export interface HorizonAdditions {
  /** job, event (a queued listener), mail, notification or broadcast. */
  type: string;
  /** Added after the tags the payload already carries. */
  tags: string[];
  silenced: boolean;
  /** When it was pushed, as Horizon prints microtime(true); now by default. */
  pushedAt?: string;
}

/**
 * The payload Horizon's queue would push for this one: `id` set to `uuid` when `idFromUuid` (a
 * job Horizon's queue created; a raw push such as a retry keeps its id), then the additions.
 * `built`, the envelope the payload was just encoded from, spares reading it again.
 */
export function withHorizonAdditions(
  payload: string,
  additions: HorizonAdditions,
  options: { idFromUuid?: boolean; built?: BuiltEnvelope } = {},
): string {
  if (options.idFromUuid === false) return readAndWritten(payload, additions, false);
  return builtWithHorizonAdditions({ raw: payload, envelope: options.built }, additions);
}

/**
 * withHorizonAdditions of a payload a producer has just built (buildPayload's, which encodes its
 * `raw` when first read): laid out from its envelope, and its text read only when there is no
 * envelope or the envelope cannot be laid out without it.
 */
export function builtWithHorizonAdditions(
  built: { readonly raw: string; readonly envelope?: BuiltEnvelope | undefined },
  additions: HorizonAdditions,
): string {
  const envelope = built.envelope;
  return (envelope && encodedWithAdditions(envelope, additions)) ?? readAndWritten(built.raw, additions, true);
}

/** Horizon's read and write of a payload (json_decode to PHP arrays, the keys set, json_encode): the road every payload can take. */
function readAndWritten(payload: string, additions: HorizonAdditions, idFromUuid: boolean): string {
  const envelope = decodePhpObject(payload);
  if (idFromUuid && envelope.has('uuid') && envelope.has('id')) envelope.set('id', envelope.get('uuid')!);
  const before = envelope.get('tags');
  envelope.set('type', additions.type);
  envelope.set('tags', arrayMerge(listValues(before), additions.tags));
  envelope.set('silenced', additions.silenced);
  envelope.set('pushedAt', additions.pushedAt ?? phpFloatString(Date.now() / 1000));
  return encodeJson(envelope);
}

/** The envelope a payload was encoded from, as the producer built it (buildPayload's `envelope`). */
export type BuiltEnvelope = Readonly<Record<string, unknown>>;

/** The keys Horizon's queue adds: a payload that has none of them gets them after its last key. */
const ADDED_KEYS = ['type', 'tags', 'silenced', 'pushedAt'];

/**
 * Horizon's read and write of the payload, made from the envelope it was encoded from rather
 * than from its text: the envelope with its id made the uuid and the four keys last, encoded as
 * Horizon's plain json_encode encodes (non-ASCII as \uXXXX, where Laravel's
 * JSON_UNESCAPED_UNICODE left it as it is). The same text when PHP's arrays hold the envelope as
 * it is (heldAlikeByPhp) and none of the four keys is there already; undefined otherwise, for
 * the read and write.
 */
function encodedWithAdditions(built: BuiltEnvelope, additions: HorizonAdditions): string | undefined {
  for (const key of ADDED_KEYS) if (Object.hasOwn(built, key)) return undefined;
  if (!heldAlikeByPhp(built)) return undefined;
  const idFromUuid = Object.hasOwn(built, 'uuid') && Object.hasOwn(built, 'id');
  // Written key by key rather than as a copy of the envelope with the keys set (a copy costs
  // V8 more than the encoding): the id, set again, keeps its place, as in a PHP array.
  let json = '{';
  for (const key in built)
    json += `${encodeString(key, false)}:${encodeJson((key === 'id' && idFromUuid ? built.uuid : built[key]) as JsonValue)},`;
  const pushedAt = additions.pushedAt ?? phpFloatString(Date.now() / 1000);
  return `${json}"type":${encodeJson(additions.type)},"tags":${encodeJson(additions.tags)},"silenced":${additions.silenced},"pushedAt":${encodeJson(pushedAt)}}`;
}

/**
 * Whether json_decode($json, true) then json_encode give back this value's JSON, but for the
 * escaping of non-ASCII: strings, booleans, null and safe integers (PHP reads a larger number or
 * a fraction as a float, which it may print otherwise), in lists and in plain objects that are
 * not empty (PHP writes an empty array as `[]`) and have no key "0" (an object keyed 0, 1, 2… in
 * order is a list to PHP; no key "0" rules that out, and more, for no cost).
 */
function heldAlikeByPhp(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isSafeInteger(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (Array.isArray(value)) return value.every(heldAlikeByPhp);
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  let empty = true;
  for (const key in value) {
    if (key === '0' || !heldAlikeByPhp((value as Record<string, unknown>)[key])) return false;
    empty = false;
  }
  return !empty;
}

/**
 * Horizon's RetryFailedJob: the failed job's payload (its reserved copy) as a new job, with a
 * new id and uuid, attempts 0, `retry_of` naming the failed job, and retryUntil moved as far
 * past now as it was past the first push. Push it raw (`prepare(…, { raw: true })`), then
 * record the retry on the failed job (`HorizonRecorder.retried`).
 */
export function retryPayload(failedPayload: string, options: { id: string; retryOf: string; now: number }): string {
  const envelope = decodePhpObject(failedPayload);
  const retryUntil = numberOf(envelope.get('retryUntil')) ?? numberOf(envelope.get('timeoutAt'));
  const pushedAt = numberOf(envelope.get('pushedAt')) ?? options.now;
  envelope.set('id', options.id);
  envelope.set('uuid', options.id);
  envelope.set('attempts', 0);
  envelope.set('retry_of', options.retryOf);
  // PHP tests the old value for truth: a retryUntil of 0 (or none) stays null.
  envelope.set('retryUntil', retryUntil ? Math.floor(options.now) + Math.ceil(retryUntil - pushedAt) : null);
  return encodeJson(envelope);
}

/**
 * Laravel's Str::orderedUuid(), which Horizon's Retry names the new job with: a version 4 UUID
 * whose first 48 bits are the time in units of 10 µs (ramsey/uuid's timestamp-first COMB), so
 * newer ids sort after older ones.
 */
export function orderedUuid(now: number, random: string = randomUUID()): string {
  const time = Math.floor(now * 1e5)
    .toString(16)
    .padStart(12, '0');
  // The random UUID's version and variant nibbles stay where a version 4 UUID has them.
  const hex = time + random.replace(/-/g, '').slice(12);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** What Horizon's listeners read from a payload; a payload that is not JSON gives the fallback id and nothing else. */
export function horizonFacts(payload: string, fallbackId = ''): HorizonFacts {
  let decoded: unknown;
  try {
    decoded = JSON.parse(payload);
  } catch {
    decoded = undefined;
  }
  return horizonFactsOf(decoded, fallbackId);
}

/**
 * horizonFacts of an envelope already parsed (JSON.parse's plain objects): a worker has read
 * the reserved payload once already, and a second parse of it per event would be most of what
 * Horizon's records cost.
 */
export function horizonFactsOf(decoded: unknown, fallbackId = ''): HorizonFacts {
  const envelope = (decoded !== null && typeof decoded === 'object' && !Array.isArray(decoded) ? decoded : {}) as Record<string, unknown>;
  const id = envelope.uuid ?? envelope.id;
  const tags = envelope.tags;
  return {
    id: id === undefined || id === null ? fallbackId : phpString(id),
    name: envelope.displayName === undefined || envelope.displayName === null ? '' : phpString(envelope.displayName),
    // cjson writes an empty list as {}: PHP reads both as an empty array.
    tags: tags !== null && typeof tags === 'object' ? Object.values(tags).map(phpString) : [],
    silenced: phpTruthy(envelope.silenced),
    retryOf: envelope.retry_of === undefined || envelope.retry_of === null ? undefined : phpString(envelope.retry_of),
  };
}

/**
 * Horizon's id of a job in hand (JobPayload::id(): uuid ?? id, as PHP prints it): a string uuid
 * as it was read, else from the envelope's fields (a parse of the payload, once per job).
 */
export function horizonIdOf(job: { readonly uuid: string | undefined; readonly fields: unknown }): string {
  return job.uuid ?? horizonFactsOf(job.fields).id;
}

/**
 * What Horizon reads from a job in hand's payload: from the envelope the worker decoded to run
 * the job when what Horizon reads there is as the reserved copy has it (strings and booleans,
 * which Redis's re-encoding of the payload leaves as they were: only `attempts` differs), else
 * from a parse of the reserved copy (a second parse of the payload, the job's dearest part).
 */
export function horizonFactsOfJob(
  job: { readonly uuid: string | undefined; readonly fields: unknown },
  envelope: Record<string, unknown> | undefined,
): HorizonFacts {
  return (envelope !== undefined && plainFacts(envelope)) || horizonFactsOf(job.fields, horizonIdOf(job));
}

/**
 * horizonFactsOf the envelope when its id, name, tags, silenced and retry_of are strings (a list
 * of them) and booleans, or absent, which PHP reads as they are; else undefined.
 */
function plainFacts(envelope: Record<string, unknown>): HorizonFacts | undefined {
  const id = envelope.uuid ?? envelope.id;
  const { displayName, tags, silenced } = envelope;
  const retryOf = envelope.retry_of;
  if (typeof id !== 'string') return undefined;
  if (displayName !== undefined && typeof displayName !== 'string') return undefined;
  if (tags !== undefined && !(Array.isArray(tags) && tags.every((tag) => typeof tag === 'string'))) return undefined;
  if (silenced !== undefined && typeof silenced !== 'boolean') return undefined;
  if (retryOf !== undefined && retryOf !== null && typeof retryOf !== 'string') return undefined;
  // What horizonFactsOf reads from such values, without its conversions (a job's every delete).
  return {
    id,
    name: displayName ?? '',
    tags: tags ?? [],
    silenced: silenced === true,
    retryOf: retryOf ?? undefined,
  };
}

/** A JSON object read as PHP's json_decode($json, true) reads it, its keys in order. */
function decodePhpObject(payload: string): Map<string, JsonValue> {
  const value = asPhpArrays(decodeJson(payload, { numbers: 'php' }));
  if (value instanceof Map) return value;
  if (Array.isArray(value) && value.length === 0) return new Map();
  throw new Error(`a Horizon payload must be a JSON object, found ${Array.isArray(value) ? 'a list' : typeof value}`);
}

/**
 * JSON as PHP arrays write it back: an object whose keys are 0, 1, 2… in order (the empty
 * object too) is a list to PHP; every other object keeps its keys, in order, as a Map.
 */
function asPhpArrays(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(asPhpArrays);
  if (!isJsonRecord(value)) return value;
  const entries = value instanceof Map ? [...value] : Object.entries(value);
  if (entries.every(([key], index) => key === String(index))) return entries.map(([, item]) => asPhpArrays(item));
  return new Map(entries.map(([key, item]) => [key, asPhpArrays(item)]));
}

function listValues(value: JsonValue | undefined): JsonValue[] {
  if (Array.isArray(value)) return value;
  return value instanceof Map ? [...value.values()] : [];
}

/** array_merge of two lists, as Horizon does it: the payload's tags, then the new ones. */
function arrayMerge(first: JsonValue[], second: string[]): JsonValue[] {
  return [...first, ...second];
}

function numberOf(value: JsonValue | undefined): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
  if (value !== null && typeof value === 'object' && 'value' in value && typeof value.value === 'number') return value.value;
  return undefined;
}

/** A scalar as PHP's string conversion writes it (a tag, an id). */
export function phpString(value: unknown): string {
  if (value === true) return '1';
  if (value === false || value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : phpFloatString(value);
  return String(value);
}

/** PHP's truth: '' and '0' are false, as are 0, null and an empty array. */
export function phpTruthy(value: unknown): boolean {
  if (value === '0' || value === '' || value === 0 || value === null || value === undefined || value === false) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}
