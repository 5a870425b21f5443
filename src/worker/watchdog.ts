/**
 * The watchdog: the job timeout that holds whatever the handler does.
 *
 * The worker's own timeout is a timer on the event loop, so a handler that blocks the loop
 * (CPU-bound code, a `for (;;)`) outruns it: no timer fires, no reservation is renewed, and
 * other workers take the jobs in hand. Laravel's worker has no such hole: its timeout is
 * SIGALRM, which interrupts whatever PHP is doing, runs the timeout handler and then kills the
 * process (Worker::kill: SIGKILL to itself when posix is loaded, else exit 1).
 *
 * Here a thread of its own watches the jobs' deadlines and a heartbeat the event loop writes
 * into shared memory. When a job is past its deadline and the loop has not turned since, the
 * loop is blocked by it; the thread then writes one line to standard error and either ends the
 * process as Laravel's alarm does (`exitOnBlock`, what `lqb work` turns on: SIGKILL, so the
 * job's reservation comes back once, after retry_after) or reports the job to the worker, which
 * emits `blocked` once its loop turns again (an embedded worker must not end its host unasked).
 *
 * Until then, while the loop is blocked, the thread renews the reservations of the jobs in hand
 * that are short of their timeout, over a connection of its own, as the worker's own timer would:
 * a job still at work is not taken by another worker (BullMQ's promise, kept off the loop).
 */
import { Worker as Thread } from 'node:worker_threads';
import { threadSource } from './sandbox/thread.js';
import type { Reservation, ThreadRenewal } from '../queue/contract.js';
import { PENDING_BYTES_AT, pendingOutput, type PendingOutput } from '../internal/pending-output.js';

/** The job a watched slot holds, as the report names it. */
export interface WatchedJob {
  job: string;
  id: string;
  uuid: string | undefined;
  queue: string;
  attempts: number;
  /** Its timeout, in seconds. */
  timeout: number;
}

/** A job that blocked the event loop past its timeout. */
export interface BlockedJob extends WatchedJob {
  /** How long the loop had not turned when the thread saw it, in ms. */
  blockedMs: number;
  /**
   * The other jobs in hand then: any of them may be what holds the loop (the thread cannot tell
   * which handler runs), so with others the job is named as past its timeout, not as the blocker.
   */
  others: number;
}

/**
 * Where the thread renews the reservations of the jobs in hand while the loop is blocked: its
 * own connection, made with the worker's connection settings, as the queue gives them
 * (Queue.threadRenewal; only Redis does today, and not on a Cluster).
 */
export type WatchdogRenewal = ThreadRenewal;

/** A watched job's reservation, as the job gives it (ReservedJob.reservation): the key and the member it is held under. */
export type { Reservation } from '../queue/contract.js';

export interface WatchdogOptions {
  /** End the process (SIGKILL, as Laravel's alarm) rather than report. */
  exitOnBlock: boolean;
  /** Told of each blocked job, on the main thread, once its loop turns again. */
  onBlocked: (job: BlockedJob) => void;
  /** Told when the thread itself fails: the timeouts of blocking handlers are then not held. */
  onError: (error: Error) => void;
  /** Renew the jobs' reservations from the thread while the loop is blocked, short of their timeout. */
  renewal?: WatchdogRenewal;
}

/** How often the loop writes its heartbeat, and the thread looks, in ms. */
const BEAT_MS = 100;
/** The deadline of a job with no timeout: never reached, so never reported, and always renewed. */
const NO_DEADLINE = BigInt(Number.MAX_SAFE_INTEGER);
/** How long past a deadline the loop has to show it is not blocked, in ms. */
const GRACE_MS = 200;
/** Bytes of a slot's label: the job's fields, tab-separated (a longer one loses its name's tail). */
const LABEL_BYTES = 512;
/**
 * Bytes of a slot's reservation (key and member). A job whose reservation is larger is sent to
 * the thread in a message of its own (a shared copy of its payload), and marked LARGE.
 */
const RESERVATION_BYTES = 64 * 1024;
/** memberLengths[i] of a slot whose reservation came by message (see RESERVATION_BYTES). */
const LARGE = -2;

/**
 * The shared memory: `beat` holds the loop's last turn (Date.now()); slot i holds its job's
 * deadline in `deadlines[i]` (Date.now()'s whole ms, 0 when free), its label's length in `lengths[i]`
 * and the label at `labels[i * LABEL_BYTES]`; with renewals, its reservation's key and member
 * lengths in `keyLengths[i]` and `memberLengths[i]` (-1: not renewed; LARGE: sent by message) and their bytes at
 * `reservations[i * RESERVATION_BYTES]`. Watching a job writes memory and wakes nothing: a
 * message per job would cost the thread a turn per job.
 */
