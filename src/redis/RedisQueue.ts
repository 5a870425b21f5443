/**
 * Laravel's Redis queue, on ioredis: the same keys, the same atomic steps, the same timing.
 *
 * For a queue NAME (under the client's key prefix, Laravel's `laravel_database_` or yours):
 * `queues:NAME` is the ready list, `:delayed` and `:reserved` are zsets scored by UNIX time,
 * `:notify` holds one token per ready job for workers that block. Before each pop, due jobs
 * move from `:delayed` and expired reservations from `:reserved` back to the list, as
 * Laravel's RedisQueue does, so PHP and Node workers can share one queue.
 */
import type { Redis } from 'ioredis';
import { keyPrefixOf, lateDeleteKeys, registerSteps, runStep, type RedisClient } from './scripts.js';
import { RedisJob } from './RedisJob.js';
import { encodeString } from '../laravel/json.js';
import { BookkeepingError, whileBusy } from './busy.js';
import type { DeleteEnding, Queue, QueuedJob, TakeOnly, ThreadRenewal, WatchedClient } from '../queue/contract.js';
import { threadRenewalFor } from './threadRenewal.js';
import { Slots } from '../internal/slots.js';
import { settlement, type Settlement } from '../internal/settlement.js';
import { ClassTally, type ClassCount } from '../queue/byClass.js';

export type { QueuedJob } from '../queue/contract.js';

export interface RedisQueueOptions {
  /** The queue used when none is named (Laravel's `queue` setting). */
  defaultQueue?: string;
  /** Seconds a reserved job may run before another worker may take it; null never gives it back. */
  retryAfter?: number | null;
  /** Seconds to block on `:notify` when the queue is empty (Laravel's `block_for`); null polls. */
  blockFor?: number | null;
  /** Most jobs to move per migration (Laravel 9.23+'s `migration_batch_size`); all when not positive. */
  migrationBatchSize?: number;
  /**
   * The clock, in UNIX seconds; tests may stand in their own. Without one, the reserve step
   * reads Redis's own clock (a stall between asking and Redis running it cannot shorten a
   * reservation); delays and release times are this process's, as Laravel's.
   */
  now?: () => number;
  /** The most payload bytes one reserve takes (at least one job whatever its size); RESERVE_BYTES by default. */
  reserveBytes?: number;
  /** How far one reserve with share on looks along a queue past jobs it leaves (SHARE_LOOK by default). */
  shareLook?: Partial<ShareLook>;
  /**
   * Keys as Laravel 13.5+ writes them on a Redis Cluster: `queues:{NAME}` (one slot for all
   * four keys) unless NAME has a hash tag of its own. On by default for a cluster client:
   * before 13.5 only hash-tagged names worked on a cluster at all, and those are unchanged.
   */
  hashTags?: boolean;
  /**
   * Told which payloads each migration moved back onto a queue (due delayed jobs, expired
   * reservations), as Horizon's queue fires JobsMigrated. Only with it does the reserve step
   * send them back, so a queue without it pays nothing.
   */
  onMigrated?: (queue: string, payloads: string[]) => void;
  /**
   * Horizon's records of the queue's own moves, written by its steps in the same round trip:
   * a job reserved (JobReserved), released or given back (JobReleased), or moved back by a
   * migration (JobsMigrated). In the step they cost no call of their own and no second send of
   * the payload, and they land in order with the moves (a job released, then reserved again at
   * once, is never left pending by a record that came late).
   */
  horizon?: QueueHorizonRecords;
}

/** Pushes of one turn for one queue, sent as one push-once-many step, and who waits for each one's outcome. */
interface PushesTogether {
  keys: string[];
  args: (string | number)[];
  /** Each push's outcome: 1 when it pushed, 0 when an earlier send had. */
  waiting: Settlement<number>[];
}

/** Where and when the queue's steps write Horizon's records (see RedisQueueOptions.horizon). */
export interface QueueHorizonRecords {
  /** Horizon's prefix: its keys, on this queue's Redis, carry it and no app prefix. */
  readonly prefix: string;
  /** Now as PHP's microtime(true) prints it: the records' time. */
  now(): string;
  /** The key of a job's record: the prefix and Horizon's id of the job (uuid ?? id, as PHP prints it). */
  keyOf(job: RedisJob): string;
  /**
   * The deletes of one turn on the queue's client, in one step: each job out of the reserved
   * zset `key` and JobDeleted's records (completed, its metrics) of each one not deleted to be
   * failed (a failing one's records follow with its failure's). Rejects when the delete failed;
   * records not written are the recorder's to tell.
   */
  deleteReserved(client: RedisClient, key: string, deletes: readonly QueueDelete[]): Promise<void>;
}

/** A delete as the queue's Horizon records read it: the job, and how it ended. */
export interface QueueDelete {
  job: RedisJob;
  ending: DeleteEnding | undefined;
}

