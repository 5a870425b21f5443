/**
 * Laravel's job envelope: the JSON a RedisQueue stores, read and written byte for byte.
 *
 * `decodePayload` keeps every field in the order Laravel wrote it, notes how the JSON was
 * escaped, decodes `data.command` into a lossless PHP value and gives a typed view of it.
 * `encodePayload` writes an envelope back exactly as PHP's `json_encode` would.
 */
import { PhpObject, unserialize, type PhpValue } from '../php/index.js';
import { decodeJson, detectUnescapedUnicode, encodeJson, isJsonObject, plainJson, type JsonObject, type JsonValue } from './json.js';
import type { Encrypter } from './encrypter.js';
import { QUEUEABLE_FIELDS, viewCommand, type JobView } from './views.js';

/** The Laravel versions whose payloads differ, named by the release that introduced each shape. */
export const LARAVEL_PROFILES = ['5.8', '6', '7', '8', '9', '10', '11', '12', '13'] as const;
export type LaravelProfile = (typeof LARAVEL_PROFILES)[number];

/** What every object job's `job` field holds. */
export const CALL_QUEUED_HANDLER = 'Illuminate\\Queue\\CallQueuedHandler@call';

/** The envelope's fields, in the order they were (or will be) written. */
export interface Envelope extends JsonObject {}

export interface PayloadFormat {
  /** JSON_UNESCAPED_UNICODE: Laravel 8.82+ writes non-ASCII raw; earlier ones, Horizon and queue:retry escape it. */
  unescapedUnicode: boolean;
}

export interface DecodedPayload {
  /** The string as read. */
  raw: string;
  /** Every field, in order. `data.command` stays the serialized (or encrypted) string. */
  envelope: Envelope;
  format: PayloadFormat;
  /** The Laravel version family the envelope's keys belong to (the earliest profile that writes them). */
  profile: LaravelProfile;
  /** `data.commandName`, or `job` for a string job. */
  name: string;
  /** The command as a lossless PHP value; undefined for string jobs and encrypted commands. */
  command?: PhpValue;
  /** True when `data.command` is Laravel Encrypter output (a ShouldBeEncrypted job). */
  encrypted: boolean;
  /** The job's batch: `data.batchId` (12.51+), else the command's Batchable `batchId`; null when none. */
  batchId: string | null;
  view: JobView;
}

/** A payload that is not a Laravel envelope: says what is wrong and where. */
export class PayloadError extends Error {
  override name = 'PayloadError';
  constructor(
    message: string,
    /** JSON pointer to the field at fault, e.g. `/data/command`. */
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(`${message} (at ${path || '/'})`, options);
  }
}

/**
 * Reads a job payload as Laravel stored it (in `queues:NAME` or `:delayed`), or as Redis rewrote
 * it into `:reserved` (cjson: other key order, `{}` for empty lists, `%.14g` numbers).
 */
export function decodePayload(raw: string | Uint8Array, read?: JsonValue): DecodedPayload {
  const text = typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8');
  let envelope: JsonValue;
  try {
    // `read`: what decodeJson(raw) gave a caller that looked at the envelope first, not read twice.
    envelope = read ?? decodeJson(text);
  } catch (error) {
    throw new PayloadError(`payload is not JSON: ${(error as Error).message}`, '', { cause: error });
  }
  if (!isJsonObject(envelope)) throw new PayloadError('payload is not a JSON object', '');
  const job = envelope.job;
  if (typeof job !== 'string') throw new PayloadError(`expected "job" to be a string, found ${describe(job)}`, '/job');
  const profile = detectProfile(envelope);

  if (job !== CALL_QUEUED_HANDLER) {
    // A string job: push('Class@method', $data). Its data is the handler's, not a command.
    return new Decoded({
      raw: text,
      envelope,
      profile,
      name: job,
      encrypted: false,
      view: { kind: 'string', handler: job, data: plainJson(envelope.data) },
    });
  }
  const data = envelope.data;
  if (!isJsonObject(data)) throw new PayloadError(`expected "data" to be an object, found ${describe(data)}`, '/data');
  const { commandName, command } = data;
  if (typeof commandName !== 'string') throw new PayloadError(`expected a string, found ${describe(commandName)}`, '/data/commandName');
  if (typeof command !== 'string') throw new PayloadError(`expected a string, found ${describe(command)}`, '/data/command');

  // Laravel's own test: a serialized object starts with "O:"; anything else was encrypted.
  if (!command.startsWith('O:')) {
    return new Decoded({ raw: text, envelope, profile, name: commandName, encrypted: true, view: { kind: 'encrypted', commandName } });
  }
  let value: PhpValue;
  try {
    value = unserialize(command);
  } catch (error) {
    throw new PayloadError(`data.command is not serialized PHP: ${(error as Error).message}`, '/data/command', { cause: error });
  }
  return new Decoded({
    raw: text,
    envelope,
    profile: refineProfile(profile, value),
    name: commandName,
    command: value,
    encrypted: false,
    view: viewCommand(value),
  });
}

