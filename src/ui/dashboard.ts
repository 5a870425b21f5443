/**
 * The dashboard: one request handler, `(req, res) => void` as node:http calls it, serving the page
 * (src/ui/assets, with Preact and htm from the `htm` package: no build step at run time), and a
 * JSON API the page polls. It reads through sources (src/ui/source.ts: Redis today) and the
 * failed-jobs table, and acts as the CLI does: retry as `lqb retry`, forget and flush as
 * `lqb forget`/`flush`, pause and resume as `lqb pause`/`resume`, and cancel as `lqb cancel`.
 *
 * Mounting: plain `http.createServer(dashboard.handler)`; Express `app.use('/queues', dashboard.handler)`
 * (Express strips the mount path; the page finds its base from `req.originalUrl`); Fastify
 * `fastify.all('/queues*', (req, reply) => { reply.hijack(); dashboard.handler(req.raw, reply.raw); })`
 * with `basePath: '/queues'`.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RedisQueue, type RedisClient } from '../redis/index.js';
import { QueueCache, type FailedJob } from '../worker/index.js';
import { DatabaseQueueCache } from '../worker/DatabaseQueueCache.js';
import { databaseConfig, openDatabase, type Database } from '../database/index.js';
import { cutForShowing, hideKeptSecrets, redactLine, redactSecrets } from '../connect/redact.js';
import { patientClient } from '../connect/clients.js';
import { envFileOf, resolveConnection, type ConnectionOptions, type ConnectionSettings } from '../connect/settings.js';
import { horizonPrefix } from '../horizon/prefix.js';
import { HorizonRecorder } from '../horizon/HorizonRecorder.js';
import { retryFailed } from '../horizon/retry.js';
import { moduleUrl, requireBeside } from '../internal/module-url.js';
import { Access, TOKEN_COOKIE, type AccessOptions } from './access.js';
import { FailedJobsView, type FailedFilter, type ListedFailure } from './failed.js';
import { BatchesView } from './batches.js';
import { decodeCursor, searchWindow } from './search.js';
import { HOUR, History, type FinishedPoint, type FinishedSource } from './history.js';
import { activityOf } from './activity.js';
import { nodeRecordView, type MinuteRow, type NodeRecordView } from '../record/index.js';
import {
  EXCEPTION_SHOWN,
  cutOfWhole,
  summarizeJob,
  summarizeStored,
  uuidOfPayload,
  withColumns,
  type JobState,
  type JobSummary,
} from './jobs.js';
import { RedisQueueSource, type QueueSource, type StoredJob } from './source.js';
import { DatabaseQueueSource } from './DatabaseQueueSource.js';
import {
  HORIZON_LISTS,
  HorizonView,
  type HorizonJob,
  type HorizonList,
  type HorizonListedJob,
  type HorizonQueueMetrics,
} from './horizon.js';
import { sideOfException } from './side.js';
import { findJobPage } from './jobPage.js';

export interface DashboardOptions extends AccessOptions {
  /** Resolved connection settings (what `lqb` flags resolve), else these options are resolved as `connect()` resolves them. */
  connection?: ConnectionSettings;
  settings?: ConnectionOptions;
  /** The queues shown; every queue found when not given. */
  queues?: string[];
  /** Shows, never changes: every action answers 403. */
  readOnly?: boolean;
  /**
   * Shows a `ShouldBeEncrypted` job's command decrypted with the app's key. Off by default: the
   * app encrypted it so that whoever reads the queue does not read the command, and a dashboard
   * is such a reader. Off, every list, job page and search sees the ciphertext only.
   */
  showEncrypted?: boolean;
  /** The path the handler is mounted under when the framework does not strip it (Fastify): `/queues`. */
  basePath?: string;
  /** job_batches' database URL (`--batch-db`): the app's database, the failed jobs' by default. */
  batchDb?: string;
  /** The batches table (`--batch-table`, Laravel's queue.batching.table): `job_batches`. */
  batchTable?: string;
  /** How often the process samples counts for the chart, in ms (5000). */
  sampleEvery?: number;
  /** The database connection's `retry_after` in seconds (90): a reservation older than this counts as ready again, as Laravel's pop takes it. */
  retryAfter?: number;
  /**
   * Horizon's prefix, else HORIZON_PREFIX, else APP_NAME's (the process's environment, then the
   * settings' .env); `false` not to read Horizon's records. They are read only when they are there.
   */
  horizonPrefix?: string | false;
}

export interface Dashboard {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** Stops sampling and closes the clients and the database the dashboard opened. */
  close(): Promise<void>;
}

const STATES: JobState[] = ['ready', 'delayed', 'reserved'];

/** Where pause switches are kept: the Redis cache store, or the database one. */
type PauseStore = Pick<QueueCache, 'pause' | 'resume' | 'pausedQueues'>;

interface Stores {
  source: QueueSource;
  cache: PauseStore;
  horizon: HorizonView | undefined;
  /** What retries under Horizon on the queue's Redis (as `lqb retry` does), when Horizon's prefix is known there. */
  recorder: HorizonRecorder | undefined;
  /** Node's workers' own record (src/record), beside the queue: its Redis, or its jobs table's database. */
  record: NodeRecordView;
  close(): Promise<void>;
}

/**
 * The queue's source, the cache store its pause switches are in, and Horizon's records, as the
 * connection names them. On the database connection with no Redis named, no Redis is opened at
 * all: pauses go to the database cache store (its `cache` table, on the queue's database), and
 * there are no Horizon records (Horizon is Redis's).
 */
