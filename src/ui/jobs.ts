/**
 * A job as the dashboard shows it: its envelope's facts (uuid, class, attempts, tries), its
 * command's properties as readable JSON with each Eloquent model as `Class#id`, and the time its
 * state gives it (due, or reservation end). The decoding is `lqb decode`'s; a payload that does
 * not decode is still listed, with the reason, so a broken job is never hidden.
 */
import { decodeInput } from '../cli/decode.js';
import { cutForShowing, keptForShowing } from '../connect/redact.js';
import { QUEUEABLE_FIELDS } from '../laravel/index.js';
import type { AppKeySettings } from '../cli/connection.js';
import type { Side } from './side.js';

const MODEL_IDENTIFIER = 'Illuminate\\Contracts\\Database\\ModelIdentifier';

export type JobState = 'ready' | 'delayed' | 'reserved';

export interface JobSummary {
  uuid: string | null;
  id: string | null;
  /** displayName, else the command's class, else the payload's `job`. */
  name: string;
  /** The command's class (data.commandName), when a command job. */
  className: string | null;
  attempts: number | null;
  maxTries: number | null;
  /** UNIX seconds: due (delayed) or reservation end (reserved); the push time is `pushedAt`. */
  until: number | null;
  pushedAt: number | null;
  /** The command's properties, readable; a string job's data; null when encrypted and no key. */
  properties: unknown;
  encrypted: boolean;
  /** Why the payload could not be decoded, when it could not. */
  error?: string;
  /**
   * Which side ran it, where a record says so (a failure's trace: src/ui/side.ts); null when
   * nothing does, as for a queued job: a reserved copy is the same bytes whichever worker holds it.
   */
  side: Side | null;
  /** The payload's size in bytes as stored (UTF-8). */
  payloadBytes: number;
  /**
   * When the payload is past DECODED_UP_TO bytes: it is not decoded to be shown, and this is its
   * first PAYLOAD_HEAD_SHOWN characters, as stored, with how many more there are.
   */
  payloadHead?: string;
  /** When the properties, as JSON, are past PROPERTIES_SHOWN characters: that JSON cut, saying how much more (`properties` is then null). */
  propertiesCut?: string;
}

/** The largest payload decoded to be shown: past it a page shows the payload's start and offers the whole as a download. */
export const DECODED_UP_TO = 256 * 1024;
/** How much of a payload too large to decode a page shows. */
export const PAYLOAD_HEAD_SHOWN = 4096;
/** The most characters of a job's properties (as JSON) a page shows. */
export const PROPERTIES_SHOWN = 16 * 1024;
/** The most characters of an exception a page shows (its message and the top of its trace). */
export const EXCEPTION_SHOWN = 16 * 1024;

/**
 * A job as a page shows it, cut to a bounded size before anything is serialised or scrubbed:
 * a job of 50 MB costs a page what a job of 256 KB costs.
 */
export function summarizeJob(payload: string, until: number | null, keys: AppKeySettings): JobSummary {
  const bytes = Buffer.byteLength(payload);
  if (bytes > DECODED_UP_TO) return summaryOfLargePayload(payload, payload.slice(-TAIL_READ), bytes, until);
  let envelope: Record<string, unknown> = {};
  try {
    envelope = JSON.parse(payload) as Record<string, unknown>;
  } catch {
    // Left empty: the decode below names the reason.
  }
  const base = envelopeFacts(envelope, until, bytes);
  try {
    const decoded = decodeInput(Buffer.from(payload), keys) as { encrypted: boolean; envelope: { data?: unknown } };
    base.encrypted = decoded.encrypted;
    const shown = base.className === null ? decoded.envelope.data : (decoded.envelope.data as { command?: unknown })?.command;
    base.properties = typeof shown === 'string' && decoded.encrypted ? null : withModels(withoutQueueable(shown));
  } catch (error) {
    base.error = (error instanceof Error ? error.message : String(error)).split('\n')[0];
  }
  return withPropertiesBounded(base);
}

