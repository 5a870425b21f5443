/**
 * Horizon's records of Node's work: what Horizon's listeners write when its queue fires
 * JobPushed, JobReserved, JobReleased, JobsMigrated, JobDeleted and Laravel's JobFailed, written
 * here for the same moments of a Node producer or worker, each in one round trip (a Lua step).
 *
 * The methods take what any worker has at hand (the queue's name, the payload string as the
 * queue holds it, the exception's text), never a worker's own types, so a worker or producer
 * calls them from its events. Keys are Horizon's prefix plus the name Horizon uses, on a client
 * that adds no prefix of its own (Horizon replaces the app's Redis prefix with its own).
 */
import type { BuiltPayload } from '../laravel/builders.js';
import { decodePayload } from '../laravel/payload.js';
import { encodeJson, type JsonValue } from '../laravel/json.js';
import { PhpObject, deref, type PhpValue } from '../php/index.js';
import { keyPrefixOf, lateDeleteKeys, runStep, type RedisClient } from '../redis/scripts.js';
import { whileBusy } from '../redis/busy.js';
import type { QueueDelete, QueueHorizonRecords } from '../redis/RedisQueue.js';
import { phpFloatString, phpRuntimeText, phpTimeString, systemClock, type Clock } from './clock.js';
import {
  horizonFacts,
  horizonFactsOf,
  horizonFactsOfJob,
  horizonIdOf,
  orderedUuid,
  retryPayload,
  builtWithHorizonAdditions,
  withHorizonAdditions,
  type BuiltEnvelope,
  type HorizonFacts,
} from './payload.js';
import {
  HorizonBatch,
  HorizonEvents,
  PLAIN_NUMBER,
  runHorizonEvents,
  runHorizonStep,
  packFields,
  runPushedOnce,
  type BatchedCompletion,
  type PushedOnceContext,
  type PushedOnceNow,
  type HorizonStamp,
} from './steps.js';
import { horizonTags, horizonType, underlyingClass } from './tags.js';

/** Horizon's `trim` settings, in minutes: how long each kind of record lives. */
export interface HorizonTrim {
  recent: number;
  pending: number;
  completed: number;
  recent_failed: number;
  failed: number;
  monitored: number;
}

/** The shipped config/horizon.php's values. */
export const DEFAULT_TRIM: HorizonTrim = { recent: 60, pending: 60, completed: 60, recent_failed: 10080, failed: 10080, monitored: 10080 };

export interface HorizonRecorderOptions {
  /** Horizon's prefix (see `horizonPrefix`), e.g. `laravel_horizon:`. */
  prefix: string;
  /** The queue connection's name in the app's config/queue.php, which Horizon's records show. */
  connection?: string;
  trim?: Partial<HorizonTrim>;
  /** `horizon.silenced`: job classes kept out of the completed list. */
  silenced?: readonly string[];
  /** Seconds since the epoch, with a fraction; tests may stand in their own. */
  clock?: Clock;
  /**
   * Send the worker's records (reserved, released, migrated, completed, failed) of one turn of
   * the event loop together, in one round trip: for a worker running many jobs at once, where a
   * call per record costs more than its job. Off by default: each record is its own step.
   */
  batch?: boolean;
}

/** How the job Node's producer pushes differs from what its command alone says. */
export interface PrepareOptions {
  /** The job's tags(): Horizon then takes these rather than the models' tags. */
  tags?: readonly string[];
  /** Whether it is silenced (as a job implementing Horizon's Silenced is); else `silenced` decides. */
  silenced?: boolean;
  /** The command, when the caller has it (an encrypted one cannot be read from the payload). */
  command?: PhpValue;
  /**
   * A payload pushed as it is, like Horizon's Retry: no job object stands behind it, so Horizon
   * adds type job, no tags of its own, not silenced, and leaves its id as it is.
   */
  raw?: boolean;
  /** The envelope the payload was just encoded from (buildPayload's), which spares reading it again. */
  built?: BuiltEnvelope;
}