function openStores(connection: ConnectionSettings, options: DashboardOptions, log: (line: string) => void): Stores {
  if (connection.queueConnection === 'database' && connection.queueDb === undefined)
    throw new Error('the database queue connection has no database: give --queue-db (LQB_QUEUE_DB) or an --env with DB_*');
  const opened: RedisClient[] = [];
  try {
    return storesOn(connection, options, log, opened);
  } catch (error) {
    // A client made before a later one failed (a CA file that cannot be read) would reconnect forever.
    for (const client of opened) client.disconnect();
    throw error;
  }
}

function storesOn(connection: ConnectionSettings, options: DashboardOptions, log: (line: string) => void, opened: RedisClient[]): Stores {
  const open = (settings: ConnectionSettings, url: string): RedisClient => {
    const client = patientClient(settings, url, log);
    opened.push(client);
    return client;
  };
  const useRedis = connection.queueConnection === 'redis' || connection.redisNamed;
  const queueClient: RedisClient | undefined = useRedis ? open(connection, connection.url) : undefined;
  const cacheClient: RedisClient | undefined =
    queueClient && (connection.cacheUrl === connection.url ? queueClient : open(connection, connection.cacheUrl));
  let database: Database | undefined;
  let source: QueueSource;
  if (connection.queueConnection === 'database') {
    database = openDatabase(databaseConfig(connection.queueDb!));
    source = new DatabaseQueueSource(database, { table: connection.jobsTable, retryAfter: options.retryAfter });
  } else {
    source = new RedisQueueSource(new RedisQueue(queueClient!, { defaultQueue: connection.defaultQueue }), connection.prefix);
  }
  const cache: PauseStore = cacheClient
    ? new QueueCache(cacheClient, connection.cachePrefix, connection.cacheSeparator)
    : databasePauses(new DatabaseQueueCache(database!, 'cache', connection.cachePrefix));
  // Horizon's keys carry its own prefix only: a client of the queue's Redis without the app's.
  const prefix = queueClient && options.horizonPrefix !== false ? horizonPrefixOf(options) : undefined;
  const horizonClient =
    prefix === undefined ? undefined : connection.prefix === '' ? queueClient : open({ ...connection, prefix: '' }, connection.url);
  const horizon = horizonClient && prefix !== undefined ? new HorizonView(horizonClient, prefix) : undefined;
  // Horizon records Redis's jobs only: on the database connection a retry is never Horizon's.
  const recorder =
    horizonClient && prefix !== undefined && connection.queueConnection === 'redis'
      ? new HorizonRecorder(horizonClient, { prefix, connection: connection.queueConnection })
      : undefined;
  const record = nodeRecordView(queueClient && connection.queueConnection === 'redis' ? { redis: queueClient } : { database: database! });
  return {
    source,
    cache,
    horizon,
    recorder,
    record,
    async close() {
      await database?.close();
      queueClient?.disconnect();
      if (cacheClient !== queueClient) cacheClient?.disconnect();
      if (horizonClient !== queueClient) horizonClient?.disconnect();
    },
  };
}

/**
 * The database cache store's pause switches, read only once its `cache` table is there: an app
 * whose cache is elsewhere has none, and no queue of it is paused by that table. Pausing without
 * the table says what makes it.
 */
function databasePauses(cache: DatabaseQueueCache): PauseStore {
  let there = false;
  const tableThere = async () => (there ||= await cache.hasTable());
  return {
    async pausedQueues(connection, queues) {
      return (await tableThere()) ? cache.pausedQueues(connection, queues) : new Set<string>();
    },
    async pause(connection, queue, seconds) {
      if (!(await tableThere()))
        throw new HttpError(409, 'the database cache store has no `cache` table (php artisan cache:table makes it): no pause can be kept');
      await cache.pause(connection, queue, seconds);
    },
    resume: (connection, queue) => cache.resume(connection, queue),
  };
}

/** Horizon's prefix as `lqb work --horizon` finds it: given, else HORIZON_PREFIX or APP_NAME (the process's, then the .env's). */
function horizonPrefixOf(options: DashboardOptions): string {
  const fromFile = options.settings ? envFileOf(options.settings) : undefined;
  return horizonPrefix({
    prefix: typeof options.horizonPrefix === 'string' ? options.horizonPrefix : undefined,
    env: (name) => process.env[name] ?? fromFile?.[name],
  });
}

/** Horizon's record of a job, as the page shows it beside the job. */
function horizonSummary(record: HorizonJob): Record<string, unknown> {
  return {
    status: record.status,
    createdAt: record.createdAt,
    reservedAt: record.reservedAt,
    completedAt: record.completedAt,
    failedAt: record.failedAt,
  };
}