/** Whether a name holds a non-empty `{…}` hash tag (Redis Cluster hashes only that part). */
export function hasHashTag(name: string): boolean {
  const open = name.indexOf('{');
  if (open < 0) return false;
  const close = name.indexOf('}', open + 1);
  return close > open + 1;
}

/**
 * How much one step of `find` looks at: at most this many jobs, or about this many bytes of
 * them, whichever comes first (a step reads one job at least, however large). Measured at a
 * fraction of a millisecond of Redis's time per step on 2 KB jobs (docs/redis-faults.md).
 */
export const FIND_STEP = { jobs: 500, bytes: 256 * 1024 };

/**
 * The most payload bytes one reserve takes: the step decodes and encodes each job it reserves
 * while Redis waits, so a few huge payloads in one call would hold Redis as long as all of them.
 */
export const RESERVE_BYTES = 8 * 1024 * 1024;

/**
 * How much one reserve with share on looks at (see docs/sharing.md): at most `entries` jobs of the
 * list, or about `bytes` of them, whichever comes first, read `window` at a time. Each reserve
 * goes on where the last one stopped, so a job behind a long run of PHP's is found a few
 * reserves later; the bound keeps every one of them short for the Redis every worker shares.
 */
export interface ShareLook {
  entries: number;
  bytes: number;
  window: number;
  /**
   * The most steps one reserve sends before it says it found nothing: a step that stopped at its
   * bound short of the list's tail is followed by the next at once (Redis serves every other
   * client between two), so a job behind many of PHP's waits round trips, not `--sleep`s.
   */
  steps: number;
}

export const SHARE_LOOK: ShareLook = { entries: 500, bytes: 256 * 1024, window: 100, steps: 1000 };

/**
 * Where a reserve with share on stopped on one queue: the last entry it looked at and left (its
 * exact bytes, and its index then). The next reserve begins just past it, wherever PHP's pops
 * have moved it since.
 */
interface ShareAnchor {
  index: number;
  entry: Buffer | '';
}

/** Deletes waiting to go out together on one reserved zset. */
interface DeleteBatch {
  /** The reserved payloads to ZREM, without Horizon's records. */
  members: (string | Buffer)[];
  /** With Horizon's records (see QueueHorizonRecords.deleteReserved): each delete as it came, in place of members. */
  deletes: QueueDelete[] | undefined;
  /** One promise for the batch, which every job in it is handed: it settles for all alike. */
  settled: Settlement<void>;
}

/** A reserve reply later than this (ms) means Redis stalled: the jobs in hand are renewed at once. */
const LATE_REPLY_MS = 1000;

export class RedisQueue implements Queue<RedisJob> {
  readonly driver = 'redis' as const;
  readonly defaultQueue: string;
  readonly retryAfter: number | null;
  readonly blockFor: number | null;
  private readonly migrationBatchSize: number;
  private readonly now: () => number;
  /** Whether the caller's clock stands in for Redis's (a test's). */
  private readonly ownClock: boolean;
  private readonly reserveBytes: number;
  private readonly shareLook: ShareLook;
  /** Per queue, where the last reserve with share on stopped (see ShareAnchor). */
  private readonly anchors = new Map<string, ShareAnchor>();
  /** The names a TakeOnly's classes are matched as, spelled as JSON spells them, per TakeOnly. */
  private readonly takeNames = new WeakMap<TakeOnly, string[]>();
  private readonly hashTags: boolean;
  private readonly onMigrated: ((queue: string, payloads: string[]) => void) | undefined;
  /** Horizon's records its steps write (RedisQueueOptions.horizon), when they write them. */
  readonly horizon: QueueHorizonRecords | undefined;
  /**
   * The jobs this worker holds: those it last renewed and those reserved since, less the ones it
   * deleted, released or gave back. A reserve that finds one of them come back (its reservation
   * ran out while Redis stalled) hands it back to its run instead of running it twice. Slots, not
   * a Map by uuid: a job comes and goes per job (see slots.ts), and only a retried job is looked up.
   */
  private held = new Slots<RedisJob>();
  /** Renewals with the allow-oom step (Redis 7+), until a server refuses its shebang. */
  private renewStep: 'lqbRenew' | 'lqbRenewPlain' = 'lqbRenew';
  /** Deletes waiting to go out together, by reserved-zset key. */
  private readonly pendingDeletes = new Map<string, DeleteBatch>();
  /** BLPOP holds a connection: blocking gets one of its own, made on first need. */
  private blocking: RedisClient | undefined;

  constructor(
    readonly client: RedisClient,
    options: RedisQueueOptions = {},
  ) {
    registerSteps(client);
    this.defaultQueue = options.defaultQueue ?? 'default';
    this.retryAfter = options.retryAfter === undefined ? 90 : options.retryAfter;
    this.blockFor = options.blockFor ?? null;
    this.migrationBatchSize = options.migrationBatchSize ?? -1;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.ownClock = options.now !== undefined;
    this.reserveBytes = options.reserveBytes ?? RESERVE_BYTES;
    this.shareLook = { ...SHARE_LOOK, ...options.shareLook };
    this.hashTags = options.hashTags ?? (client as { isCluster?: boolean }).isCluster === true;
    this.onMigrated = options.onMigrated;
    this.horizon = options.horizon;
  }

