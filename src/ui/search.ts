/**
 * Search over the jobs the dashboard reads: every queue's ready, delayed and reserved jobs, then
 * failed_jobs, by uuid, class, tag or any text in the command. A search reads a window of jobs
 * per request (SEARCH_WINDOW) and hands back a cursor to go on from, with how many of how many
 * it has read ("searched N of M"): a queue of 100,000 jobs is searched a window at a time,
 * never in one request that holds Redis or the page.
 *
 * The text is looked for in the payload as stored, in each spelling Laravel's json_encode may
 * have given it (`App\\Jobs\\X`, `\/`, `\u00e9` or `é`), so a class, a tag (Horizon writes tags
 * into the payload) and a string property all match. An encrypted command is ciphertext in the
 * payload: its text never matches, as the dashboard never shows it decrypted unless told to.
 *
 * Offsets are the lists' own: a queue that moves while it is searched may show a job twice or
 * pass one by, as paging it would. The search says what it read; it does not promise a snapshot.
 */
import { encodeString } from '../laravel/json.js';
import type { FailedJob } from '../worker/index.js';
import type { JobState } from './jobs.js';
import type { QueueSource, StoredJob } from './source.js';

/** How many jobs one search request reads at most. */
export const SEARCH_WINDOW = 2000;
/** Jobs read from a store per call within a window. */
const STEP = 250;
const STATES: JobState[] = ['ready', 'delayed', 'reserved'];

/** Where a search goes on: the queue (by its index among the names), the state, and the offset; `failed` after the queues. */
export interface SearchCursor {
  queue: number;
  state: number;
  offset: number;
}

/** A job a search found, and where: a queue's state at an offset, or failed_jobs. */
export interface SearchHit {
  where: JobState | 'failed';
  queue: string;
  offset: number;
  job: StoredJob | FailedJob;
}

export interface SearchWindow {
  hits: SearchHit[];
  /** Where the next window starts; null when everything was read. */
  next: string | null;
  /** Jobs read so far, this window included. */
  searched: number;
  /** Jobs there are to read, as counted at the start of this window. */
  total: number;
}

/** Every spelling a text may have in a payload Laravel encoded: as typed, and as JSON escapes it (with and without \u escapes). */
export function needlesOf(text: string): string[] {
  return [...new Set([text, encodeString(text, false).slice(1, -1), encodeString(text, true).slice(1, -1)])].filter(Boolean);
}

/** Whether a payload holds the text in one of its spellings. */
export function payloadHolds(payload: string, needles: readonly string[]): boolean {
  return needles.some((needle) => payload.includes(needle));
}

export function encodeCursor(cursor: SearchCursor): string {
  return `${cursor.queue}.${cursor.state}.${cursor.offset}`;
}

export function decodeCursor(text: string | null): SearchCursor {
  const [queue, state, offset] = (text ?? '0.0.0').split('.').map(Number);
  const whole = (n: number | undefined) => (Number.isSafeInteger(n) && n! >= 0 ? n! : 0);
  return { queue: whole(queue), state: Math.min(whole(state), STATES.length), offset: whole(offset) };
}

/** What a search reads: the queues' source, their names, and failed_jobs a page at a time (newest first). */
export interface SearchSources {
  source: QueueSource;
  queues: string[];
  failed: {
    page(offset: number, limit: number, filter?: object, options?: { cut?: boolean }): Promise<{ total: number; jobs: FailedJob[] }>;
  };
}

/**
 * One window of a search for `text` from `cursor`: at most SEARCH_WINDOW jobs read, at most
 * `limit` hits given back (the cursor then points just after the last hit, so none is skipped).
 * The state index STATES.length stands for failed_jobs, after the last queue.
 */
export async function searchWindow(text: string, cursor: SearchCursor, limit: number, from: SearchSources): Promise<SearchWindow> {
  const needles = needlesOf(text);
  const sizes = await Promise.all(from.queues.map((queue) => from.source.counts(queue)));
  const failedTotal = (await from.failed.page(0, 1, {}, { cut: true })).total;
  const total = sizes.reduce((sum, counts) => sum + counts.ready + counts.delayed + counts.reserved, 0) + failedTotal;
  let searched = searchedBefore(cursor, sizes);
  const hits: SearchHit[] = [];
  let read = 0;
  let at: SearchCursor | null = { ...cursor };
  while (at && read < SEARCH_WINDOW && hits.length < limit) {
    const step = Math.min(STEP, SEARCH_WINDOW - read);
    const batch = await readAt(at, step, from);
    if (batch === null) {
      at = nextPlace(at, from.queues.length);
      continue;
    }
    let consumed = 0;
    for (const job of batch.jobs) {
      consumed++;
      const payload = 'payload' in job ? job.payload : '';
      if (payloadHolds(payload, needles) || uuidIs(job, text)) {
        hits.push({ where: batch.where, queue: batch.queue, offset: at.offset + consumed - 1, job });
        if (hits.length >= limit) break;
      }
    }
    read += consumed;
    searched += consumed;
    at =
      batch.jobs.length < step && consumed === batch.jobs.length
        ? nextPlace(at, from.queues.length)
        : { ...at, offset: at.offset + consumed };
  }
  return { hits, next: at ? encodeCursor(at) : null, searched: Math.min(searched, total), total };
}

/** A failed job is found by its uuid column too (its payload's uuid is the same for Laravel's). */
function uuidIs(job: StoredJob | FailedJob, text: string): boolean {
  return 'uuid' in job && job.uuid === text;
}

/** The jobs at a place, or null when the place is past the last queue's failed_jobs. */
async function readAt(
  at: SearchCursor,
  count: number,
  from: SearchSources,
): Promise<{ where: JobState | 'failed'; queue: string; jobs: (StoredJob | FailedJob)[] } | null> {
  if (at.state === STATES.length) {
    if (at.queue > 0) return null;
    const page = await from.failed.page(at.offset, count);
    return { where: 'failed', queue: '', jobs: page.jobs };
  }
  const queue = from.queues[at.queue];
  if (queue === undefined) return null;
  const state = STATES[at.state]!;
  const page = await from.source.page(queue, state, at.offset, count);
  return { where: state, queue, jobs: page.jobs };
}

/** The place after a finished one: the next state of the queue, the next queue, then failed_jobs (read once), then none. */
function nextPlace(at: SearchCursor, queues: number): SearchCursor | null {
  if (at.state === STATES.length) return null;
  if (at.state + 1 < STATES.length) return { queue: at.queue, state: at.state + 1, offset: 0 };
  if (at.queue + 1 < queues) return { queue: at.queue + 1, state: 0, offset: 0 };
  return { queue: 0, state: STATES.length, offset: 0 };
}

/** How many jobs lie before the cursor, as the counts stand now. */
function searchedBefore(cursor: SearchCursor, sizes: { ready: number; delayed: number; reserved: number }[]): number {
  let before = 0;
  for (let q = 0; q < sizes.length; q++) {
    const counts = [sizes[q]!.ready, sizes[q]!.delayed, sizes[q]!.reserved];
    if (cursor.state === STATES.length || q < cursor.queue) before += counts[0]! + counts[1]! + counts[2]!;
    else if (q === cursor.queue) before += counts.slice(0, cursor.state).reduce((a, b) => a + b, 0);
  }
  return before + cursor.offset;
}