/** The summary's properties as they are when their JSON is short enough, else that JSON cut (PROPERTIES_SHOWN). */
function withPropertiesBounded(summary: JobSummary): JobSummary {
  if (summary.properties === null || summary.properties === undefined) return summary;
  // Decoded from at most DECODED_UP_TO bytes: this JSON is bounded by that.
  const json = JSON.stringify(summary.properties, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);
  if (json === undefined || json.length <= PROPERTIES_SHOWN) return summary;
  return { ...summary, properties: null, propertiesCut: cutForShowing(json, PROPERTIES_SHOWN) };
}

/**
 * A payload too large to decode for a page: the envelope's facts read from its start (where
 * Laravel writes uuid, displayName, job and maxTries, ahead of `data`) and its end (`id`,
 * `attempts`, after `data`), never parsing the middle; and its first PAYLOAD_HEAD_SHOWN characters.
 */
function summaryOfLargePayload(head: string, tail: string, bytes: number, until: number | null): JobSummary {
  const base = envelopeFacts({ ...headOfEnvelope(head), ...tailOfEnvelope(tail) }, until, bytes);
  // The head may be all the store sent: what is left is counted from the payload's size, in bytes.
  const shown = keptForShowing(head, PAYLOAD_HEAD_SHOWN);
  base.payloadHead = `${shown}… (${bytes - Buffer.byteLength(shown)} more bytes)`;
  return base;
}

/**
 * A text cut for a page as cutForShowing cuts it, saying how much more there is of the whole
 * (`total` characters), where `text` may be only the start of it that a store sent.
 */
export function cutOfWhole(text: string, limit: number, total = text.length): string {
  const kept = keptForShowing(text, limit);
  return total > kept.length ? `${kept}… (${total - kept.length} more characters)` : kept;
}

/** The envelope's fields a large payload's two ends give (all but `data`, which lies between them). */
export function envelopeOfEnds(head: string, tail: string): Record<string, unknown> {
  return { ...headOfEnvelope(head), ...tailOfEnvelope(tail) };
}

/** How much of a large payload's start and end a page reads: where the envelope's own keys are. */
export const HEAD_READ = 64 * 1024;
export const TAIL_READ = 4096;

/**
 * A job as a list holds it: whole, or, past DECODED_UP_TO bytes, only its head and tail (the
 * store sent no more: src/redis/lua/page-ends.lua, the jobs and failed tables' substr), which
 * say what the envelope says of it.
 */
export function summarizeStored(
  job: { payload: string; until: number | null; cut?: { bytes: number; tail: string } },
  keys: AppKeySettings,
): JobSummary {
  return job.cut ? summaryOfLargePayload(job.payload, job.cut.tail, job.cut.bytes, job.until) : summarizeJob(job.payload, job.until, keys);
}

/** A summary with what the database keeps in columns rather than in its payload: the row's id, attempts and push time. */
export function withColumns(summary: JobSummary, job: { id?: string; attempts?: number; pushedAt?: number }): JobSummary {
  return {
    ...summary,
    ...(job.id !== undefined ? { id: job.id } : {}),
    ...(job.attempts !== undefined ? { attempts: job.attempts } : {}),
    ...(job.pushedAt !== undefined ? { pushedAt: job.pushedAt } : {}),
  };
}

/** The envelope's uuid, read from the start of a payload too large to parse whole for it. */
export function uuidOfPayload(payload: string): string | null {
  let envelope: Record<string, unknown> = {};
  if (Buffer.byteLength(payload) > DECODED_UP_TO) envelope = headOfEnvelope(payload);
  else
    try {
      envelope = (JSON.parse(payload) as Record<string, unknown> | null) ?? {};
    } catch {
      // Not whole JSON: a large payload's head, as a cut list sends it, still starts with the envelope's own keys.
      envelope = headOfEnvelope(payload);
    }
  return typeof envelope.uuid === 'string' ? envelope.uuid : null;
}