/** A Horizon record whose payload is gone (trimmed): what the record itself says. */
function emptySummary(record: HorizonJob): JobSummary {
  return {
    uuid: record.id,
    id: record.id,
    name: record.name ?? '?',
    className: null,
    attempts: null,
    maxTries: null,
    until: null,
    pushedAt: record.createdAt,
    properties: null,
    encrypted: false,
    side: null,
    payloadBytes: 0,
  };
}
const MAX_PAGE = 100;
/** No request for this long, and nobody is looking: the chart is sampled once a minute. */
const UNWATCHED_AFTER_MS = 60_000;
const UNWATCHED_SAMPLE_MS = 60_000;
const ASSETS = join(dirname(fileURLToPath(moduleUrl(import.meta.url))), 'assets');

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function createDashboard(options: DashboardOptions = {}): Dashboard {
  const connection = options.connection ?? resolveConnection(options.settings ?? {});
  const log = (line: string) => process.stderr.write(`lqb ui: ${redactLine(line)}\n`);
  // What can be refused is checked before anything is opened: a throw leaves nothing running.
  const access = new Access(options);
  const failedConfig = databaseConfig(connection.failedDb);
  const stores = openStores(connection, options, log);
  const { source, cache, horizon } = stores;
  const failed = new FailedJobsView(failedConfig, connection.failedTable);
  const batches = new BatchesView(databaseConfig(options.batchDb ?? connection.failedDb), options.batchTable ?? 'job_batches');
  const history = new History();
  // No key, no decryption: an encrypted command stays encrypted in every answer unless asked otherwise.
  const keys = options.showEncrypted === true ? { appKey: connection.appKey, cipher: connection.cipher } : {};
  const readOnly = options.readOnly === true;

  let known: { at: number; names: string[] } | undefined;
  /** The queues shown: those named, else those found (looked for again every 10 s). */
  async function queueNames(): Promise<string[]> {
    if (options.queues?.length) return options.queues;
    if (known && Date.now() - known.at < 10_000) return known.names;
    known = { at: Date.now(), names: await source.queueNames() };
    return known.names;
  }

  async function sample(): Promise<void> {
    lastSample = Date.now();
    for (const name of await queueNames()) {
      history.record(name, await source.counts(name));
      heads.set(name, await source.readySince(name));
    }
  }

  /**
   * When each queue's oldest ready job became ready, as the last sample read it: reading the
   * head job costs as much as the job weighs (a 50 MB one, 100 ms of Redis), so it is read
   * beside the requests, every sample, not in the overview's answer. The wait shown then grows
   * from it by the clock; a head taken since is seen at the next sample (5 s while watched).
   */
  const heads = new Map<string, number | null | undefined>();
  async function readySinceOf(name: string): Promise<number | null | undefined> {
    if (!heads.has(name)) heads.set(name, await source.readySince(name));
    return heads.get(name);
  }
  /**
   * The chart's samples: every `sampleEvery` ms while someone looks (a request in the last
   * minute), else once a minute, which still gives each minute its depth and what left the
   * queue. Counting a large jobs table costs its scan: nobody looking, nobody pays it often.
   */
  const sampleEvery = options.sampleEvery ?? 5000;
  let lastSample = 0;
  let lastVisit = 0;
  const watched = () => Date.now() - lastVisit < UNWATCHED_AFTER_MS;
  const timer = setInterval(() => {
    if (watched() || Date.now() - lastSample >= UNWATCHED_SAMPLE_MS - sampleEvery / 2) void sample().catch(() => undefined);
  }, sampleEvery);
  timer.unref();
  void sample().catch(() => undefined);

  /** Horizon's view when its records are there, else undefined (and the dashboard says what it says without it). */
  async function horizonThere(): Promise<HorizonView | undefined> {
    return horizon && (await horizon.present().catch(() => false)) ? horizon : undefined;
  }

  /** Horizon's view, for an answer that is only Horizon's: 404 without its records. */
  async function horizonOr404(): Promise<HorizonView> {
    const measuring = await horizonThere();
    if (!measuring) throw new HttpError(404, "Horizon's records are not there");
    return measuring;
  }

  /**
   * Horizon's recorder when Horizon's records are there, so a retry is `lqb retry`'s under
   * Horizon (Horizon's Retry for a job it holds a failed record of); else undefined: queue:retry.
   */
  async function horizonRecorder(): Promise<HorizonRecorder | undefined> {
    return stores.recorder && (await horizonThere()) ? stores.recorder : undefined;
  }

  async function overview(): Promise<unknown> {
    const [{ byQueue: failedCounts, since: failedWeek }, nodeMinutes] = await Promise.all([
      failed.countsByQueueSince(source.connection, new Date(Date.now() - 7 * 24 * HOUR * 1000)),
      stores.record.minutes(Date.now() / 1000 - HOUR).catch((): MinuteRow[] => []),
    ]);
    // A queue whose jobs all finished or failed has no keys left: its failed jobs, and Node's record of the hour, still name it.
    const names = options.queues?.length
      ? options.queues
      : [...new Set([...(await queueNames()), ...failedCounts.keys(), ...nodeMinutes.map((row) => row.queue)])].sort();
    const [paused, failures, measuring, nodeWorkers] = await Promise.all([
      cache.pausedQueues(source.connection, names),
      failed.failedSince(source.connection, new Date(Date.now() - HOUR * 1000)),
      horizonThere(),
      stores.record.workers().catch(() => []),
    ]);
    const masters = measuring ? await measuring.masters().catch(() => []) : undefined;
    const now = Date.now() / 1000;
    const queues = await Promise.all(
      names.map(async (name) => {
        const [counts, metrics, readySince] = await Promise.all([source.counts(name), measuring?.metrics(name), readySinceOf(name)]);
        history.record(name, counts);
        return {
          name,
          connection: source.connection,
          ...counts,
          failed: failedCounts.get(name) ?? 0,
          paused: paused.has(name),
          // The age of its oldest ready job: 0 when none waits, null when its payload does not say.
          wait: readySince === undefined ? 0 : readySince === null ? null : Math.max(0, Math.round(now - readySince)),
          history: history.of(
            name,
            failures.filter((f) => f.queue === name),
            undefined,
            ...finishedOf(name, metrics, nodeMinutes),
          ),
          ...(metrics ? { horizon: { throughput: metrics.throughput, runtime: metrics.runtime } } : {}),
        };
      }),
    );
    const failedTotal = [...failedCounts.values()].reduce((a, b) => a + b, 0);
    // Horizon's "longest wait", as the age of the oldest ready job, and which queue it is on.
    const longest = queues.reduce<{ queue: string; wait: number } | null>(
      (most, q) => (q.wait !== null && q.wait > 0 && (most === null || q.wait > most.wait) ? { queue: q.name, wait: q.wait } : most),
      null,
    );
    const finishedHour = queues.reduce((sum, q) => sum + (q.history.finished ?? []).reduce((a, b) => a + b, 0), 0);
    const counted = queues.some((q) => q.history.finished !== null);
    return {
      queues,
      failedTotal,
      summary: {
        // Horizon's "jobs past hour" and "jobs per minute", from what a record counts; null when nothing counts them.
        finishedPastHour: counted ? finishedHour : null,
        perMinute: counted ? Math.round((finishedHour / 60) * 10) / 10 : null,
        failedPastWeek: failedWeek,
        // Horizon's "status" and "processes", both sides: Node's workers by their heartbeats, Horizon's supervisors by theirs.
        nodeWorkers: nodeWorkers.length,
        processes:
          nodeWorkers.reduce((sum, worker) => sum + worker.concurrency, 0) +
          (masters ?? []).reduce(
            (sum, master) => sum + master.supervisors.reduce((n, sv) => n + Object.values(sv.processes).reduce((a, b) => a + b, 0), 0),
            0,
          ),
        horizon:
          masters === undefined
            ? null
            : masters.length === 0
              ? 'inactive'
              : masters.some((m) => m.status === 'paused')
                ? 'paused'
                : 'active',
      },
      longestWait: longest,
      readOnly,
      showEncrypted: options.showEncrypted === true,
      connection: source.connection,
      prefix: source.connection === 'redis' ? connection.prefix : undefined,
      horizon: measuring ? { prefix: measuring.prefix } : null,
      now: Math.floor(Date.now() / 1000),
    };
  }

  /** Each summary with Horizon's record of its job, when Horizon has one (looked up by the payload's id). */
  async function withHorizon<T extends { id: string | null; uuid: string | null }>(summaries: T[]): Promise<T[]> {
    const measuring = await horizonThere();
    if (!measuring) return summaries;
    const ids = summaries.map((job) => job.id ?? job.uuid).filter((id): id is string => id !== null);
    const records = await measuring.jobs(ids).catch(() => new Map<string, HorizonJob>());
    return summaries.map((job) => {
      const record = records.get(job.id ?? job.uuid ?? '');
      return record ? { ...job, horizon: horizonSummary(record) } : job;
    });
  }

  async function jobs(name: string, params: URLSearchParams): Promise<unknown> {
    const state = stateParam(params);
    const { offset, limit } = paging(params);
    const page = await source.page(name, state, offset, limit, { cut: true });
    const summaries = page.jobs.map((job, i) => {
      const summary = withColumns(summarizeStored(job, keys), job);
      return { ...summary, download: queuedPayloadPath(name, state, offset + i, summary.uuid) };
    });
    return { queue: name, state, offset, limit, total: page.total, jobs: await withHorizon(summaries) };
  }

  async function failedJobs(params: URLSearchParams): Promise<unknown> {
    const { offset, limit } = paging(params);
    const page = await failed.page(offset, limit, failedFilter(params), { cut: true });
    return { offset, limit, total: page.total, jobs: await withHorizon(page.jobs.map(failedSummary)) };
  }

  /** A page of one of Horizon's lists (recent, pending, completed, failed), each job decoded. */
  async function horizonJobs(list: string, params: URLSearchParams): Promise<unknown> {
    if (!(list in HORIZON_LISTS)) throw new HttpError(404, `Horizon has no list ${JSON.stringify(list)}`);
    const measuring = await horizonOr404();
    const { offset, limit } = paging(params);
    const page = await measuring.list(list as HorizonList, offset, limit);
    return { list, offset, limit, total: page.total, jobs: page.jobs.map(horizonListed) };
  }

  /** A job of one of Horizon's lists as a page shows it. */
  function horizonListed(record: HorizonListedJob): Record<string, unknown> {
    return {
      ...(record.payload === null ? emptySummary(record) : summarizeJob(record.payload, null, keys)),
      queue: record.queue,
      connection: record.connection,
      exception: record.exception === null ? null : cutForShowing(record.exception, EXCEPTION_SHOWN),
      side: sideOfException(record.exception),
      horizon: horizonSummary(record),
    };
  }

  /** Horizon's monitored tags, or one tag's jobs (`failed=1`: its failed ones), each decoded as Horizon's lists are. */
  async function horizonTags(tag: string | undefined, params: URLSearchParams): Promise<unknown> {
    const measuring = await horizonOr404();
    if (tag === undefined) return { tags: await measuring.monitored() };
    const { offset, limit } = paging(params);
    const failedOnly = params.get('failed') === '1';
    const page = await measuring.tagged(tag, failedOnly, offset, limit);
    return { tag, failed: failedOnly, offset, limit, total: page.total, jobs: page.jobs.map(horizonListed) };
  }

  function failedSummary(job: ListedFailure): JobSummary & Record<string, unknown> {
    return {
      ...summarizeStored({ payload: job.payload, until: null, ...(job.cut ? { cut: job.cut } : {}) }, keys),
      uuid: job.uuid,
      queue: job.queue,
      connection: job.connection,
      failedAt: job.failed_at,
      exception: cutOfWhole(job.exception, EXCEPTION_SHOWN, job.exceptionLength),
      side: sideOfException(job.exception),
      download: `api/failed/${encodeURIComponent(job.uuid)}/payload`,
    };
  }

  /**
   * A queued job's payload as stored, found where the page saw it (its state and place) and
   * checked to be the same job by its uuid: a list moves, and a download is of the job asked for.
   */
  async function queuedPayload(name: string, params: URLSearchParams): Promise<{ payload: string; uuid: string | null }> {
    const state = stateParam(params);
    const offset = Number(params.get('offset'));
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw new HttpError(400, `offset must be a whole number, not ${JSON.stringify(params.get('offset'))}`);
    const [job] = (await source.page(name, state, offset, 1)).jobs;
    const uuid = params.get('uuid');
    const found = job ? uuidOfPayload(job.payload) : null;
    if (!job) throw new HttpError(404, `no job is ${state} at ${offset} on ${name}`);
    if (uuid !== null && found !== uuid)
      throw new HttpError(409, `job ${uuid} is no longer ${state} at ${offset} on ${name}: the queue has moved since the page was read`);
    return { payload: job.payload, uuid: found };
  }

  /** A job's own page: from where a list saw it (`queue`, `state`, `offset`), else from its uuid alone. */
  async function jobPage(uuid: string, params: URLSearchParams): Promise<unknown> {
    const queue = params.get('queue');
    const state = (params.get('state') ?? 'ready') as JobState;
    const offset = Number(params.get('offset'));
    const place = queue && STATES.includes(state) && Number.isSafeInteger(offset) && offset >= 0 ? { queue, state, offset } : undefined;
    const page = await findJobPage(uuid, place, {
      source,
      failed,
      horizon: await horizonThere(),
      keys,
      queuedDownload: (at, id) => queuedPayloadPath(at.queue, at.state, at.offset, id),
      queues: queueNames,
    });
    if (!page) throw new HttpError(404, `no job ${uuid} on the queues shown, in failed_jobs or in Horizon's records`);
    return page;
  }

  /** A job's payload as stored, found as its page finds it (a queued job found by its uuid alone has no list place to download from). */
  async function jobPayload(uuid: string): Promise<{ payload: string; uuid: string }> {
    for (const queue of await queueNames()) {
      const job = await source.find(queue, uuid);
      if (job) return { payload: job.payload, uuid };
    }
    const failedJob = await failed.find(uuid);
    if (failedJob) return { payload: failedJob.payload, uuid };
    const record = await (await horizonThere())?.details(uuid);
    if (record?.payload) return { payload: record.payload, uuid };
    throw new HttpError(404, `no job ${uuid} on the queues shown, in failed_jobs or in Horizon's records`);
  }

  /** Node's workers from their heartbeats, and Horizon's masters and supervisors where Horizon runs. */
  async function workers(): Promise<unknown> {
    const measuring = await horizonThere();
    const [node, masters] = await Promise.all([stores.record.workers(), measuring?.masters()]);
    return { node, horizon: masters ?? null };
  }

  /**
   * Who runs what in the last hour, per class and per queue (src/ui/activity.ts): Node's record,
   * Horizon's metrics where Horizon runs, the failures by side; and the classes Node's running
   * workers take (their handlers), so a team moving classes sees which side each is on.
   */
  async function activity(): Promise<unknown> {
    const now = Date.now() / 1000;
    const from = Math.floor(now / 60) * 60 - 59 * 60;
    const measuring = await horizonThere();
    const [minutes, failures, jobMetrics, running] = await Promise.all([
      stores.record.minutes(from),
      failed.classesSince(source.connection, new Date(from * 1000)),
      measuring ? measuring.jobMetrics(now) : undefined,
      stores.record.workers(),
    ]);
    const queueMetrics = new Map<string, HorizonQueueMetrics>();
    if (measuring)
      for (const name of await queueNames()) {
        const measured = await measuring.metrics(name, now);
        if (measured) queueMetrics.set(name, measured);
      }
    const handled = new Set(running.flatMap((worker) => worker.classes ?? []));
    const classes = activityOf(
      minutes,
      from,
      (row) => row.className,
      jobMetrics ?? new Map<string, HorizonQueueMetrics>(),
      failures.map((f) => ({ name: f.className, side: f.side })),
    ).map((row) => ({ ...row, nodeHandles: running.some((worker) => worker.classes === undefined) ? null : handled.has(row.name) }));
    const queues = activityOf(
      minutes,
      from,
      (row) => row.queue,
      queueMetrics,
      failures.map((f) => ({ name: f.queue, side: f.side })),
    );
    return { from, horizon: measuring ? { prefix: measuring.prefix } : null, nodeWorkers: running.length, classes, queues };
  }

  /** One window of a search (src/ui/search.ts), each hit summarized as its list shows it, with the page it opens. */
  async function search(params: URLSearchParams): Promise<unknown> {
    const q = params.get('q') ?? '';
    if (q.trim() === '') throw new HttpError(400, 'search takes q: a uuid, a class, a tag or text in the command');
    const limit = paging(params).limit;
    const window = await searchWindow(q, decodeCursor(params.get('cursor')), limit, { source, queues: await queueNames(), failed });
    const hits = window.hits.map((hit) => {
      if (hit.where === 'failed') return { where: 'failed', ...failedSummary(hit.job as FailedJob) };
      const job = hit.job as StoredJob;
      const summary = summarizeJob(job.payload, job.until, keys);
      return {
        where: hit.where,
        queue: hit.queue,
        offset: hit.offset,
        ...summary,
        ...(job.id !== undefined ? { id: job.id } : {}),
        download: queuedPayloadPath(hit.queue, hit.where, hit.offset, summary.uuid),
      };
    });
    return { q, hits, next: window.next, searched: window.searched, total: window.total };
  }

  /** A batch and, for its failed jobs, what failed_jobs still says of each. */
  async function batch(id: string): Promise<unknown> {
    const found = await batches.find(id);
    if (!found) throw new HttpError(404, `no batch ${id} in ${options.batchTable ?? 'job_batches'}`);
    const failures = await Promise.all(found.failedJobIds.slice(0, MAX_PAGE).map((uuid) => failed.find(uuid)));
    return { ...found, failures: failures.filter((job): job is FailedJob => job !== undefined).map(failedSummary) };
  }

  /**
   * Retries a failed job as `lqb retry` does (under Horizon, as Horizon's Retry). Laravel's
   * queue:retry pushes onto the job's own connection: one this dashboard does not serve is refused.
   */
  async function retryJob(job: FailedJob): Promise<Record<string, unknown>> {
    if ((job.connection === 'redis' || job.connection === 'database') && job.connection !== source.connection)
      throw new HttpError(
        409,
        `the failed job [${job.uuid}] is of the ${job.connection} connection; this dashboard shows ${source.connection}`,
      );
    const outcome = await retryFailed(await horizonRecorder(), failed, source, job, {});
    if ('refused' in outcome) throw new HttpError(409, `the failed job [${job.uuid}] was not retried: ${outcome.refused}`);
    return { retried: job.uuid, queue: job.queue, ...(outcome.as === 'horizon' ? { horizon: { id: outcome.id } } : {}) };
  }

  /** Retries one failed job by uuid, as the Retry button does; false when failed_jobs has it no longer. */
  async function retryOne(uuid: string): Promise<boolean> {
    const job = await failed.find(uuid);
    if (!job) return false;
    await retryJob(job);
    return true;
  }

  /**
   * "Retry all" or "forget all" over a filter: only the failures the confirmed count saw (ids up
   * to `upTo`), a few hundred at a time; one recorded after the count is left as it is.
   */
  async function actOnMatching(verb: 'retry' | 'forget', body: Record<string, unknown>): Promise<unknown> {
    const filter = failedFilter(body);
    const upTo = Number(body.upTo);
    if (!Number.isSafeInteger(upTo) || upTo < 0) throw new HttpError(400, `${verb} all takes the upTo the count gave`);
    let after = 0;
    let done = 0;
    let gone = 0;
    for (;;) {
      const chunk = await failed.uuidsMatching(filter, upTo, after, 500);
      if (chunk.length === 0) break;
      for (const { id, uuid } of chunk) {
        after = id;
        const acted = verb === 'retry' ? await retryOne(uuid) : await failed.forget(uuid);
        if (acted) done++;
        else gone++;
      }
    }
    return { [verb === 'retry' ? 'retried' : 'forgotten']: done, gone, counted: Number(body.count ?? done) };
  }

  async function failedPayload(uuid: string): Promise<{ payload: string; uuid: string }> {
    const job = await failed.find(uuid);
    if (!job) throw new HttpError(404, `no failed job ${uuid}`);
    return { payload: job.payload, uuid };
  }

  async function act(path: string[], body: Record<string, unknown>): Promise<unknown> {
    const [what, name, verb] = path;
    if (what === 'failed' && name === 'flush' && verb === undefined) return { flushed: await failed.flush() };
    if (what === 'failed' && (name === 'retry-all' || name === 'forget-all') && verb === undefined)
      return actOnMatching(name === 'retry-all' ? 'retry' : 'forget', body);
    if (what === 'failed' && name !== undefined && verb === 'retry') {
      const job = await failed.find(name);
      if (!job) throw new HttpError(404, `no failed job ${name}`);
      return retryJob(job);
    }
    if (what === 'batches' && name !== undefined && verb === 'cancel') {
      const cancelled = await batches.cancel(name);
      if (!cancelled) throw new HttpError(404, `no batch ${name}`);
      return cancelled;
    }
    if (what === 'batches' && name !== undefined && verb === 'retry-failed') {
      // As queue:retry-batch: each of the batch's failed jobs retried as queue:retry retries it.
      const outcome = await batches.retryFailed(name, retryOne);
      if (!outcome) throw new HttpError(404, `no batch ${name}`);
      if (outcome.retried.length === 0 && outcome.missing.length === 0) throw new HttpError(409, `batch ${name} has no failed jobs`);
      return outcome;
    }
    if (what === 'failed' && name !== undefined && verb === 'forget') {
      if (!(await failed.forget(name))) throw new HttpError(404, `no failed job ${name}`);
      return { forgotten: name };
    }
    if (what === 'queues' && name !== undefined && verb === 'cancel') {
      if (typeof body.uuid !== 'string' || body.uuid === '') throw new HttpError(400, 'cancel takes {"uuid": "…"}');
      const outcome = await source.cancel(name, body.uuid);
      if (!outcome.cancelled) throw new HttpError(409, `job ${body.uuid} is not delayed on ${name}: ${outcome.state}`);
      return outcome;
    }
    if (what === 'queues' && name !== undefined && (verb === 'pause' || verb === 'resume')) {
      if (verb === 'pause') await cache.pause(source.connection, name);
      else await cache.resume(source.connection, name);
      return { queue: name, paused: verb === 'pause' };
    }
    throw new HttpError(404, `no action ${path.join('/')}`);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    lastVisit = Date.now();
    const url = new URL(req.url ?? '/', 'http://dashboard');
    let path = url.pathname;
    if (options.basePath && path.startsWith(options.basePath)) path = path.slice(options.basePath.length) || '/';

    const verdict = access.check(req, url.searchParams.get('token'));
    if (!verdict.allowed) {
      if (verdict.challenge) res.setHeader('WWW-Authenticate', verdict.challenge);
      return sendJson(res, verdict.status, { error: verdict.reason });
    }
    // A token given in the address is kept as a cookie and taken out of the address.
    const queryToken = url.searchParams.get('token');
    if (queryToken !== null && req.method === 'GET' && !path.startsWith('/api/')) {
      res.setHeader('Set-Cookie', `${TOKEN_COOKIE}=${encodeURIComponent(queryToken)}; HttpOnly; SameSite=Strict; Path=/`);
      res.writeHead(303, { Location: `${mountOf(req, path)}/` }).end();
      return;
    }

    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (parts.length === 0) return sendPage(req, res, path);
      if (parts[0] === 'assets') return sendAsset(res, parts.slice(1).join('/'));
      if (path === '/favicon.ico') return void res.writeHead(204).end();
      if (parts[0] === 'api' && parts[1] === 'overview' && parts.length === 2) return sendJson(res, 200, await overview());
      if (parts[0] === 'api' && parts[1] === 'queues' && parts[3] === 'payload' && parts.length === 4)
        return sendPayload(req, res, await queuedPayload(parts[2]!, url.searchParams));
      if (parts[0] === 'api' && parts[1] === 'failed' && parts[3] === 'payload' && parts.length === 4)
        return sendPayload(req, res, await failedPayload(parts[2]!));
      if (parts[0] === 'api' && parts[1] === 'queues' && parts[3] === 'jobs' && parts.length === 4)
        return sendJson(res, 200, await jobs(parts[2]!, url.searchParams));
      if (parts[0] === 'api' && parts[1] === 'jobs' && parts[3] === 'payload' && parts.length === 4)
        return sendPayload(req, res, await jobPayload(parts[2]!));
      if (parts[0] === 'api' && parts[1] === 'jobs' && parts.length === 3)
        return sendJson(res, 200, await jobPage(parts[2]!, url.searchParams));
      if (parts[0] === 'api' && parts[1] === 'workers' && parts.length === 2) return sendJson(res, 200, await workers());
      if (parts[0] === 'api' && parts[1] === 'activity' && parts.length === 2) return sendJson(res, 200, await activity());
      if (parts[0] === 'api' && parts[1] === 'completed' && parts.length === 2) {
        const { offset, limit } = paging(url.searchParams);
        const page = await stores.record.recent(offset, limit);
        return sendJson(res, 200, { offset, limit, ...page });
      }
      if (parts[0] === 'api' && parts[1] === 'search' && parts.length === 2) return sendJson(res, 200, await search(url.searchParams));
      if (parts[0] === 'api' && parts[1] === 'failed' && parts[2] === 'matching' && parts.length === 3)
        return sendJson(res, 200, await failed.matching(failedFilter(url.searchParams)));
      if (parts[0] === 'api' && parts[1] === 'batches' && parts.length === 2) {
        const { offset, limit } = paging(url.searchParams);
        return sendJson(res, 200, { offset, limit, ...(await batches.page(offset, limit)) });
      }
      if (parts[0] === 'api' && parts[1] === 'batches' && parts.length === 3) return sendJson(res, 200, await batch(parts[2]!));
      if (parts[0] === 'api' && parts[1] === 'failed' && parts.length === 2) return sendJson(res, 200, await failedJobs(url.searchParams));
      if (parts[0] === 'api' && parts[1] === 'horizon' && parts[2] === 'tags' && parts.length <= 4)
        return sendJson(res, 200, await horizonTags(parts[3], url.searchParams));
      if (parts[0] === 'api' && parts[1] === 'horizon' && parts.length === 3)
        return sendJson(res, 200, await horizonJobs(parts[2]!, url.searchParams));
      throw new HttpError(404, `nothing at ${path}`);
    }
    if (req.method === 'POST' && parts[0] === 'api') {
      const csrf = access.checkAction(req);
      if (!csrf.allowed) return sendJson(res, csrf.status, { error: csrf.reason });
      if (readOnly) return sendJson(res, 403, { error: 'the dashboard is read-only' });
      const body = await readJson(req);
      if (body.confirm !== true) throw new HttpError(400, 'an action must be confirmed: {"confirm": true}');
      return sendJson(res, 200, await act(parts.slice(1), body));
    }
    res.setHeader('Allow', 'GET, HEAD, POST');
    throw new HttpError(405, `${req.method} is not served here`);
  }

  function sendPage(req: IncomingMessage, res: ServerResponse, path: string): void {
    const html = asset('index.html')
      .toString('utf8')
      .replace('{{base}}', escapeHtml(`${mountOf(req, path)}/`))
      .replace('{{csrf}}', escapeHtml(access.csrf))
      .replace('{{readOnly}}', readOnly ? 'true' : 'false');
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', ...SECURITY_HEADERS });
    res.end(req.method === 'HEAD' ? undefined : html);
  }

  return {
    handler(req, res) {
      route(req, res).catch((error: unknown) => {
        const status = error instanceof HttpError ? error.status : 500;
        const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
        if (status === 500) log(`${req.method} ${req.url?.split('?')[0]}: ${message}`);
        if (!res.headersSent) sendJson(res, status, { error: message });
        else res.end();
      });
    },
    async close() {
      clearInterval(timer);
      await failed.close();
      await batches.close();
      await stores.close();
    },
  };
}

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'self'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