interface Shared {
  beat: BigInt64Array;
  deadlines: BigInt64Array;
  lengths: Int32Array;
  keyLengths: Int32Array;
  memberLengths: Int32Array;
  labels: Uint8Array;
  reservations: Uint8Array;
}

/** The views of the shared memory; `reservationBytes` 0 when there are no renewals. */
function sharedViews(buffer: SharedArrayBuffer, slots: number, labelBytes: number, reservationBytes: number): Shared {
  const ints = 8 + slots * 8;
  const labels = ints + slots * 12;
  return {
    beat: new BigInt64Array(buffer, 0, 1),
    deadlines: new BigInt64Array(buffer, 8, slots),
    lengths: new Int32Array(buffer, ints, slots),
    keyLengths: new Int32Array(buffer, ints + slots * 4, slots),
    memberLengths: new Int32Array(buffer, ints + slots * 8, slots),
    labels: new Uint8Array(buffer, labels, slots * labelBytes),
    reservations: new Uint8Array(buffer, labels + slots * labelBytes, slots * reservationBytes),
  };
}

function sharedBytes(slots: number, labelBytes: number, reservationBytes: number): number {
  return 8 + slots * (20 + labelBytes + reservationBytes);
}

/**
 * The thread's code, run with `eval` so that it needs no file of its own beside the compiled
 * one (the tests run the TypeScript sources). It reads only Node's own modules, and gets
 * `sharedViews` as a parameter's source.
 */