  /** The list key of a queue, before the client's prefix: `queues:NAME` (`queues:{NAME}` on a cluster). */
  key(queue?: string): string {
    const name = queue ?? this.defaultQueue;
    return this.hashTags && !hasHashTag(name) ? `queues:{${name}}` : `queues:${name}`;
  }

  /**
   * The `:reserved` zset of a queue, before the client's prefix: named once per queue, since
   * every finished job's delete names it.
   */
  reservedKey(queue: string): string {
    let key = this.reservedKeys.get(queue);
    if (key === undefined) {
      key = `${this.key(queue)}:reserved`;
      // A worker serves a few queues; a producer naming thousands keeps the last few only.
      if (this.reservedKeys.size >= 1024) this.reservedKeys.clear();
      this.reservedKeys.set(queue, key);
    }
    return key;
  }

  private readonly reservedKeys = new Map<string, string>();

  /** Appends a payload (a job's JSON) to the queue and wakes a blocked worker. */
  async pushRaw(payload: string, queue?: string): Promise<void> {
    const key = this.key(queue);
    await whileBusy(() => runStep(this.client, 'lqbPushMany', [key, `${key}:notify`], [payload]));
  }

  /** Schedules a payload to become ready after `delay` seconds (or at a Date). */
  async laterRaw(delay: number | Date, payload: string, queue?: string): Promise<void> {
    const at = this.availableAt(delay);
    await whileBusy(() => this.client.zadd(`${this.key(queue)}:delayed`, at, payload));
  }

  /**
   * Pushes a payload (ready, or delayed until `due`, UNIX seconds) once however often it is sent: a marker named
   * by its uuid, kept `markerMs`, makes a second send of the same push do nothing. For a producer
   * that sends a push again when it did not hear whether the first went through. Resolves true
   * when this send pushed it, false when an earlier one had.
   */
  async pushOnce(payload: string, uuid: string, options: { queue?: string; due?: number; markerMs: number }): Promise<boolean> {
    const keys = this.pushOnceKeys(uuid, options.queue);
    const due = options.due ?? '';
    this.pushesAwaiting++;
    try {
      // One at a time (no other push awaiting its reply) a push goes at once. With dispatches in
      // flight it goes with the others sent this turn, in one step: one command to build, write
      // and keep until its reply, and one call of the script, for them all.
      if (this.pushesAwaiting === 1)
        return (await whileBusy(() => runStep<number>(this.client, 'lqbPushOnce', keys, [payload, due, options.markerMs]))) === 1;
      return (await this.pushTogether(keys, due, payload, options.markerMs)) === 1;
    } finally {
      this.pushesAwaiting--;
    }
  }

  /** Pushes sent by pushOnce and not yet answered. */
  private pushesAwaiting = 0;

  /** This turn's pushes waiting to go out together (push-once-many.lua), by queue and marker life. */
  private readonly pushesTogether = new Map<string, PushesTogether>();

  /** A push joined to this turn's others for its queue, sent when the turn ends: 1 when it pushed, 0 when an earlier send had. */
  private pushTogether(keys: string[], due: number | '', payload: string, markerMs: number): Promise<number> {
    const [list, notify, delayed, marker] = keys as [string, string, string, string];
    const name = `${list}\n${markerMs}`;
    let together = this.pushesTogether.get(name);
    if (together === undefined) {
      const made: PushesTogether = { keys: [list, notify, delayed], args: [markerMs], waiting: [] };
      this.pushesTogether.set(name, made);
      // process.nextTick runs after this turn's microtasks, where one answered dispatch makes the next.
      process.nextTick(() => {
        this.pushesTogether.delete(name);
        whileBusy(() => runStep<number[]>(this.client, 'lqbPushOnceMany', made.keys, made.args)).then(
          (pushed) => made.waiting.forEach((push, i) => push.resolve(Number(pushed[i]))),
          (error: unknown) => made.waiting.forEach((push) => push.reject(error)),
        );
      });
      together = made;
    }
    together.keys.push(marker);
    together.args.push(due, payload);
    const outcome = settlement<number>();
    together.waiting.push(outcome);
    return outcome.promise;
  }

  /**
   * The push-once step's keys, before the client's prefix: the list, its notify list, the
   * delayed zset and the push's marker. With `prefixed`, spelled in full with the client's
   * prefix, for a step run on a client without one (Horizon's records with the push).
   */
  pushOnceKeys(uuid: string, queue?: string, { prefixed = false }: { prefixed?: boolean } = {}): string[] {
    const key = this.key(queue);
    const keys = [key, `${key}:notify`, `${key}:delayed`, `lqb-pushed:${key.slice('queues:'.length)}:${uuid}`];
    if (!prefixed) return keys;
    const prefix = keyPrefixOf(this.client);
    return keys.map((k) => prefix + k);
  }