/**
 * The finished jobs of a queue's chart and who counted them: Horizon's metrics where Horizon
 * measures the queue (PHP's workers, and Node's under --horizon), else Node's own record (Node's
 * workers alone: PHP's are then not counted, and the page says so), else nothing.
 */
function finishedOf(
  queue: string,
  metrics: { points: { at: number; throughput: number }[] } | undefined,
  nodeMinutes: MinuteRow[],
): [FinishedPoint[], FinishedSource[]] {
  if (metrics) return [metrics.points.map((point) => ({ at: point.at, count: point.throughput })), ['horizon']];
  const mine = nodeMinutes.filter((row) => row.queue === queue);
  if (mine.length === 0) return [[], []];
  return [mine.map((row) => ({ at: row.minute, count: row.completed })), ['node']];
}

/** The failed-jobs filter a query or an action's body gives: `class`, `queue`, `exception` (empty ones ignored). */
function failedFilter(from: URLSearchParams | Record<string, unknown>): FailedFilter {
  const get = (name: string) => {
    const value = from instanceof URLSearchParams ? from.get(name) : from[name];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const [className, queue, exception] = [get('class'), get('queue'), get('exception')];
  return { ...(className ? { className } : {}), ...(queue ? { queue } : {}), ...(exception ? { exception } : {}) };
}

/** The `state` a query names (ready by default); 400 for one that is none of the three. */
function stateParam(params: URLSearchParams): JobState {
  const state = (params.get('state') ?? 'ready') as JobState;
  if (!STATES.includes(state)) throw new HttpError(400, `state must be one of ${STATES.join(', ')}, not ${JSON.stringify(state)}`);
  return state;
}

/** `offset` and `limit` (at most MAX_PAGE) from the query. */
function paging(params: URLSearchParams): { offset: number; limit: number } {
  const offset = Math.max(0, Math.floor(Number(params.get('offset') ?? 0)) || 0);
  const limit = Math.min(MAX_PAGE, Math.max(1, Math.floor(Number(params.get('limit') ?? 25)) || 25));
  return { offset, limit };
}

/** The path the page is served under: Express's mount (from originalUrl) or the basePath, without the trailing slash. */
function mountOf(req: IncomingMessage, path: string): string {
  const full = ((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/').split('?')[0]!;
  const inner = path === '/' ? '' : path;
  const mount = inner && full.endsWith(inner) ? full.slice(0, -inner.length) : full;
  return mount.replace(/\/+$/, '');
}

/** Where a page finds the download of a queued job's payload: its queue, state, place and uuid. */
function queuedPayloadPath(queue: string, state: JobState, offset: number, uuid: string | null): string {
  const query = new URLSearchParams({ state, offset: String(offset), ...(uuid !== null ? { uuid } : {}) });
  return `api/queues/${encodeURIComponent(queue)}/payload?${query.toString()}`;
}

/**
 * A job's payload as a download, whole and as stored but for the process's own secrets: each
 * kept password and APP_KEY is replaced by `***`, as in every other answer (a payload is the
 * app's data and is given as it is; the dashboard's own credentials never leave it). No URL
 * password in the payload is touched: that is the app's data too, and a download is for reading it.
 */
function sendPayload(req: IncomingMessage, res: ServerResponse, job: { payload: string; uuid: string | null }): void {
  const name = (job.uuid ?? 'job').replace(/[^A-Za-z0-9_-]/g, '_');
  res.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Disposition': `attachment; filename="${name}.json"`,
    'Cache-Control': 'no-store',
    ...SECURITY_HEADERS,
  });
  res.end(req.method === 'HEAD' ? undefined : hideKeptSecrets(job.payload));
}

/** Every JSON answer: no secret the process knows (APP_KEY, passwords) passes, whatever a payload or an exception holds. */
function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = redactSecrets(JSON.stringify(body, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...SECURITY_HEADERS });
  res.end(text);
}

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  html: 'text/html; charset=utf-8',
  svg: 'image/svg+xml',
};
const requireHere = requireBeside(import.meta.url);
/** Preact and htm in one ES module, from the `htm` package (a dependency), read once: its `exports` map names no such file, so it is found beside htm's main. */
const VENDOR = 'vendor/preact-htm.js';
const cached = new Map<string, Buffer>();

function asset(name: string): Buffer {
  let bytes = cached.get(name);
  if (!bytes) {
    const file = name === VENDOR ? join(dirname(requireHere.resolve('htm')), '..', 'preact', 'standalone.module.js') : join(ASSETS, name);
    bytes = readFileSync(file);
    cached.set(name, bytes);
  }
  return bytes;
}

const SERVED = new Set(['app.js', 'style.css', VENDOR]);
function sendAsset(res: ServerResponse, name: string): void {
  if (!SERVED.has(name)) throw new HttpError(404, `no asset ${name}`);
  res.writeHead(200, {
    'Content-Type': TYPES[name.split('.').pop()!] ?? 'application/octet-stream',
    'Cache-Control': 'public, max-age=300',
    ...SECURITY_HEADERS,
  });
  res.end(asset(name));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) throw new HttpError(413, 'the body is too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    const value = JSON.parse(text || '{}') as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object');
    return value as Record<string, unknown>;
  } catch {
    throw new HttpError(400, 'the body must be a JSON object');
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