function watchdogThread(need: NodeJS.Require): void {
  const threads = need('node:worker_threads') as typeof import('node:worker_threads');
  const parentPort = threads.parentPort;
  const { writeSync } = need('node:fs') as typeof import('node:fs');
  const {
    buffer,
    slots,
    exitOnBlock,
    beatMs,
    graceMs,
    labelBytes,
    reservationBytes,
    views,
    renewal,
    large: LARGE,
    output,
    outputAt,
  } = threads.workerData as {
    buffer: SharedArrayBuffer;
    slots: number;
    exitOnBlock: boolean;
    beatMs: number;
    graceMs: number;
    labelBytes: number;
    reservationBytes: number;
    views: string;
    renewal: WatchdogRenewal | undefined;
    large: number;
    output: PendingOutput | undefined;
    outputAt: number;
  };
  // The reservations too large for a slot, by slot, each with the deadline of the job it is for.
  const large = new Map<number, { deadline: bigint; key: string; member: SharedArrayBuffer }>();
  parentPort!.on('message', (message: { slot: number; deadline: bigint; key: string; member: SharedArrayBuffer }) =>
    large.set(message.slot, message),
  );
  // eslint-disable-next-line @typescript-eslint/no-implied-eval, @typescript-eslint/no-unsafe-call -- sharedViews' source, rebuilt in the thread that cannot import it
  const shared = (new Function(`return ${views}`)() as typeof sharedViews)(buffer, slots, labelBytes, reservationBytes);
  const decoder = new TextDecoder();
  // The deadline each slot was last reported for: one report per job.
  const reported = new Float64Array(slots);
  const renewEveryMs = renewal ? Math.max(100, (renewal.retryAfter * 1000) / 3) : Infinity;
  let renewedAt = 0;
  let client: { eval(...args: unknown[]): Promise<unknown>; on(event: string, listener: () => void): void } | undefined;
  let renewLua = renewal?.renewLua.flagged;
  /** One renew step; a server before Redis 7 fails to compile the flagged one, and gets the plain one from then on. */
  const renewOne = (key: string, member: Buffer): Promise<unknown> =>
    client!.eval(renewLua, 1, key, renewal!.retryAfter, member).catch((error: Error): Promise<unknown> | undefined => {
      if (renewLua === renewal!.renewLua.plain || !/Error compiling script|unexpected symbol|shebang/i.test(error?.message ?? '')) return;
      renewLua = renewal!.renewLua.plain;
      return renewOne(key, member);
    });
  /**
   * While the loop has not turned for a renewal period, the thread renews what the worker would:
   * the reservations of the jobs in hand short of their timeout, with the worker's own renew step
   * (Redis's clock; it moves only a member still there, so a job finished meanwhile is left
   * alone). Errors are dropped: the worker's
   * own renewals say what is wrong with Redis once its loop turns.
   */
  const renew = (now: number, lastBeat: number) => {
    if (!renewal || now - lastBeat < renewEveryMs || now - renewedAt < renewEveryMs) return;
    renewedAt = now;
    if (!client) {
      // ioredis's CommonJS export is the class itself; some builds put it under .default too.
      const exported = need(renewal.ioredis) as { default?: unknown };
      const Client = (typeof exported === 'function' ? exported : exported.default) as new (options: object) => NonNullable<typeof client>;
      client = new Client({ ...renewal.connection, lazyConnect: false, enableOfflineQueue: true, maxRetriesPerRequest: 1 });
      client.on('error', () => undefined);
    }
    for (let slot = 0; slot < slots; slot++) {
      const deadline = Number(Atomics.load(shared.deadlines, slot));
      const memberLength = Atomics.load(shared.memberLengths, slot);
      if (deadline === 0 || deadline <= now) continue;
      if (memberLength === LARGE) {
        const sent = large.get(slot);
        if (sent && Number(sent.deadline) === deadline) void renewOne(sent.key, Buffer.from(sent.member));
        continue;
      }
      if (memberLength < 0) continue;
      const at = slot * reservationBytes;
      const keyLength = shared.keyLengths[slot]!;
      const key = decoder.decode(shared.reservations.slice(at, at + keyLength));
      const member = Buffer.from(shared.reservations.slice(at + keyLength, at + keyLength + memberLength));
      void renewOne(key, member);
    }
  };
  setInterval(() => {
    const now = Date.now();
    const lastBeat = Number(Atomics.load(shared.beat, 0));
    // A large reservation goes with its job: one whose slot holds another job (or none) is let go.
    for (const [slot, sent] of large) if (Atomics.load(shared.deadlines, slot) !== sent.deadline) large.delete(slot);
    renew(now, lastBeat);
    for (let slot = 0; slot < slots; slot++) {
      const deadline = Number(Atomics.load(shared.deadlines, slot));
      // Past its deadline, and the loop has not turned since: the worker's own timer cannot fire.
      if (deadline === 0 || reported[slot] === deadline || now < deadline + graceMs || lastBeat >= deadline) continue;
      reported[slot] = deadline;
      const label = decoder.decode(shared.labels.slice(slot * labelBytes, slot * labelBytes + shared.lengths[slot]!));
      const [timeout, attempts, queue, id, uuid, ...name] = label.split('\t');
      let others = 0;
      for (let other = 0; other < slots; other++) if (other !== slot && Atomics.load(shared.deadlines, other) !== 0n) others++;
      const job = {
        job: name.join('\t'),
        id: id!,
        uuid: uuid === '' ? undefined : uuid,
        queue: queue!,
        attempts: Number(attempts),
        timeout: Number(timeout),
        blockedMs: now - lastBeat,
        others,
      };
      const blocked = `${(job.blockedMs / 1000).toFixed(1)} s`;
      const what =
        others === 0
          ? `job ${job.job} [${job.id}] has blocked the event loop for ${blocked}, past its timeout of ${job.timeout} s`
          : `job ${job.job} [${job.id}] is past its timeout of ${job.timeout} s while the event loop has been blocked for ${blocked}, by it or by one of the ${others} other job${others === 1 ? '' : 's'} in hand`;
      if (exitOnBlock) {
        // The lines the process gathered but could not write (its loop is held): written first,
        // so the log ends as a flushed one would, with the blocked job's start.
        if (output) {
          const gathered = Atomics.load(new Int32Array(output.buffer, 0, 1), 0);
          if (gathered > 0) writeSync(output.fd, new Uint8Array(output.buffer, outputAt, gathered));
        }
        writeSync(
          2,
          `lqb watchdog: ${what}: ending the process as Laravel's timeout does (SIGKILL); the job comes back after retry_after\n`,
        );
        process.kill(process.pid, 'SIGKILL');
      }
      writeSync(2, `lqb watchdog: ${what} (exitOnBlock is off: the process goes on)\n`);
      parentPort!.postMessage({ job });
    }
  }, beatMs);
}

/** The watchdog thread and the heartbeat that tells it the loop still turns. */
export class Watchdog {
  private thread: Thread | undefined;
  private readonly buffer: SharedArrayBuffer;
  private readonly shared: Shared;
  private readonly free: number[];
  private readonly encoder = new TextEncoder();
  private ticker: NodeJS.Timeout | undefined;

  /** `slots`: the jobs watched at once at most (the worker's concurrency). */
  private readonly reservationBytes: number;

  constructor(
    private readonly options: WatchdogOptions,
    private readonly slots: number,
  ) {
    this.reservationBytes = options.renewal ? RESERVATION_BYTES : 0;
    this.buffer = new SharedArrayBuffer(sharedBytes(slots, LABEL_BYTES, this.reservationBytes));
    this.shared = sharedViews(this.buffer, slots, LABEL_BYTES, this.reservationBytes);
    this.free = Array.from({ length: slots }, (_, i) => slots - 1 - i);
  }