  /** Pushes many payloads, in order, a thousand per round trip: the effect of that many pushes. */
  async bulkRaw(payloads: string[], queue?: string): Promise<void> {
    const key = this.key(queue);
    for (let i = 0; i < payloads.length; i += 1000) {
      const batch = payloads.slice(i, i + 1000);
      await whileBusy(() => runStep(this.client, 'lqbPushMany', [key, `${key}:notify`], batch));
    }
  }

  /**
   * Reserves the next job of a queue, or returns null. Due delayed jobs and expired
   * reservations are moved back first; with `blockFor`, waits that long for one to arrive.
   */
  async pop(queue?: string): Promise<RedisJob | null> {
    return (await this.popMany(queue, 1))[0] ?? null;
  }

  /**
   * Reserves up to `count` jobs in one round trip, with the migrations Laravel does before a
   * pop: the same effect as that many of Laravel's pops in a row. With `blockFor`, waits that
   * long for a job when there is none, then pops once more without migrating, as Laravel does.
   */
  async popMany(queue: string | undefined, count: number, take?: TakeOnly): Promise<RedisJob[]> {
    const name = queue ?? this.defaultQueue;
    const jobs = await this.reserve(name, count, true, take);
    // With share on, a step that stopped at its bound short of the tail goes on at once.
    for (let step = 1; jobs.length === 0 && take && !this.lookedToTail.has(name) && step < this.shareLook.steps; step++)
      jobs.push(...(await this.reserve(name, count, false, take)));
    if (jobs.length > 0 || this.blockFor === null) return jobs;
    if (!(await this.waitForNotify(this.key(name)))) return [];
    const woken = await this.reserve(name, count, false, take);
    // The token was a PHP job's, which is still there: it goes back, so notify stays one per job.
    if (woken.length === 0 && take) await this.client.rpush(`${this.key(name)}:notify`, 1);
    return woken;
  }

  /** The reserve step's arguments that choose what it takes: none for Laravel's pop, the look past PHP's jobs with `take`. */
  private takeArguments(name: string, take: TakeOnly | undefined): (string | number | Buffer)[] {
    if (!take) return [];
    const anchor = this.anchors.get(name) ?? { index: -1, entry: '' };
    const { entries, bytes, window } = this.shareLook;
    return [1, anchor.index, anchor.entry, entries, bytes, window, ...this.namesOf(take)];
  }

  /**
   * The classes as the step matches them: inside a JSON string, as Laravel writes them before
   * 8.82 (non-ASCII as \uXXXX) and after (raw UTF-8, as cjson writes them too).
   */
  private namesOf(take: TakeOnly): string[] {
    let names = this.takeNames.get(take);
    if (names === undefined) {
      // A class with a canary share carries it after a tab (no class name holds one): NAME\tPERCENT.
      const spelled = take.classes.flatMap((name) =>
        [encodeString(name, false), encodeString(name, true)].map(
          (json) => json.slice(1, -1) + (take.shares?.[name] === undefined ? '' : `\t${take.shares[name]}`),
        ),
      );
      names = [...new Set(spelled)];
      this.takeNames.set(take, names);
    }
    return names;
  }

  private async reserve(name: string, count: number, migrate: boolean, take?: TakeOnly): Promise<RedisJob[]> {
    const key = this.key(name);
    const asked = performance.now();
    // The reply comes as bytes: the reserved copy is only ever sent back to Redis (delete,
    // release), which bytes do without a round of UTF-8 encoding; only the pushed payload is
    // read, so only it becomes a string.
    const keys = [key, `${key}:delayed`, `${key}:reserved`, `${key}:notify`];
    const args = [
      this.ownClock ? this.now() : '',
      this.retryAfter ?? 0,
      Math.max(0, Math.floor(count)),
      migrate ? 1 : 0,
      migrate && this.retryAfter !== null ? 1 : 0,
      this.migrationBatchSize,
      this.reserveBytes,
      migrate && this.onMigrated ? 1 : 0,
      ...(this.horizon ? [this.horizon.prefix, this.horizon.now()] : take ? ['', ''] : []),
      ...this.takeArguments(name, take),
    ];
    const deletes = this.deletesWaiting(keys[2]!);
    const flat = deletes
      ? await this.deleteThenReserve(keys, args, deletes)
      : await runStep<Buffer[]>(this.client, 'lqbReserve', keys, args, true);
    const lead = take ? this.keepAnchor(name, flat) : 0;
    const first = migrate && this.onMigrated ? this.tellMigrated(name, flat, lead) : lead;
    const jobs: RedisJob[] = [];
    for (let i = first; i + 1 < flat.length; i += 2) jobs.push(new RedisJob(this, name, flat[i]!.toString('utf8'), flat[i + 1]!));
    if (this.retryAfter === null) return jobs;
    // A late reply: Redis stalled, and the reservations in hand may be near their end.
    if (performance.now() - asked > LATE_REPLY_MS && this.held.size > 0) await this.renew(this.held.values()).catch(() => undefined);
    const fresh = await this.reclaimOwn(jobs);
    for (const job of fresh) this.hold(job);
    return fresh;
  }