export interface DeletedOptions {
  /** The job is being failed: Laravel deletes it first, and Horizon neither measures nor monitors it then. */
  failing?: boolean;
  /** How long it ran, in milliseconds; by default the time since `reserved` was recorded in this process (0 when it was not). */
  runtimeMs?: number;
  /** What the payload says (horizonFactsOf), when the caller has read it already; else it is read here. */
  facts?: HorizonFacts;
}

export interface FailedOptions {
  /** The exception's context() (PHP's json_encode of it); none by default, which Horizon stores as ''. */
  context?: JsonValue;
  /** What the payload says (horizonFactsOf), when the caller has read it already; else it is read here. */
  facts?: HorizonFacts;
}

/** What Horizon's Retry reads from a failed job's record. */
export interface FailedRecord {
  id: string;
  connection: string;
  queue: string;
  /** The payload as the failed attempt reserved it. */
  payload: string;
}

export class HorizonRecorder {
  readonly prefix: string;
  readonly connection: string;
  readonly trim: HorizonTrim;
  private readonly silenced: ReadonlySet<string>;
  private readonly clock: Clock;
  /** Horizon's Stopwatch: when each job this process reserved was reserved, in ms, by id. */
  private readonly started = new Map<string, number>();
  private readonly batch: HorizonBatch | undefined;
  private recordError: ((error: unknown) => void) | undefined;
  private expiries: { at: number; completedAt: string; monitoredAt: string; tail: string | undefined } = {
    at: NaN,
    completedAt: '',
    monitoredAt: '',
    tail: undefined,
  };
  private readonly pushContexts = new Map<string, { fields: PushedOnceContext; packed: string }>();
  private lastPushedNow: { stamp: HorizonStamp | undefined; packed: string } = { stamp: undefined, packed: '' };
  private lastStamp: { tick: number; stamp: HorizonStamp } = {
    tick: NaN,
    stamp: { now: '', score: '', at: 0, completedAt: '', monitoredAt: '', token: undefined },
  };

  constructor(
    readonly client: RedisClient,
    options: HorizonRecorderOptions,
  ) {
    const keyPrefix = keyPrefixOf(client);
    if (keyPrefix)
      throw new Error(`Horizon's records take no app prefix: give the recorder a client without keyPrefix (found "${keyPrefix}")`);
    this.prefix = options.prefix;
    this.connection = options.connection ?? 'redis';
    this.trim = { ...DEFAULT_TRIM, ...options.trim };
    this.silenced = new Set(options.silenced ?? []);
    this.clock = options.clock ?? systemClock;
    this.batch = options.batch ? new HorizonBatch(client, this.prefix, this.connection) : undefined;
  }

  /**
   * The payload as Horizon's queue pushes it (RedisQueue::createPayloadArray and
   * JobPayload::prepare): push this string, then call `pushed` with it.
   */
  prepare(payload: string, options: PrepareOptions = {}): string {
    return this.prepared(payload, options).payload;
  }

  /**
   * prepare, with the facts Horizon's listeners read from the payload it gives (for `pushed`),
   * known without reading it again when the producer hands over the envelope it built.
   */
  prepared(payload: string, options: PrepareOptions = {}): { payload: string; facts: HorizonFacts | undefined } {
    return this.laidOut({ raw: payload, envelope: options.built }, options);
  }

  /**
   * prepared, for a payload Node's producer has just built (buildPayload's): laid out from its
   * envelope and command, its own text not encoded at all when the envelope suffices.
   */
  preparedBuilt(
    built: BuiltPayload,
    options: Pick<PrepareOptions, 'tags' | 'silenced'> = {},
  ): { payload: string; facts: HorizonFacts | undefined } {
    return this.laidOut(built, { ...options, command: built.command });
  }

