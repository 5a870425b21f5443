/**
 * A job as the dashboard shows it: its envelope's facts (uuid, class, attempts, tries), its
 * command's properties as readable JSON with each Eloquent model as `Class#id`, and the time its
 * state gives it (due, or reservation end). The decoding is `lqb decode`'s; a payload that does
 * not decode is still listed, with the reason, so a broken job is never hidden.
 */
import { decodeInput } from '../cli/decode.js';
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
}

export function summarizeJob(payload: string, until: number | null, keys: AppKeySettings): JobSummary {
  let envelope: Record<string, unknown> = {};
  try {
    envelope = JSON.parse(payload) as Record<string, unknown>;
  } catch {
    // Left empty: the decode below names the reason.
  }
  const data = (envelope.data ?? {}) as Record<string, unknown>;
  const base: JobSummary = {
    uuid: typeof envelope.uuid === 'string' ? envelope.uuid : null,
    id: envelope.id === undefined || envelope.id === null ? null : String(envelope.id),
    name: String(envelope.displayName ?? data.commandName ?? envelope.job ?? '?'),
    className: typeof data.commandName === 'string' ? data.commandName : null,
    attempts: typeof envelope.attempts === 'number' ? envelope.attempts : null,
    maxTries: typeof envelope.maxTries === 'number' ? envelope.maxTries : null,
    until,
    pushedAt: typeof envelope.pushedAt === 'number' || typeof envelope.pushedAt === 'string' ? Number(envelope.pushedAt) : null,
    properties: null,
    encrypted: false,
    side: null,
  };
  try {
    const decoded = decodeInput(Buffer.from(payload), keys) as { encrypted: boolean; envelope: { data?: unknown } };
    base.encrypted = decoded.encrypted;
    const shown = base.className === null ? decoded.envelope.data : (decoded.envelope.data as { command?: unknown })?.command;
    base.properties = typeof shown === 'string' && decoded.encrypted ? null : withModels(withoutQueueable(shown));
  } catch (error) {
    base.error = (error instanceof Error ? error.message : String(error)).split('\n')[0];
  }
  return base;
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