  /**
   * Keeps where a reserve with share on stopped (the reply's lead: the anchor's index, the
   * anchor, and 1 when it looked to the list's tail); returns where the rest begins.
   */
  private keepAnchor(name: string, flat: (Buffer | number)[]): number {
    const index = Number(flat[0] ?? -1);
    const entry = flat[1];
    if (index < 0 || !Buffer.isBuffer(entry) || entry.length === 0) this.anchors.delete(name);
    else this.anchors.set(name, { index, entry });
    if (Number(flat[2]) === 1) this.lookedToTail.add(name);
    else this.lookedToTail.delete(name);
    return 3;
  }

  /** The queues whose last reserve with share on looked to the list's tail. */
  private readonly lookedToTail = new Set<string>();

  /** Says what a migration moved (from `at`: a count, then the payloads); returns where the jobs begin. */
  private tellMigrated(name: string, flat: Buffer[], at = 0): number {
    const count = Number(flat[at] ?? 0);
    if (count > 0)
      this.onMigrated!(
        name,
        flat.slice(at + 1, at + 1 + count).map((payload) => payload.toString('utf8')),
      );
    return at + 1 + count;
  }

  /**
   * The reserved jobs less those this worker is running already: a reservation that ran out while
   * Redis stalled came back and was reserved again by this very reserve. Its new reservation is
   * undone and the running one restored, so the job runs once. A job on its first attempt cannot
   * be one (a job that came back has its attempts counted), so only retried ones are looked at.
   */
  private async reclaimOwn(jobs: RedisJob[]): Promise<RedisJob[]> {
    if (this.held.size === 0) return jobs;
    const fresh: RedisJob[] = [];
    for (const job of jobs) {
      const uuid = job.firstAttempt ? undefined : uuidOf(job);
      const running = uuid === undefined ? undefined : this.held.find((held) => uuidOf(held) === uuid);
      if (running === undefined || running.queue !== job.queue) {
        fresh.push(job);
        continue;
      }
      await whileBusy(() =>
        runStep(
          this.client,
          'lqbReclaim',
          [`${this.key(job.queue)}:reserved`],
          [this.retryAfter ?? 0, job.reservedBytes, running.reservedBytes],
        ),
      );
    }
    return fresh;
  }

  private hold(job: RedisJob): void {
    job.heldAt = this.held.add(job);
  }

  /** The job is no longer this worker's: deleted, released or given back. */
  private letGo(job: RedisJob): void {
    this.held.remove(job.heldAt, job);
  }

  private async waitForNotify(key: string): Promise<boolean> {
    if (!this.blocking) {
      this.blocking = (this.client as Redis).duplicate();
      // The main client already reports a lost connection; this one only waits.
      this.blocking.on('error', () => undefined);
    }
    return (await this.blocking.blpop(`${key}:notify`, this.blockFor!)) !== null;
  }

  /** Moves due delayed jobs, then expired reservations (unless retryAfter is null), onto the list. */
  async migrate(queue?: string): Promise<void> {
    await this.reserve(queue ?? this.defaultQueue, 0, true);
  }

  /**
   * Takes a reserved job back to run again after `delay` seconds. Resolves false when its
   * reservation was gone (it ran out while Redis stalled, and a migration put the job back on
   * the list already): nothing is added then, where Laravel's release adds a second copy.
   */
  async release(job: RedisJob, delay = 0): Promise<boolean> {
    this.letGo(job);
    const key = this.key(job.queue);
    const at = this.availableAt(delay);
    const released = await whileBusy(() =>
      runStep<number>(
        this.client,
        'lqbRelease',
        [`${key}:delayed`, `${key}:reserved`],
        [job.reservedBytes, at, ...this.horizonRecord(job)],
      ),
    );
    return released === 1;
  }

  /**
   * Undoes a reservation without spending an attempt: the job as pushed goes to `:delayed`
   * for `delay` seconds. For jobs this worker has no handler for, on a queue PHP also works.
   * False, and nothing added, when the reservation was gone (as release).
   */
  async giveBack(job: RedisJob, delay = 0): Promise<boolean> {
    this.letGo(job);
    const key = this.key(job.queue);
    const at = this.availableAt(delay);
    const givenBack = await whileBusy(() =>
      runStep<number>(
        this.client,
        'lqbGiveBack',
        [`${key}:delayed`, `${key}:reserved`],
        [job.reservedBytes, job.raw, at, ...this.horizonRecord(job)],
      ),
    );
    return givenBack === 1;
  }

  /** A release's or give-back's last two arguments: the job's Horizon record (keyed as the reserve step keys it) and now; none without Horizon. */
  private horizonRecord(job: RedisJob): string[] {
    return this.horizon ? [this.horizon.keyOf(job), this.horizon.now()] : [];
  }

