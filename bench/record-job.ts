/**
 * The job the Redis benches push (bench/worker.ts, bench/lqb-vs-laravel.ts, bench/peers.ts):
 * php-fixture-gen/worker-app.php's App\Jobs\Bridge\RecordJob, its items padded so that Laravel
 * 8.83's payload is about 1.5 KB. PHP's handle() appends a line to LQB_RECORD_FILE (/dev/null in
 * the benches); Node's handler (bench/noop-handlers.mjs) does nothing.
 */
import { buildPayload } from '../src/laravel/index.js';
import { bridgeRecordJob } from '../src/cli/demo.js';

/** The command's `items`: what makes the payload about 1.5 KB. */
export const RECORD_ITEMS = { pad: Array.from({ length: 20 }, () => 'padding-to-a-kilobyte') };

/** The RecordJob's properties: bridgeRecordJob's values, and the job data bench/peers.ts gives BullMQ. */
export function recordProps(n: number, extra: Record<string, unknown> = {}): { n: number; label: string; ratio: number; items: object } {
  return { n, label: 'bench', ratio: 0.5, items: { ...extra, ...RECORD_ITEMS } };
}

/** The RecordJob's payload as Laravel 8.83 pushes it; `extra` goes into its items before the padding. */
export function recordPayload(n: number, extra: Record<string, unknown> = {}): string {
  return buildPayload(bridgeRecordJob(recordProps(n, extra))).raw;
}