/** The envelope's keys before `data`, as JSON, when they are within its first 64 KB; else none. */
function headOfEnvelope(payload: string): Record<string, unknown> {
  const data = payload.slice(0, HEAD_READ).indexOf(',"data":');
  if (!payload.startsWith('{') || data < 0) return {};
  try {
    return JSON.parse(`${payload.slice(0, data)}}`) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** `id`, `attempts` and `createdAt` where Laravel's Redis queue writes them, after `data`, within the payload's last 4 KB. */
function tailOfEnvelope(payload: string): Record<string, unknown> {
  // Inside `data` every quote is escaped: an unescaped `"id":"` is the envelope's own key.
  const end = payload.slice(-TAIL_READ);
  const tail = /"id":"([^"\\]*)","attempts":(\d+)/.exec(end);
  // 12.11+ writes createdAt after data too, just before id.
  const created = /"createdAt":(\d+)[,}]/.exec(end);
  return { ...(tail ? { id: tail[1], attempts: Number(tail[2]) } : {}), ...(created ? { createdAt: Number(created[1]) } : {}) };
}

function envelopeFacts(envelope: Record<string, unknown>, until: number | null, bytes: number): JobSummary {
  const data = (envelope.data ?? {}) as Record<string, unknown>;
  const base: JobSummary = {
    uuid: typeof envelope.uuid === 'string' ? envelope.uuid : null,
    id: envelope.id === undefined || envelope.id === null ? null : String(envelope.id),
    name: String(envelope.displayName ?? data.commandName ?? envelope.job ?? '?'),
    className: typeof data.commandName === 'string' ? data.commandName : null,
    attempts: typeof envelope.attempts === 'number' ? envelope.attempts : null,
    maxTries: typeof envelope.maxTries === 'number' ? envelope.maxTries : null,
    until,
    pushedAt: pushedAtOf(envelope),
    properties: null,
    encrypted: false,
    side: null,
    payloadBytes: bytes,
  };
  return base;
}

/**
 * When the job was pushed, as its envelope says: Horizon's `pushedAt` (microtime as a string),
 * else Laravel 12.11+'s own `createdAt` (whole UNIX seconds); null when neither is there, as
 * in an older Laravel's Redis payload (the database driver keeps it in a column instead).
 */
function pushedAtOf(envelope: Record<string, unknown>): number | null {
  for (const value of [envelope.pushedAt, envelope.createdAt]) {
    const at = typeof value === 'number' || typeof value === 'string' ? Number(value) : NaN;
    if (Number.isFinite(at) && at > 0) return at;
  }
  return null;
}

/** The Queueable trait's bookkeeping (connection, queue, chained…) and InteractsWithQueue's job are the envelope's business, not the job's. */
const QUEUEABLE = new Set<string>(['job', ...QUEUEABLE_FIELDS]);
function withoutQueueable(command: unknown): unknown {
  if (!isRecord(command) || command['@class'] === undefined) return command;
  return Object.fromEntries(Object.entries(command).filter(([key, value]) => !(QUEUEABLE.has(key) && isEmptyish(value))));
}

function isEmptyish(value: unknown): boolean {
  return value === null || (Array.isArray(value) && value.length === 0) || (isRecord(value) && Object.keys(value).length === 0);
}

/**
 * Each ModelIdentifier in readable JSON as `Class#id` (a collection as `Class#[1,2]`), as a
 * person names a model; anything else as it is. Walks with its own stack: readable JSON may be deep.
 */
export function withModels(value: unknown): unknown {
  const root = { value };
  const stack: Record<string, unknown>[] = [root];
  while (stack.length > 0) {
    const holder = stack.pop()!;
    for (const [key, item] of Object.entries(holder)) {
      if (!isRecord(item) && !Array.isArray(item)) continue;
      if (isRecord(item) && item['@class'] === MODEL_IDENTIFIER) {
        holder[key] = modelName(item);
        continue;
      }
      stack.push(item as Record<string, unknown>);
    }
  }
  return root.value;
}

function modelName(model: Record<string, unknown>): string {
  const id = model.id;
  return `${String(model.class)}#${Array.isArray(id) ? `[${id.join(',')}]` : String(id)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