  /**
   * Watches a job until unwatch(): `deadline` in performance.now()'s milliseconds (Infinity: a
   * job with no timeout, watched only for its reservation's renewals). The thread
   * starts with the first job watched, so a worker that never runs one costs no thread.
   * Undefined when every slot is taken (the job is then not watched).
   */
  watch(deadline: number, info: WatchedJob, reservation?: Reservation): number | undefined {
    // With no deadline and no renewals there is nothing for a thread to do.
    if (!Number.isFinite(deadline) && this.reservationBytes === 0) return undefined;
    this.start();
    const slot = this.free.pop();
    if (slot === undefined) return undefined;
    const at = Number.isFinite(deadline) ? BigInt(Math.ceil(Date.now() + (deadline - performance.now()))) : NO_DEADLINE;
    const large = this.reservationBytes > 0 ? this.shareReservation(slot, reservation) : undefined;
    const label = `${info.timeout}\t${info.attempts}\t${info.queue}\t${info.id}\t${info.uuid ?? ''}\t${info.job}`;
    const { written } = this.encoder.encodeInto(label, this.shared.labels.subarray(slot * LABEL_BYTES, (slot + 1) * LABEL_BYTES));
    // The deadline last: a thread that sees it sees the label.
    Atomics.store(this.shared.lengths, slot, written);
    Atomics.store(this.shared.deadlines, slot, at);
    // After the deadline: the thread keeps a large reservation only while its slot holds that deadline.
    if (large) this.thread!.postMessage({ slot, deadline: at, ...large });
    return slot;
  }

  /** The reservation's key and member, for the thread to renew; one that does not fit goes by message. */
  private shareReservation(slot: number, reservation: Reservation | undefined): { key: string; member: SharedArrayBuffer } | undefined {
    const start = slot * this.reservationBytes;
    const end = start + this.reservationBytes;
    const bytes = this.shared.reservations;
    // Written in place (encodeInto, set): no copy of the payload is made on the way.
    const key = reservation ? this.encoder.encodeInto(reservation.key, bytes.subarray(start, end)) : undefined;
    const member = reservation?.member;
    let memberLength = -1;
    if (key && member !== undefined && key.read === reservation!.key.length) {
      const at = start + key.written;
      if (typeof member !== 'string') {
        if (member.length <= end - at) {
          bytes.set(member, at);
          memberLength = member.length;
        }
      } else {
        const { read, written } = this.encoder.encodeInto(member, bytes.subarray(at, end));
        if (read === member.length) memberLength = written;
      }
    }
    let large: { key: string; member: SharedArrayBuffer } | undefined;
    if (reservation && member !== undefined && memberLength < 0) {
      // Too large for the slot: a shared copy, sent once; the thread takes it for this job only.
      const bytes = typeof member === 'string' ? Buffer.from(member) : member;
      large = { key: reservation.key, member: new SharedArrayBuffer(bytes.length) };
      new Uint8Array(large.member).set(bytes);
      memberLength = LARGE;
    }
    this.shared.keyLengths[slot] = key?.written ?? 0;
    Atomics.store(this.shared.memberLengths, slot, memberLength);
    return large;
  }

  unwatch(slot: number): void {
    Atomics.store(this.shared.deadlines, slot, 0n);
    this.free.push(slot);
  }

  /** Ends the thread and the heartbeat (the end of a run). */
  async close(): Promise<void> {
    clearInterval(this.ticker);
    this.ticker = undefined;
    const thread = this.thread;
    this.thread = undefined;
    await thread?.terminate();
  }

  private start(): void {
    if (this.thread) return;
    this.tick();
    const thread = new Thread(threadSource(watchdogThread), {
      eval: true,
      workerData: {
        buffer: this.buffer,
        slots: this.slots,
        exitOnBlock: this.options.exitOnBlock,
        beatMs: BEAT_MS,
        graceMs: GRACE_MS,
        labelBytes: LABEL_BYTES,
        reservationBytes: this.reservationBytes,
        views: sharedViews.toString(),
        renewal: this.options.renewal,
        large: LARGE,
        output: pendingOutput(),
        outputAt: PENDING_BYTES_AT,
      },
      // The thread needs little: a small heap keeps its cost to a few MB (ioredis's client included).
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 },
      stdout: false,
      stderr: false,
    });
    thread.on('message', (message: { job?: BlockedJob }) => {
      if (message.job) this.options.onBlocked(message.job);
    });
    // A thread that fails is one watchdog less, never the worker's end: said, not thrown.
    thread.on('error', (error) => this.options.onError(error));
    // Neither holds the process open: an embedding service exits when it is done.
    thread.unref();
    this.ticker = setInterval(() => this.tick(), BEAT_MS);
    this.ticker.unref();
    this.thread = thread;
  }

  private tick(): void {
    Atomics.store(this.shared.beat, 0, BigInt(Date.now()));
  }
}