  /** prepared's work: `source.raw` is read only when the payload must be (a raw push, no command at hand, an envelope laid out by a read). */
  private laidOut(
    source: { readonly raw: string; readonly envelope?: BuiltEnvelope | undefined },
    options: PrepareOptions,
  ): { payload: string; facts: HorizonFacts | undefined } {
    // microtime(true) as a string, as the records' times are: the stamp of this tick.
    const pushedAt = this.stamp().now;
    if (options.raw)
      return {
        payload: withHorizonAdditions(source.raw, { type: 'job', tags: [], silenced: false, pushedAt }, { idFromUuid: false }),
        facts: undefined,
      };
    const { commandName, command } = readCommand(source, options.command);
    const silenced = options.silenced ?? this.silenced.has(underlyingClass(command, commandName));
    const additions = { type: horizonType(commandName), tags: horizonTags(command, options.tags), silenced, pushedAt };
    const built = source.envelope;
    const prepared = builtWithHorizonAdditions(source, additions);
    // Horizon's listeners read the laid-out payload: the built envelope with the id made the uuid
    // and the additions, unless tags were there already (Horizon's layout merges them: read then).
    const facts =
      built && typeof built.uuid === 'string' && !Object.hasOwn(built, 'tags')
        ? horizonFactsOf({ uuid: built.uuid, displayName: built.displayName, retry_of: built.retry_of, tags: additions.tags, silenced })
        : undefined;
    return { payload: prepared, facts };
  }

  /** JobPushed: recent and pending, the job's hash (expiring after trim.pending), monitored tags. */
  async pushed(queue: string, payload: string, facts: HorizonFacts = horizonFacts(payload)): Promise<void> {
    const { keys, args } = this.pushedStep(queue, payload, facts);
    await runHorizonStep(this.client, 'lqbHorizonPushed', keys, args);
  }

  /**
   * The push itself and JobPushed's records in one step, on this client, for a queue on the same
   * Redis (the connection's: Horizon's client is the queue's without its prefix). `push` is the
   * push-once step's keys spelled in full (the app's prefix included) and its arguments. Resolves
   * true when this send pushed the job, false when an earlier send had (and had recorded it).
   */
  async pushedOnce(
    queue: string,
    push: { keys: string[]; payload: string; due: number | ''; markerMs: number },
    facts: HorizonFacts = horizonFacts(push.payload),
  ): Promise<boolean> {
    const [list, notify, delayed, marker] = push.keys as [string, string, string, string];
    const job = packFields([marker, facts.id, String(push.due), ...facts.tags]);
    const context = this.pushContext([list, notify, delayed, String(push.markerMs), this.connection, queue, facts.name, this.prefix]);
    return (await runPushedOnce(this.client, push.payload, job, context, this.pushedNow())) === 1;
  }

  /**
   * The pushed-once step's strings of a queue and job name, packed once for every push of them
   * (the last of each name kept, a few hundred names at most).
   */
  private pushContext(fields: PushedOnceContext): string {
    const name = fields[6];
    const known = this.pushContexts.get(name);
    if (known && known.fields.every((field, i) => field === fields[i])) return known.packed;
    if (this.pushContexts.size >= 256) this.pushContexts.clear();
    const packed = packFields(fields);
    this.pushContexts.set(name, { fields, packed });
    return packed;
  }

  /** The pushed-once step's strings of now (now, minus now, the pending hash's expiry), packed once a tick. */
  private pushedNow(): string {
    const stamp = this.stamp();
    if (this.lastPushedNow.stamp !== stamp) {
      const now: PushedOnceNow = [stamp.now, stamp.score, this.pendingExpiry(stamp)];
      this.lastPushedNow = { stamp, packed: packFields(now) };
    }
    return this.lastPushedNow.packed;
  }

  /** pushed.lua's keys and arguments. */
  private pushedStep(queue: string, payload: string, facts: HorizonFacts): { keys: string[]; args: string[] } {
    const stamp = this.stamp();
    const p = this.prefix;
    return {
      keys: [`${p}recent_jobs`, `${p}pending_jobs`, p + facts.id, `${p}monitoring`],
      args: [facts.id, this.connection, queue, facts.name, payload, stamp.now, stamp.score, this.pendingExpiry(stamp), p, ...facts.tags],
    };
  }

  /** When a pending job's hash expires (UNIX seconds): trim.pending after the stamp's second. */
  private pendingExpiry(stamp: HorizonStamp): string {
    return String(stamp.at + this.trim.pending * 60);
  }