  /**
   * Removes a reserved job for good (it ran, or it failed). Deletes asked for in the same
   * turn of the event loop go out as one delete step (delete.lua) naming all their exact
   * strings: Laravel's ZREM for each, in fewer round trips when many jobs finish together. A
   * delete that comes after its reservation ran out (Redis stalled) also takes off the list
   * the copy a migration put back there, so the job does not run again. With Horizon's
   * records, the step writes the completions too (see QueueHorizonRecords.deleteReserved).
   */
  deleteReserved(job: RedisJob, ending?: DeleteEnding): Promise<void> {
    this.letGo(job);
    const key = this.reservedKey(job.queue);
    let batch = this.pendingDeletes.get(key);
    if (!batch) {
      batch = { members: [], deletes: this.horizon ? [] : undefined, settled: settlement() };
      this.pendingDeletes.set(key, batch);
      setImmediate(() => void this.flushDeletes(key));
    }
    if (batch.deletes) batch.deletes.push({ job, ending });
    else batch.members.push(job.reservedBytes);
    return batch.settled.promise;
  }

  /**
   * Deletes that came after their reservation ran out (see delete.lua), counted: `late`, the job
   * found back on the list and taken off it; `gone`, found nowhere (a worker took it again). For
   * a look at what a stall did; not counted where Horizon's records write the deletes.
   */
  readonly lateDeletes = { late: 0, gone: 0 };

  private countLate([late, gone]: [number, number]): void {
    this.lateDeletes.late += late;
    this.lateDeletes.gone += gone;
  }

  /**
   * The deletes waiting to go out on a queue's reserved zset, taken to go with a reserve on the
   * same queue: one round trip instead of two when a worker finishes a job and asks for the next.
   * Not with Horizon's records, whose deletes write completions by a step of their own.
   */
  private deletesWaiting(reservedKey: string): DeleteBatch | undefined {
    const batch = this.pendingDeletes.get(reservedKey);
    if (!batch || batch.deletes) return undefined;
    this.pendingDeletes.delete(reservedKey);
    return batch;
  }

  /**
   * The deletes, then the reserve, in one step (delete.lua and reserve.lua composed). Should the
   * step fail, the deletes go out alone, as they would have without the reserve, and the
   * reserve's error is the caller's.
   */
  private async deleteThenReserve(keys: string[], args: (string | number | Buffer)[], batch: DeleteBatch): Promise<Buffer[]> {
    let reply: (Buffer | number)[];
    try {
      reply = await whileBusy(() =>
        runStep<(Buffer | number)[]>(this.client, 'lqbDeleteReserve', keys, [batch.members.length, ...batch.members, ...args], true),
      );
    } catch (error) {
      await this.sendDeletes(keys[2]!, batch);
      throw error;
    }
    this.countLate([Number(reply[0]), Number(reply[1])]);
    batch.settled.resolve();
    return reply.slice(2) as Buffer[];
  }

  private async flushDeletes(key: string): Promise<void> {
    // Gone with a reserve on the same queue (deletesWaiting), or already sent.
    const batch = this.pendingDeletes.get(key);
    if (!batch) return;
    this.pendingDeletes.delete(key);
    await this.sendDeletes(key, batch);
  }

  private async sendDeletes(key: string, batch: DeleteBatch): Promise<void> {
    try {
      const { horizon, client } = this;
      if (horizon && batch.deletes) await horizon.deleteReserved(client, key, batch.deletes);
      else this.countLate(await whileBusy(() => runStep<[number, number]>(client, 'lqbDelete', lateDeleteKeys(key), batch.members)));
      batch.settled.resolve();
    } catch (error) {
      // The jobs stay reserved and come back after retry_after: said as bookkeeping, so that a
      // worker never fails a job that ran for a delete Redis did not take.
      const failure = new BookkeepingError(
        `Redis did not take the delete of a finished job (${(error as Error)?.message ?? String(error)}): it stays reserved until retry_after`,
        { cause: error },
      );
      batch.settled.reject(failure);
    }
  }

  /**
   * Extends the reservations of jobs still running to `retryAfter` seconds from now, by Redis's
   * clock, so no worker, PHP or Node, takes a job while it runs (as BullMQ renews its locks). The
   * renew step only moves a member that is still there (a job deleted, released or already taken
   * back is left alone), so it never grows memory, and it runs when a full Redis refuses writes.
   * The jobs given are the ones this worker holds from now on (see reclaimOwn).
   */
  async renew(jobs: Iterable<RedisJob>): Promise<void> {
    if (this.retryAfter === null) return;
    const byKey = new Map<string, (string | Buffer)[]>();
    const held = new Slots<RedisJob>();
    for (const job of jobs) {
      const key = `${this.key(job.queue)}:reserved`;
      let members = byKey.get(key);
      if (!members) byKey.set(key, (members = []));
      members.push(job.reservedBytes);
      job.heldAt = held.add(job);
    }
    this.held = held;
    await Promise.all([...byKey].map(([key, members]) => this.renewStepOn(key, members)));
  }

