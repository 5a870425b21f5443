/**
 * How `lqb work` reports: one line per event like `artisan queue:work`, or one JSON object
 * per line (`--json`) for log shippers.
 */
import type { Writable } from 'node:stream';
import type { WorkerEvent } from '../worker/index.js';
import { PENDING_BYTES_AT, registerPendingOutput } from '../internal/pending-output.js';
import { cutForShowing } from '../connect/redact.js';

const LABELS: Record<WorkerEvent['event'], string> = {
  processing: 'Processing:',
  processed: 'Processed: ',
  failed: 'Failed:    ',
  released: 'Released:  ',
  deleted: 'Deleted:   ',
  'given-back': 'Given back:',
  'timed-out': 'Timed out: ',
  blocked: 'Blocked:   ',
  warning: 'Warning:   ',
  stopping: 'Stopping:  ',
  error: 'Error:     ',
  reconnected: 'Reconnected:',
};

/** Laravel's "Y-m-d H:i:s", in local time as artisan prints it. */
export function timestamp(date?: Date): string {
  if (date) return stampOf(date);
  // Made once a second: a busy worker writes thousands of lines within one.
  const second = Math.floor(Date.now() / 1000);
  if (second !== stamped.second) stamped = { second, text: stampOf(new Date(second * 1000)) };
  return stamped.text;
}

let stamped = { second: Number.NaN, text: '' };

function stampOf(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/**
 * The most characters of an event's free text (its error, reason, detail) one line shows: a job
 * may fail with a megabyte of message, failed_jobs keeps it whole, and the line says how much
 * more there was. Cut before the line is scrubbed of secrets, so neither costs more than this.
 */
export const EVENT_TEXT_SHOWN = 4096;

export function formatEvent(given: WorkerEvent, json: boolean): string {
  const event = shownEvent(given, json);
  if (json)
    return JSON.stringify({
      time: new Date().toISOString(),
      ...event,
      ...(event.durationMs !== undefined ? { durationMs: Math.round(event.durationMs * 100) / 100 } : {}),
    });
  const duration = event.durationMs === undefined ? '' : ` (${event.durationMs.toFixed(2)}ms)`;
  const subject = event.job ?? event.reason ?? event.queue ?? '';
  // A job's warning or given-back line says why after the job's name.
  const detail = event.error
    ? `: ${event.error}`
    : event.job !== undefined && event.reason
      ? `: ${event.reason}`
      : event.detail
        ? `: ${event.detail}`
        : '';
  // A job's events carry its id, as artisan prints them; the worker's own (stopping) have none.
  const id = event.id === undefined ? '' : `[${event.id}]`;
  // The worker's own error (Redis unreachable) has no subject: its text stands alone.
  const text = subject === '' ? detail.replace(/^: /, '') : `${subject}${duration}${detail}`;
  return `[${timestamp()}]${id} ${LABELS[event.event]} ${text}`;
}

/** The event with its free text cut to EVENT_TEXT_SHOWN characters: a text line shows only an error's first line. */
function shownEvent(event: WorkerEvent, json: boolean): WorkerEvent {
  const cut = (text: string | undefined) => (text === undefined ? undefined : cutForShowing(text, EVENT_TEXT_SHOWN));
  const error = event.error === undefined || json ? event.error : firstLine(event.error);
  if (
    (error?.length ?? 0) <= EVENT_TEXT_SHOWN &&
    (event.reason?.length ?? 0) <= EVENT_TEXT_SHOWN &&
    (event.detail?.length ?? 0) <= EVENT_TEXT_SHOWN
  )
    return error === event.error ? event : { ...event, error };
  const shown: WorkerEvent = { ...event };
  for (const [key, value] of [
    ['error', cut(error)],
    ['reason', cut(event.reason)],
    ['detail', cut(event.detail)],
  ] as const)
    if (value !== undefined) shown[key] = value;
  return shown;
}

function firstLine(text: string): string {
  const end = text.indexOf('\n');
  return end < 0 ? text : text.slice(0, end);
}

/**
 * `lqb work`'s lines, written once per turn of the event loop rather than once each: a busy worker
 * says two lines a job, and a write costs more than the lines it carries (measured in
 * docs/speed.md). Lines keep their order; what is gathered is written when the turn ends, when it
 * nears CAPACITY bytes and when the process exits. A copy of the gathered bytes sits in shared
 * memory (see pending-output.ts), so a watchdog that ends a blocked process writes them first.
 */
export class LineWriter {
  static readonly CAPACITY = 64 * 1024;
  readonly #out: Writable;
  readonly #shared = new SharedArrayBuffer(PENDING_BYTES_AT + LineWriter.CAPACITY);
  readonly #count = new Int32Array(this.#shared, 0, 1);
  readonly #bytes = new Uint8Array(this.#shared, PENDING_BYTES_AT);
  readonly #encoder = new TextEncoder();
  #length = 0;
  #scheduled = false;
  #closed = false;
  readonly #flush = (): void => this.flush();

  constructor(out: Writable & { fd?: number }) {
    this.#out = out;
    registerPendingOutput({ buffer: this.#shared, fd: out.fd ?? 1 });
    process.on('exit', this.#flush);
  }

  write(line: string): void {
    const text = `${line}\n`;
    if (this.#closed) {
      this.#out.write(text);
      return;
    }
    // Up to three bytes a UTF-16 unit: a line that might not fit is written after what is gathered.
    if (text.length * 3 > LineWriter.CAPACITY - this.#length) {
      this.flush();
      if (text.length * 3 > LineWriter.CAPACITY) {
        this.#out.write(text);
        return;
      }
    }
    this.#length += this.#encoder.encodeInto(text, this.#bytes.subarray(this.#length)).written;
    Atomics.store(this.#count, 0, this.#length);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  }

  /** Writes what is gathered now. */
  flush(): void {
    this.#scheduled = false;
    if (this.#length === 0) return;
    // The gathered bytes, encoded once: copied out, as the shared buffer is written again next turn.
    const bytes = Buffer.from(this.#bytes.subarray(0, this.#length));
    this.#length = 0;
    Atomics.store(this.#count, 0, 0);
    this.#out.write(bytes);
  }

  /** Writes what is gathered; later lines (a command's callbacks after it returned) go straight out. */
  close(): void {
    this.flush();
    this.#closed = true;
    process.off('exit', this.#flush);
    registerPendingOutput(undefined);
  }
}