  /**
   * JobReserved: the hash holds the reserved payload; the job's run is timed from now, unless
   * `timed` is false (a caller that measures the runtime itself and gives it to `deleted`).
   * Batching, the promise is the batch's, which every record of the turn shares.
   */
  reserved(
    queue: string,
    reservedPayload: string | Buffer,
    id = horizonFacts(String(reservedPayload)).id,
    { timed = true }: { timed?: boolean } = {},
  ): Promise<void> {
    void queue;
    const stamp = this.stamp();
    if (timed) this.started.set(id, performance.now());
    if (this.batch) return this.batch.reserved(stamp, id, reservedPayload);
    return runHorizonStep(this.client, 'lqbHorizonReserved', [this.prefix + id], [reservedPayload, stamp.now]);
  }

  /**
   * What a RedisQueue on the same Redis needs to write JobReserved's, JobReleased's and
   * JobsMigrated's records in its own steps (RedisQueueOptions.horizon): this prefix, and now
   * as this recorder stamps its records.
   */
  queueRecords(): QueueHorizonRecords {
    return {
      prefix: this.prefix,
      now: () => this.stamp().now,
      keyOf: (job) => this.prefix + horizonIdOf(job),
      deleteReserved: (client, key, deletes) => this.deletedInStep(client, key, deletes),
    };
  }

  /**
   * A queue's deletes of one turn and JobDeleted's records of them, in one batch step on the
   * queue's client: each job's completion is written only if its delete removed it, from the
   * reserved zset or, late, from the list a migration moved it back to (a job a worker took
   * again is not complete: that run completes it). A job deleted to be failed is only removed: its
   * records (deleted as failing, then failed) are the recorder's, written with the failure.
   * Should the step fail partway or not run (a record's key of another type, a script Redis
   * refuses), the deletes are made again by a ZREM alone and the records' failure is told to
   * onRecordError's listener: a job that ran is never left to run again for its records. (A full
   * Redis takes the step: its first call is a ZREM, after which Redis lets a script write.)
   */
  private async deletedInStep(client: RedisClient, key: string, deletes: readonly QueueDelete[]): Promise<void> {
    const events = new HorizonEvents();
    events.at(this.stamp());
    for (const { job, ending } of deletes) {
      if (ending?.failing) events.deletedOnly(job.reservedBytes);
      else
        events.completed(
          this.completion(job.queue, horizonFactsOfJob(job, job.envelope), ending?.runtimeMs ?? 0, false, job.reservedBytes),
          { removing: true },
        );
    }
    try {
      await runHorizonEvents(client, lateDeleteKeys(key), this.prefix, this.connection, events);
    } catch (error) {
      await whileBusy(() =>
        runStep(
          client,
          'lqbDelete',
          lateDeleteKeys(key),
          deletes.map(({ job }) => job.reservedBytes),
        ),
      );
      this.recordError?.(error);
    }
  }

  /** Told when the records a queue writes beside its deletes were not written (the deletes were). */
  onRecordError(listener: (error: unknown) => void): void {
    this.recordError = listener;
  }

  /** A completion as the batch step writes it. */
  private completion(queue: string, facts: HorizonFacts, runtimeMs: number, failing: boolean, payload: string | Buffer): BatchedCompletion {
    return {
      id: facts.id,
      queue,
      name: facts.name,
      runtime: phpRuntimeText(runtimeMs),
      failing,
      silenced: facts.silenced,
      retryOf: facts.retryOf,
      payload,
      tags: facts.tags,
    };
  }

  /** JobReleased: pending again, with the payload as it now waits in the queue. */
  released(queue: string, reservedPayload: string | Buffer, id = horizonFacts(String(reservedPayload)).id): Promise<void> {
    void queue;
    this.started.delete(id);
    const stamp = this.stamp();
    if (this.batch) return this.batch.released(stamp, id, reservedPayload);
    return runHorizonStep(this.client, 'lqbHorizonReleased', [this.prefix + id], [stamp.now, reservedPayload]);
  }