/**
 * Laravel 8.43 to 12.10 write the same envelope keys; the command tells some of them apart.
 * 11.2 moved Queueable's chain properties after `chained`; 9.4 started leaving out properties
 * that equal their defaults (under SerializesModels). 9 and 10 cannot be told apart.
 */
function refineProfile(profile: LaravelProfile, command: PhpValue): LaravelProfile {
  if (profile !== '8' || !(command instanceof PhpObject)) return profile;
  const keys = command.props.keys;
  const chained = keys.indexOf('chained');
  if (chained >= 0 && keys.indexOf('chainConnection') > chained) return '11';
  if (keys.includes('job') && QUEUEABLE_FIELDS.some((name) => !keys.includes(name))) return '9';
  return profile;
}

/**
 * Adds what is worked out when first asked for: the escaping style (reading a job does not
 * need it, writing one does) and the batch id. A class, not an object literal with getters,
 * which V8 would give a shape of its own each time (a cost a worker pays per job).
 */
class Decoded implements DecodedPayload {
  readonly raw: string;
  readonly envelope: Envelope;
  readonly profile: LaravelProfile;
  readonly name: string;
  readonly command?: PhpValue;
  readonly encrypted: boolean;
  readonly view: JobView;
  #format: PayloadFormat | undefined;
  #batchId: string | null | undefined;

  constructor(fields: Omit<DecodedPayload, 'format' | 'batchId'>) {
    this.raw = fields.raw;
    this.envelope = fields.envelope;
    this.profile = fields.profile;
    this.name = fields.name;
    if (fields.command !== undefined) this.command = fields.command;
    this.encrypted = fields.encrypted;
    this.view = fields.view;
  }

  get format(): PayloadFormat {
    return (this.#format ??= { unescapedUnicode: detectUnescapedUnicode(this.raw) ?? true });
  }

  get batchId(): string | null {
    return (this.#batchId ??= batchOf(this));
  }
}

function batchOf(payload: Omit<DecodedPayload, 'format' | 'batchId'>): string | null {
  const data = payload.envelope.data;
  if (isJsonObject(data) && typeof data.batchId === 'string') return data.batchId;
  const command = payload.command instanceof PhpObject ? payload.command.get('batchId') : undefined;
  return typeof command === 'string' ? command : null;
}

/**
 * The command of a decoded payload and its view, decrypted first when it is a ShouldBeEncrypted
 * one (which takes the app's Encrypter; without one, an error says so).
 */
export function commandOf(payload: DecodedPayload, encrypter?: Encrypter): { command: PhpValue | undefined; view: JobView } {
  if (!payload.encrypted) return { command: payload.command, view: payload.view };
  if (!encrypter) throw new Error('the command is encrypted (ShouldBeEncrypted) and no APP_KEY was given');
  const command = encrypter.decryptCommand(String((payload.envelope.data as JsonObject).command));
  return { command, view: viewCommand(command) };
}

/** Writes an envelope as PHP's json_encode does: the decoded payload's own format unless told otherwise. */
export function encodePayload(payload: DecodedPayload | Envelope, format?: Partial<PayloadFormat>): string {
  const decoded = isDecoded(payload) ? payload : undefined;
  const envelope = decoded ? decoded.envelope : (payload as Envelope);
  const unescapedUnicode = format?.unescapedUnicode ?? decoded?.format.unescapedUnicode ?? true;
  return encodeJson(envelope, { unescapedUnicode });
}

function isDecoded(payload: DecodedPayload | Envelope): payload is DecodedPayload {
  return typeof payload.raw === 'string' && typeof payload.envelope === 'object' && payload.envelope !== null && 'view' in payload;
}

/**
 * The version family an envelope's keys belong to (LARAVEL-WIRE.md §1). Families that write the
 * same keys (8.43 to 12.10) are told apart only by their command, so this names the earliest.
 */
export function detectProfile(envelope: JsonObject): LaravelProfile {
  // 13.x writes it for every object job; its string jobs look like 12.11+'s.
  if ('deleteWhenMissingModels' in envelope) return '13';
  if ('createdAt' in envelope) return '12';
  const data = envelope.data;
  if (isJsonObject(data) && 'batchId' in data) return '12';
  if ('backoff' in envelope || 'failOnTimeout' in envelope) return '8';
  if ('uuid' in envelope) return '7';
  // 5.8.14 to 6.x write the same keys; older ones lack `delay` and belong to no later profile.
  return '5.8';
}

function describe(value: JsonValue | undefined): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${JSON.stringify(typeof value === 'bigint' ? String(value) : value)}`;
}

/**
 * A payload's envelope as pushed, its command left a string, read without decoding the command;
 * null when the text is not a JSON object. What a reserved job of either driver judges first.
 */
export function readEnvelope(raw: string): JsonObject | null {
  try {
    const read = decodeJson(raw);
    return isJsonObject(read) ? read : null;
  } catch {
    return null;
  }
}