  /** The renew step on one reserved zset: allow-oom on Redis 7+, the same step without the flag before. */
  private async renewStepOn(key: string, members: (string | Buffer)[]): Promise<void> {
    try {
      await runStep(this.client, this.renewStep, [key], [this.retryAfter ?? 0, ...members]);
    } catch (error) {
      // A server before Redis 7 reads the shebang line as Lua, and fails to compile the step.
      if (this.renewStep === 'lqbRenewPlain' || !/Error compiling script|unexpected symbol|shebang/i.test((error as Error)?.message ?? ''))
        throw error;
      this.renewStep = 'lqbRenewPlain';
      await runStep(this.client, this.renewStep, [key], [this.retryAfter ?? 0, ...members]);
    }
  }

  /** Jobs a queue holds: ready, delayed and reserved. */
  async size(queue?: string): Promise<number> {
    const key = this.key(queue);
    return runStep<number>(this.client, 'lqbSize', [key, `${key}:delayed`, `${key}:reserved`], []);
  }

  /**
   * Jobs `start` to `stop` of a state (ready: the list; delayed, reserved: the zsets), each
   * larger than `whole` bytes sent as its size, head and tail only (page-ends.lua).
   */
  async pageEnds(
    queue: string | undefined,
    state: 'ready' | 'delayed' | 'reserved',
    start: number,
    stop: number,
    sizes: { whole: number; head: number; tail: number },
  ): Promise<{ bytes: number; score: number | null; payload: string; tail: string | null }[]> {
    const key = state === 'ready' ? this.key(queue) : `${this.key(queue)}:${state}`;
    const flat = await runStep<(string | number)[]>(
      this.client,
      'lqbPageEnds',
      [key],
      [state === 'ready' ? 'list' : 'zset', start, stop, sizes.whole, sizes.head, sizes.tail],
    );
    const jobs: { bytes: number; score: number | null; payload: string; tail: string | null }[] = [];
    for (let i = 0; i + 3 < flat.length; i += 4) {
      const bytes = Number(flat[i]);
      jobs.push({
        bytes,
        score: flat[i + 1] === '' ? null : Number(flat[i + 1]),
        payload: String(flat[i + 2]),
        tail: bytes > sizes.whole ? String(flat[i + 3]) : null,
      });
    }
    return jobs;
  }

  async readySize(queue?: string): Promise<number> {
    return this.client.llen(this.key(queue));
  }

  async delayedSize(queue?: string): Promise<number> {
    return this.client.zcard(`${this.key(queue)}:delayed`);
  }

  async reservedSize(queue?: string): Promise<number> {
    return this.client.zcard(`${this.key(queue)}:reserved`);
  }

  /**
   * The job with this id or uuid, if the queue holds it: ready, delayed or reserved. Laravel's
   * queue keeps no index of its jobs, so this looks through all of them, in Redis (only matches
   * come back), in short steps (`findStep`: a few hundred jobs each) so that Redis answers every
   * other client between two of them however long the queue is. It is meant for an operator's
   * lookup, not for every job. The walk is no snapshot: delayed first, then ready, then reserved,
   * the order jobs move in as they become due and are reserved, so a job moving that way while
   * the walk goes on is still met; one released or given back meanwhile may be missed.
   */
  async find(idOrUuid: string, queue?: string): Promise<QueuedJob | undefined> {
    const key = this.key(queue);
    const name = queue ?? this.defaultQueue;
    // Spelled as json_encode writes them (an id with a "/" has it escaped), whichever side pushed.
    const needles = ['uuid', 'id'].map((field) => `"${field}":${encodeString(idOrUuid, false)}`);
    const theJob = (payload: string) => isTheJob(payload, idOrUuid);
    const delayed = await this.walkZset(`${key}:delayed`, needles, theJob);
    if (delayed) return { state: 'delayed', queue: name, ...delayed };
    const ready = await this.walkList(key, needles, theJob);
    if (ready !== undefined) return { state: 'ready', queue: name, payload: ready };
    const reserved = await this.walkZset(`${key}:reserved`, needles, theJob);
    if (reserved) return { state: 'reserved', queue: name, ...reserved };
    return undefined;
  }