  /** JobsMigrated: each job a migration moved back onto the queue is pending again. */
  async migrated(queue: string, payloads: readonly string[]): Promise<void> {
    void queue;
    if (payloads.length === 0) return;
    const stamp = this.stamp();
    const ids = payloads.map((payload) => horizonFacts(payload).id);
    if (this.batch) {
      // Every record of a batch settles with its one promise: the last one's is the batch's.
      let settled: Promise<void> | undefined;
      for (const [i, id] of ids.entries()) settled = this.batch.released(stamp, id, payloads[i]!);
      await settled;
      return;
    }
    const keys = ids.map((id) => this.prefix + id);
    await runHorizonStep(this.client, 'lqbHorizonReleased', keys, [stamp.now, ...payloads]);
  }

  /**
   * JobDeleted: completed (or silenced), out of pending; a retry tells the job it retries; a job
   * with a monitored tag is kept as long as monitored jobs are; and, unless it is being failed,
   * the queue's and the job's metrics count it.
   */
  deleted(queue: string, reservedPayload: string | Buffer, options: DeletedOptions = {}): Promise<void> {
    const facts = options.facts ?? horizonFacts(String(reservedPayload));
    const failing = options.failing ?? false;
    const began = this.started.get(facts.id);
    this.started.delete(facts.id);
    const runtime = options.runtimeMs ?? (began === undefined ? 0 : performance.now() - began);
    const stamp = this.stamp();
    if (this.batch) return this.batch.completed(stamp, this.completion(queue, facts, runtime, failing, reservedPayload));
    const { now, score } = stamp;
    const p = this.prefix;
    const hash = p + facts.id;
    return runHorizonStep(
      this.client,
      'lqbHorizonCompleted',
      [
        hash,
        `${p}${facts.silenced ? 'silenced_jobs' : 'completed_jobs'}`,
        `${p}pending_jobs`,
        `${p}monitoring`,
        `${p}monitored_jobs`,
        `${p}queue:${queue}`,
        `${p}measured_queues`,
        `${p}job:${facts.name}`,
        `${p}measured_jobs`,
        facts.retryOf === undefined ? hash : p + facts.retryOf,
      ],
      [
        facts.id,
        failing ? 1 : 0,
        facts.retryOf === undefined ? 0 : 1,
        now,
        score,
        stamp.completedAt,
        stamp.monitoredAt,
        phpRuntimeText(runtime),
        this.connection,
        queue,
        facts.name,
        // Only a job with a tag can be monitored, and only then is its payload written again:
        // a job without tags does not send it.
        facts.tags.length > 0 ? reservedPayload : '',
        ...facts.tags,
      ],
    );
  }

  /**
   * JobFailed (after `deleted` with `failing`): failed and recently failed, out of pending,
   * completed and silenced; the hash keeps the reserved payload and the exception for
   * trim.failed; each tag's failed:TAG set gains the job.
   */
  async failed(queue: string, reservedPayload: string | Buffer, exception: unknown, options: FailedOptions = {}): Promise<void> {
    const facts = options.facts ?? horizonFacts(String(reservedPayload));
    this.started.delete(facts.id);
    const stamp = this.stamp();
    const p = this.prefix;
    const args = [
      facts.id,
      this.connection,
      queue,
      facts.name,
      reservedPayload,
      exceptionText(exception),
      options.context === undefined ? '' : encodeJson(options.context),
      stamp.now,
      stamp.score,
      String(stamp.at + this.trim.failed * 60),
      String(this.trim.failed * 60),
      p,
      ...facts.tags,
    ];
    if (this.batch) return this.batch.failed(stamp, args, facts.tags.length);
    return runHorizonStep(
      this.client,
      'lqbHorizonFailed',
      [p + facts.id, `${p}failed_jobs`, `${p}recent_failed_jobs`, `${p}pending_jobs`, `${p}completed_jobs`, `${p}silenced_jobs`],
      args,
    );
  }

  /**
   * Horizon's Retry for a failed job: the payload to push raw for the new job `id`
   * (`prepare(payload, { raw: true })`), made from the failed record's payload.
   */
  retryPayload(failedPayload: string, failedId: string, id: string): string {
    return retryPayload(failedPayload, { id, retryOf: failedId, now: this.clock() });
  }

