/**
 * A page per job, as Horizon has one: whatever list a job is seen in, and from a uuid alone.
 * It gathers what each record says of the job: the envelope's fields (attempts, tries, timeout,
 * retryUntil, tags…), the decoded command (bounded as a list's is, encrypted commands as the
 * dashboard shows them), the failure with its whole trace and the side its frames name, and,
 * under Horizon, its status and its retries (the failed record's `retried_by`, the payload's
 * `retry_of`).
 *
 * Where to look, in order: the place a list saw it (queue, state, offset: checked by uuid,
 * since a list moves), failed_jobs, then each queue (as `lqb find` walks them; skipped when
 * Horizon saw the job finish), then Horizon's hash of it.
 */
import { cutForShowing } from '../connect/redact.js';
import type { ListedFailure } from './failed.js';
import type { AppKeySettings } from '../cli/connection.js';
import {
  DECODED_UP_TO,
  cutOfWhole,
  envelopeOfEnds,
  summarizeJob,
  summarizeStored,
  uuidOfPayload,
  withColumns,
  type JobState,
  type JobSummary,
} from './jobs.js';
import type { HorizonDetails } from './horizon.js';
import { sideOfException, type Side } from './side.js';
import type { QueueSource } from './source.js';

/** The most characters of an exception a job's page shows: its whole trace, as a rule. */
export const EXCEPTION_PAGE_SHOWN = 64 * 1024;

/** Where a list saw a queued job, so its page reads it from there. */
export interface JobPlace {
  queue: string;
  state: JobState;
  offset: number;
}

export interface JobPage {
  /** Where the job was found: a queue's state, failed_jobs, or Horizon's record alone. */
  foundIn: JobState | 'failed' | 'horizon';
  queue: string | null;
  connection: string | null;
  summary: JobSummary;
  /** The envelope's own fields (everything but `data`), and `data.commandName`: what Laravel's worker reads. */
  envelope: Record<string, unknown>;
  /** Horizon's tags, as its queue wrote them into the payload; empty when none. */
  tags: string[];
  failedAt: string | null;
  exception: string | null;
  side: Side | null;
  /** What Horizon's hash of it says, with its retries; null without Horizon or without a record. */
  horizon: HorizonDetails | null;
  /** Where the whole payload downloads from, as stored. */
  download: string | null;
}

/** What a job page reads from; each part may be absent (no Horizon). */
export interface JobPageSources {
  source: QueueSource;
  failed: { findShown(uuid: string): Promise<ListedFailure | undefined> };
  horizon: { details(id: string): Promise<HorizonDetails | null> } | undefined;
  /** The queues a uuid alone is looked for on. */
  queues: () => Promise<string[]>;
  keys: AppKeySettings;
  /** The download path of a queued job seen at a place (the lists' own). */
  queuedDownload: (place: JobPlace, uuid: string | null) => string;
}

/** The job's page, or null when no record the dashboard reads holds the uuid. */
export async function findJobPage(uuid: string, place: JobPlace | undefined, from: JobPageSources): Promise<JobPage | null> {
  const horizon = from.horizon ? await from.horizon.details(uuid).catch(() => null) : null;
  if (place) {
    const [job] = (await from.source.page(place.queue, place.state, place.offset, 1, { cut: true })).jobs;
    if (job && uuidOfPayload(job.payload) === uuid) {
      const summary = withColumns(summarizeStored(job, from.keys), job);
      return pageOf(summary, job.payload, {
        cut: job.cut,
        foundIn: place.state,
        queue: place.queue,
        connection: from.source.connection,
        horizon,
        download: from.queuedDownload(place, uuid),
      });
    }
  }
  const failed = await from.failed.findShown(uuid);
  if (failed) {
    const exception = cutOfWhole(failed.exception, EXCEPTION_PAGE_SHOWN, failed.exceptionLength);
    return pageOf({ ...summarizeStored({ payload: failed.payload, until: null, cut: failed.cut }, from.keys), uuid }, failed.payload, {
      cut: failed.cut,
      foundIn: 'failed',
      queue: failed.queue,
      connection: failed.connection,
      failedAt: failed.failed_at,
      exception,
      side: sideOfException(failed.exception),
      horizon,
      download: `api/failed/${encodeURIComponent(uuid)}/payload`,
    });
  }
  // A job Horizon saw finish is on no queue: no walk along the queues for it.
  const finished = horizon?.status === 'completed' || horizon?.status === 'failed';
  if (!finished) {
    for (const queue of await from.queues()) {
      const job = await from.source.find(queue, uuid);
      if (!job) continue;
      const summary = withColumns(summarizeJob(job.payload, job.until, from.keys), job);
      return pageOf(summary, job.payload, {
        foundIn: job.state,
        queue,
        connection: from.source.connection,
        horizon,
        download: `api/jobs/${encodeURIComponent(uuid)}/payload`,
      });
    }
  }
  if (horizon) {
    const payload = horizon.payload ?? '';
    const summary = payload === '' ? emptySummary(uuid, horizon.name) : summarizeJob(payload, null, from.keys);
    return pageOf(summary, payload, {
      foundIn: 'horizon',
      queue: horizon.queue,
      connection: horizon.connection,
      exception: horizon.exception === null ? null : cutForShowing(horizon.exception, EXCEPTION_PAGE_SHOWN),
      side: sideOfException(horizon.exception),
      horizon,
      download: null,
    });
  }
  return null;
}

function pageOf(
  summary: JobSummary,
  payload: string,
  {
    cut,
    ...facts
  }: Pick<JobPage, 'foundIn' | 'queue' | 'connection' | 'horizon' | 'download'> &
    Partial<JobPage> & { cut?: { bytes: number; tail: string } | undefined },
): JobPage {
  const envelope = cut ? envelopeOfEnds(payload, cut.tail) : envelopeFields(payload);
  const tags = Array.isArray(envelope.tags) ? envelope.tags.map(String) : [];
  return {
    failedAt: null,
    exception: null,
    side: summary.side,
    ...facts,
    summary: { ...summary, side: facts.side ?? summary.side },
    envelope,
    tags,
  };
}

/**
 * The envelope's fields but `data` (the command, shown decoded apart), with `data.commandName`.
 * A payload too large to parse for a page gives none here: its summary holds what its head and
 * tail say, and its download the rest.
 */
function envelopeFields(payload: string): Record<string, unknown> {
  if (payload === '' || Buffer.byteLength(payload) > DECODED_UP_TO) return {};
  let envelope: unknown;
  try {
    envelope = JSON.parse(payload);
  } catch {
    return {};
  }
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) return {};
  const { data, ...fields } = envelope as Record<string, unknown>;
  const commandName = (data as { commandName?: unknown } | null)?.commandName;
  return typeof commandName === 'string' ? { ...fields, commandName } : fields;
}

/** A Horizon record whose payload is gone (trimmed): what the record itself says. */
function emptySummary(uuid: string, name: string | null): JobSummary {
  return {
    uuid,
    id: uuid,
    name: name ?? '?',
    className: null,
    attempts: null,
    maxTries: null,
    until: null,
    pushedAt: null,
    properties: null,
    encrypted: false,
    side: null,
    payloadBytes: 0,
  };
}