  /**
   * The list's first payload that is the job, walking it from the tail in steps of about
   * FIND_STEP.bytes: each step's count is sized by the bytes the one before read. When the walk
   * ends without it, a second walk looks at the jobs that reached the tail meanwhile (up to the
   * one that was the tail when the first began): an expired reservation given back to the list
   * during the walk, which the walk of the reserved zset after it would no longer see.
   */
  private async walkList(key: string, needles: string[], theJob: (payload: string) => boolean): Promise<string | undefined> {
    let tail = '';
    let count = 32;
    for (const stopAt of ['', undefined]) {
      // The second walk: to the first one's tail job, or the whole list when it began empty.
      if (stopAt === undefined) count = 32;
      for (let looked = 0; looked >= 0;) {
        const [next, bytes, first, ...payloads] = await runStep<[number, number, string, ...string[]]>(
          this.client,
          'lqbFindList',
          [key],
          [looked, ...needles, count, stopAt ?? tail],
        );
        if (stopAt === '' && looked === 0) tail = first;
        const payload = payloads.find(theJob);
        if (payload !== undefined) return payload;
        if (next > looked)
          count = Math.max(1, Math.min(FIND_STEP.jobs, Math.floor((FIND_STEP.bytes * (next - looked)) / Math.max(1, bytes))));
        looked = next;
      }
    }
    return undefined;
  }

  /** The zset's first member that is the job, with its score, walking it from the lowest score in steps. */
  private async walkZset(
    key: string,
    needles: string[],
    theJob: (payload: string) => boolean,
  ): Promise<{ payload: string; until: number } | undefined> {
    let after: [string, string] = ['', ''];
    do {
      const [score, member, ...found] = await runStep<string[]>(
        this.client,
        'lqbFindZset',
        [key],
        [...after, ...needles, FIND_STEP.jobs, FIND_STEP.bytes],
      );
      for (let i = 0; i + 1 < found.length; i += 2) {
        if (theJob(found[i + 1]!)) return { payload: found[i + 1]!, until: Number(found[i]) };
      }
      after = [score!, member!];
    } while (after[0] !== '');
    return undefined;
  }

  /**
   * The queue's jobs per class and state (see Queue.countByClass), read in pages of FIND_STEP.jobs
   * (one LRANGE or ZRANGE each, so Redis answers every other client between two): the ready list
   * from its head, then the delayed and reserved zsets by rank.
   */
  async countByClass(queue?: string, takes?: ReadonlySet<string>): Promise<ClassCount[]> {
    const key = this.key(queue);
    const tally = new ClassTally(takes);
    const page = FIND_STEP.jobs;
    for (let at = 0; ; at += page) {
      const payloads = await this.client.lrange(key, at, at + page - 1);
      for (const payload of payloads) tally.add(payload, 'ready');
      if (payloads.length < page) break;
    }
    for (const [state, zset] of [
      ['delayed', `${key}:delayed`],
      ['reserved', `${key}:reserved`],
    ] as const) {
      for (let at = 0; ; at += page) {
        const payloads = await this.client.zrange(zset, at, at + page - 1);
        for (const payload of payloads) tally.add(payload, state);
        if (payloads.length < page) break;
      }
    }
    return tally.result();
  }

  /** Deletes a queue and everything in it; returns how many jobs went. */
  async clear(queue?: string): Promise<number> {
    const key = this.key(queue);
    return runStep<number>(this.client, 'lqbClear', [key, `${key}:delayed`, `${key}:reserved`, `${key}:notify`], []);
  }

  /**
   * UNIX seconds `delay` from now (a Date is taken as it is), as Laravel's availableAt: a
   * negative delay (a backoff of "-3") is in the past, as Laravel scores it.
   */
  availableAt(delay: number | Date): number {
    return delay instanceof Date ? Math.floor(delay.getTime() / 1000) : this.now() + Math.floor(delay);
  }

  /**
   * Ends a wait on `:notify` now (a worker told to stop should not sit out `blockFor`): the
   * blocking connection is dropped, and made anew on next need. Only a token is lost with it,
   * and tokens are hints: the job itself stays on the list.
   */
  interruptWait(): void {
    this.blocking?.disconnect();
    this.blocking = undefined;
  }

  /** Closes the blocking connection, if one was made; the main client is the caller's. */
  async close(): Promise<void> {
    if (this.blocking) {
      this.blocking.disconnect();
      this.blocking = undefined;
    }
  }

  /** The client the worker watches for health(): the one every step runs on. */
  get clients(): readonly WatchedClient[] {
    return [this.client];
  }

  /** The client's settings and the renew step, for the watchdog's thread (see threadRenewal.ts). */
  threadRenewal(): ThreadRenewal | undefined {
    return threadRenewalFor(this.client, this.retryAfter);
  }
}

/**
 * A job's uuid, cheaply when it can be: a job as pushed opens with it; one that came back (cjson
 * wrote it again, in its own key order) is parsed, as the worker parses it anyway.
 */
function uuidOf(job: RedisJob): string | undefined {
  return job.leadingUuid ?? (job.firstAttempt ? undefined : job.uuid);
}

/** The envelope's own id or uuid is this one (not a value deeper in the job's data). */
function isTheJob(payload: string, idOrUuid: string): boolean {
  try {
    const envelope = JSON.parse(payload) as { id?: unknown; uuid?: unknown } | null;
    return envelope?.uuid === idOrUuid || (envelope?.id !== undefined && envelope.id !== null && String(envelope.id) === idOrUuid);
  } catch {
    return false;
  }
}