  /**
   * Horizon's findFailed: the failed record of `id`, when Horizon holds one (a hash with an id
   * and the status failed), with what its Retry reads from it; else undefined.
   */
  async findFailed(id: string): Promise<FailedRecord | undefined> {
    const [recordId, status, connection, queue, payload] = await this.client.hmget(
      this.prefix + id,
      'id',
      'status',
      'connection',
      'queue',
      'payload',
    );
    if (recordId == null || status !== 'failed' || payload == null) return undefined;
    return { id: recordId, connection: connection ?? '', queue: queue ?? '', payload };
  }

  /** The id Horizon's Retry gives the new job: Str::orderedUuid(), made now. */
  retryId(): string {
    return orderedUuid(this.clock());
  }

  /** After a retry was pushed: the failed job's retried_by gains it, as pending. */
  async retried(failedId: string, id: string): Promise<void> {
    const entry = encodeJson({ id, status: 'pending', retried_at: Math.floor(this.clock()) });
    await runHorizonStep(this.client, 'lqbHorizonRetried', [this.prefix + failedId], [entry]);
  }

  /** The Monitoring tab's "monitor": jobs pushed with this tag are kept in its list from now on. */
  async monitor(tag: string): Promise<void> {
    await this.client.sadd(`${this.prefix}monitoring`, tag);
  }

  /**
   * Now as Horizon stamps its records: the time, minus the time (list scores), and the whole
   * second. Made once per tenth of a millisecond (the last digit PHP prints of a time today): the
   * records of the jobs a worker ends together are stamped alike, as if in the same microtime.
   */
  private stamp(): HorizonStamp {
    const time = this.clock();
    const tick = Math.floor(time * 1e4);
    if (tick !== this.lastStamp.tick) this.lastStamp = { tick, stamp: this.stampOf(time) };
    return this.lastStamp.stamp;
  }

  private stampOf(time: number): HorizonStamp {
    const now = phpTimeString(time);
    // PHP prints -x as '-' and x: a time after the epoch need not be printed twice.
    const score = time > 0 ? `-${now}` : phpFloatString(-time);
    const at = Math.floor(time);
    // The expiries change once a second: made then, not at every tick.
    let expiries = this.expiries;
    if (expiries.at !== at) {
      const completedAt = String(at + this.trim.completed * 60);
      const monitoredAt = String(at + this.trim.monitored * 60);
      const plain = PLAIN_NUMBER.test(completedAt) && PLAIN_NUMBER.test(monitoredAt);
      this.expiries = expiries = { at, completedAt, monitoredAt, tail: plain ? `:${completedAt}:${monitoredAt}` : undefined };
    }
    const { completedAt, monitoredAt, tail } = expiries;
    const token = tail !== undefined && time > 0 && PLAIN_NUMBER.test(now) ? `T${now}${tail}` : undefined;
    return { now, score, at, completedAt, monitoredAt, token };
  }
}

/** The command's class and the command itself, from the caller or the payload (undefined when encrypted or not an object job). */
function readCommand(
  source: { readonly raw: string },
  given: PhpValue | undefined,
): { commandName: string; command: PhpValue | undefined } {
  // data.commandName is get_class() of the command: with the command at hand, the payload need not be read.
  const object = given === undefined ? undefined : deref(given);
  if (object instanceof PhpObject) return { commandName: object.className, command: object };
  const decoded = decodePayload(source.raw);
  const data = decoded.envelope.data;
  const commandName =
    data !== null && typeof data === 'object' && !Array.isArray(data) && typeof (data as Record<string, unknown>).commandName === 'string'
      ? ((data as Record<string, unknown>).commandName as string)
      : decoded.name;
  return { commandName, command: given ?? decoded.command };
}

/** The exception as Horizon stores it: PHP's (string) $exception; for a JavaScript error, its stack (name, message, then the frames). */
export function exceptionText(exception: unknown): string {
  if (exception instanceof Error) return exception.stack ?? `${exception.name}: ${exception.message}`;
  return String(exception);
}
