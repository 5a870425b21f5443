/**
 * How `lqb work` reports: one line per event like `artisan queue:work`, or one JSON object
 * per line (`--json`) for log shippers.
 */
import type { WorkerEvent } from '../worker/index.js';

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

export function formatEvent(event: WorkerEvent, json: boolean): string {
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
    ? `: ${event.error.split('\n')[0]}`
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
