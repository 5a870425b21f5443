/**
 * What Laravel's CallQueuedHandler does around running a command, done for jobs Node runs,
 * at the same moments: a unique job's lock released (before the handler for
 * ShouldBeUniqueUntilProcessing; after a run that did not release the job; on failure), the
 * next link of a chain pushed and a batched job's success recorded when a job succeeds, its
 * failure recorded in its batch when it fails. Worker.ts keeps the loop and Laravel's attempts,
 * backoff and timeout rules; this file keeps the application's bookkeeping, so PHP and Node
 * workers leave the same state behind.
 */
import { PhpArray, PhpObject, deref, type PhpValue } from '../php/index.js';
import {
  CALL_QUEUED_CLOSURE,
  buildPayload,
  nextInChain,
  type DecodedPayload,
  type LaravelProfile,
  type LinkEnvelope,
  type NextLinkOptions,
} from '../laravel/index.js';
// Not on the package's surface: the stand-in is this worker's own business.
import { batchedNoopCommand, type ClosureSigner } from '../laravel/closure.js';
import type { Queue } from '../queue/contract.js';
import { SHOULD_BE_ENCRYPTED, declaredForEnvelope, findShape, translatedDisplayName } from '../shapes/command.js';
import { allJobsHaveRanExactlyOnce, type BatchCounts, type BatchRow, type DatabaseBatchRepository } from './BatchRepository.js';
import { UnnamedLockError, uniquenessNow, type Uniqueness } from './locks/index.js';
import type { WorkerDependencies, WorkerEvent } from './types.js';
import type { WorkerOptions } from './WorkerOptions.js';
import { describeError } from './errors.js';
import { jobName, type JobMethods } from './handlers.js';

/** How many batch ids the warning for a batch not found remembers. */
const SAID_NO_BATCH_LIMIT = 10_000;

export class CallQueuedHandler {
  /** Classes whose PHP-only methods the log has named already. */
  private readonly saidNotRun = new Set<string>();
  /** Batches whose callbacks the log has said did not run. */
  private readonly saidBatch = new Set<string>();
  /** Batch ids the log has said are not in the batches table (the latest few thousand). */
  private readonly saidNoBatch = new Set<string>();
  /** What each job in hand is, unique-wise: worked out once per job. */
  private readonly uniqueness = new WeakMap<DecodedPayload, Uniqueness | undefined | Promise<Uniqueness | undefined>>();

  constructor(
    /** Where a chain's next link is pushed: the connection the job came from. */
    private readonly queue: Pick<Queue, 'pushRaw' | 'laterRaw' | 'defaultQueue' | 'driver'>,
    private readonly options: WorkerOptions,
    private readonly deps: WorkerDependencies,
    private readonly log: (event: WorkerEvent) => void,
    /** The JavaScript a class's handler gives for its PHP methods (uniqueId), if any. */
    private readonly methodsFor: (className: string) => JobMethods | undefined = () => undefined,
  ) {}

  /**
   * Before the handler runs (CallQueuedHandler::call): a ShouldBeUniqueUntilProcessing job's
   * lock goes now, so the job may be dispatched again while it runs. Undefined when there was
   * nothing to wait for (most jobs: the check is made at once), else the promise of its end.
   */
  beforeRunning(payload: DecodedPayload, command: PhpValue | undefined): Promise<void> | undefined {
    const unique = this.uniquenessFor(payload, command);
    if (unique instanceof Promise) return unique.then((found) => (found?.untilProcessing ? this.releaseLock(found) : undefined));
    return unique?.untilProcessing ? this.releaseLock(unique) : undefined;
  }

  /**
   * After the handler returned: unless the job was released (it runs again, and keeps its lock)
   * or is ShouldBeUniqueUntilProcessing (released before), its lock goes, as in
   * CallQueuedHandler::call: also when the job deleted or failed itself. Undefined when there
   * was nothing to wait for.
   */
  afterRunning(payload: DecodedPayload, command: PhpValue | undefined, released: boolean): Promise<void> | undefined {
    if (released) return undefined;
    const unique = this.uniquenessFor(payload, command);
    if (unique instanceof Promise) return unique.then((found) => (found && !found.untilProcessing ? this.releaseLock(found) : undefined));
    return unique && !unique.untilProcessing ? this.releaseLock(unique) : undefined;
  }

  /**
   * A job failed (CallQueuedHandler::failed): its lock goes unless it is
   * ShouldBeUniqueUntilProcessing (whose lock went before it ran, and may now be another
   * dispatch's). Never throws: the failure is recorded already; what could not be done is logged.
   */
  async failed(payload: DecodedPayload, command: PhpValue | undefined): Promise<void> {
    try {
      const unique = await this.uniquenessFor(payload, command);
      if (unique && !unique.untilProcessing) await this.releaseLock(unique);
    } catch (error) {
      this.log({
        event: 'error',
        job: jobName(payload),
        uuid: uuidOf(payload),
        error: `could not release the unique lock of a failed job: ${describeError(error)}`,
      });
    }
    try {
      await this.recordFailedBatchJob(payload, command);
    } catch (error) {
      this.log({
        event: 'error',
        job: jobName(payload),
        uuid: uuidOf(payload),
        error: `could not record the failure in its batch: ${describeError(error)}`,
      });
    }
    const catchCallbacks = chainCatchCallbacks(command);
    if (catchCallbacks > 0) {
      this.log({
        event: 'warning',
        job: jobName(payload),
        uuid: uuidOf(payload),
        reason: `the chain's catch callbacks (${catchCallbacks}) are PHP closures Node cannot run: they did not run (with --share, a PHP worker beside this one fails such a job and runs them)`,
      });
    }
  }

  /**
   * A batched job succeeded (Batch::recordSuccessfulJob): pending − 1, its uuid out of
   * failed_job_ids, finished at pending 0. The then and finally callbacks it would run are
   * PHP: with --share its finish is handed to PHP (handOverFinish), else the log says once per
   * batch that they did not run.
   */
  recordSuccessfulBatchJob(payload: DecodedPayload, command: PhpValue | undefined, queue?: string): Promise<void> | undefined {
    // Most jobs are in no batch: that is seen at once, with nothing to wait for.
    return this.batchIdOf(payload, command) === undefined ? undefined : this.recordSuccess(payload, command, queue);
  }

  private async recordSuccess(payload: DecodedPayload, command: PhpValue | undefined, queue: string | undefined): Promise<void> {
    const found = await this.batchOf(payload, command);
    if (!found) return;
    const { batches, batch, uuid } = found;
    const signer = this.finishCanGoToPhp(payload, batch);
    if (signer) {
      const finishes = (counts: BatchCounts) =>
        (counts.pendingJobs === 0 && batch.options.then > 0) || (allJobsHaveRanExactlyOnce(counts) && batch.options.finally > 0);
      const outcome = await batches.decrementPendingJobsUnlessFinishing(batch.id, uuid, finishes);
      if (!outcome) return;
      if (outcome.handedOver) return this.handOverFinish(payload, batch, signer, queue);
      if (batch.options.progress > 0) this.sayNotRun(payload, batch, ['progress']);
      return;
    }
    const counts = await batches.decrementPendingJobs(batch.id, uuid);
    if (!counts) return;
    if (counts.pendingJobs === 0) await batches.markAsFinished(batch.id);
    const notRun: string[] = [];
    if (batch.options.progress > 0) notRun.push('progress');
    if (counts.pendingJobs === 0 && batch.options.then > 0) notRun.push('then');
    if (allJobsHaveRanExactlyOnce(counts) && batch.options.finally > 0) notRun.push('finally');
    this.sayNotRun(payload, batch, notRun);
  }

  /**
   * Whether this job's success, if it finishes the batch, goes to PHP to record: with --share,
   * when the batch has then or finally callbacks (PHP closures) and a stand-in PHP can run can
   * be written: a closure signed with the APP_KEY, in laravel/serializable-closure's form (not
   * the opis/closure of 5.8 to 8.61). The signer, or undefined. The check made before the
   * handler (phpShouldRun) leaves most such finishes to PHP already; this is for the one that
   * became the last while it ran, because a PHP worker finished another job of the batch meanwhile.
   */
  private finishCanGoToPhp(payload: DecodedPayload, batch: BatchRow): ClosureSigner | undefined {
    if (!this.options.share || (batch.options.then === 0 && batch.options.finally === 0)) return undefined;
    if (!closuresAreLaravels(payload.profile, this.deps.laravel)) return undefined;
    const signer = this.deps.encrypter;
    // A closure signed with another key than the app's fails in PHP (InvalidSignatureException)
    // and the batch would never finish: the batch's own callbacks, signed by the app, tell.
    const signed = batch.options.signedCallback;
    if (signer && signed && signer.signClosure(signed.serializable) !== signed.hash) {
      this.sayOnce(
        `${batch.id}:key`,
        payload,
        `batch ${batch.id}: its callbacks are signed with another APP_KEY than the one this worker was given, so a job for PHP to finish it with cannot be signed: give the app's APP_KEY`,
      );
      return undefined;
    }
    return signer;
  }

  /** A warning said once per `key` (a batch and what is said of it). */
  private sayOnce(key: string, payload: DecodedPayload, reason: string): void {
    if (this.saidBatch.has(key)) return;
    this.saidBatch.add(key);
    this.log({ event: 'warning', job: jobName(payload), uuid: uuidOf(payload), reason });
  }

  /**
   * The batch's finish, for PHP: a CallQueuedClosure of a no-op closure in the batch, pushed
   * where the job came from. The first PHP worker to run it records its success, which finishes
   * the batch and runs the then and finally callbacks there (and its progress callbacks once).
   */
  private async handOverFinish(payload: DecodedPayload, batch: BatchRow, signer: ClosureSigner, queue: string | undefined): Promise<void> {
    const built = buildPayload(batchedNoopCommand(batch.id, signer), {
      profile: payload.profile,
      displayName: `Closure (laravel-queue-bridge: finishes batch ${batch.id})`,
      batchId: batch.id,
      driver: this.queue.driver,
    });
    await this.queue.pushRaw(built.raw, queue ?? this.queue.defaultQueue);
    this.log({
      event: 'warning',
      job: jobName(payload),
      uuid: uuidOf(payload),
      reason: `batch ${batch.id}${batch.name ? ` (${batch.name})` : ''}: a PHP worker finished another of its jobs while this one ran, so this one would finish it, and its callbacks are PHP closures: its success is recorded by a no-op job of the batch pushed for a PHP worker (${CALL_QUEUED_CLOSURE}), which runs them`,
    });
  }

  /**
   * A batched job failed (Batch::recordFailedJob): failed + 1, its uuid in failed_job_ids; the
   * first failure cancels the batch unless it allows failures.
   */
  private async recordFailedBatchJob(payload: DecodedPayload, command: PhpValue | undefined): Promise<void> {
    const found = await this.batchOf(payload, command);
    if (!found) return;
    const { batches, batch, uuid } = found;
    const counts = await batches.incrementFailedJobs(batch.id, uuid);
    if (!counts) return;
    if (counts.failedJobs === 1 && !batch.options.allowFailures) await batches.cancel(batch.id);
    const notRun: string[] = [];
    if (batch.options.failure > 0) notRun.push('failure');
    if (counts.failedJobs === 1 && batch.options.catch > 0) notRun.push('catch');
    if (allJobsHaveRanExactlyOnce(counts) && batch.options.finally > 0) notRun.push('finally');
    this.sayNotRun(payload, batch, notRun);
  }

  /**
   * With --share, whether a PHP worker should run this job rather than Node: it would finish
   * its batch, and the batch has then or finally callbacks, which only PHP can run. Read before
   * the handler runs: a job that becomes the last while it runs (another worker finished one of
   * the batch meanwhile) hands its finish to PHP when its success is recorded (recordSuccess).
   */
  phpShouldRun(payload: DecodedPayload, command: PhpValue | undefined): Promise<string | undefined> | undefined {
    // A job in no batch (most) is Node's at once: nothing to wait for.
    if (!this.options.share || this.batchIdOf(payload, command) === undefined) return undefined;
    return this.phpShouldFinishBatch(payload, command);
  }

  private async phpShouldFinishBatch(payload: DecodedPayload, command: PhpValue | undefined): Promise<string | undefined> {
    const found = await this.batchOf(payload, command);
    if (!found) return undefined;
    const { batch } = found;
    if (batch.pendingJobs === 1 && batch.options.then > 0)
      return `it would finish batch ${batch.id}, whose then callbacks only PHP can run`;
    if (batch.pendingJobs - batch.failedJobs === 1 && batch.options.finally > 0)
      return `it would finish batch ${batch.id}, whose finally callbacks only PHP can run`;
    return undefined;
  }

  /**
   * With --share, whether a job out of attempts should be failed by a PHP worker rather than
   * here: its failure would run PHP closures (its chain's catch callbacks, or its batch's catch
   * or finally callbacks). Released with its attempt counted, it is failed by the first PHP
   * worker that reserves it (markJobAsFailedIfAlreadyExceedsMaxAttempts), which runs them.
   */
  async phpShouldFail(payload: DecodedPayload, command: PhpValue | undefined): Promise<string | undefined> {
    if (!this.options.share) return undefined;
    if (chainCatchCallbacks(command) > 0) return 'its chain has catch callbacks, which only PHP can run';
    const found = await this.batchOf(payload, command);
    if (!found) return undefined;
    const { batch } = found;
    if (batch.failedJobs === 0 && batch.options.catch > 0)
      return `it is the first failure of batch ${batch.id}, whose catch callbacks only PHP can run`;
    if (batch.pendingJobs - batch.failedJobs === 1 && batch.options.finally > 0)
      return `it would finish batch ${batch.id}, whose finally callbacks only PHP can run`;
    return undefined;
  }

  /** The job's batch (Batchable's batchId, the row in job_batches), when there is one and batches are kept. */
  private async batchOf(
    payload: DecodedPayload,
    command: PhpValue | undefined,
  ): Promise<{ batches: DatabaseBatchRepository; batch: BatchRow; uuid: string } | undefined> {
    const batches = this.deps.batches;
    const uuid = uuidOf(payload);
    const batchId = this.batchIdOf(payload, command);
    if (!batches || !uuid || batchId === undefined) return undefined;
    const batch = await batches.find(batchId);
    if (!batch) {
      await this.sayBatchNotFound(payload, batchId, batches);
      return undefined;
    }
    return { batches, batch, uuid };
  }

  /** The batch id a Batchable job carries, when batches are kept and it has a uuid; else undefined. */
  private batchIdOf(payload: DecodedPayload, command: PhpValue | undefined): string | undefined {
    if (!this.deps.batches || uuidOf(payload) === undefined) return undefined;
    const object = command === undefined ? undefined : deref(command);
    if (!(object instanceof PhpObject)) return undefined;
    const batchId = deref(object.get('batchId') ?? null);
    return typeof batchId === 'string' && batchId !== '' ? batchId : undefined;
  }

  /**
   * A Batchable job whose batch is not where the worker looks: it runs, and the batch does not
   * count it. Laravel says nothing there either, but for a worker beside the app the likeliest
   * cause is --batch-db naming another database than the app's: said once per batch.
   */
  private async sayBatchNotFound(payload: DecodedPayload, batchId: string, batches: DatabaseBatchRepository): Promise<void> {
    if (this.saidNoBatch.has(batchId)) return;
    this.saidNoBatch.add(batchId);
    // Bounded: the oldest id goes (a Set iterates in insertion order).
    if (this.saidNoBatch.size > SAID_NO_BATCH_LIMIT) this.saidNoBatch.delete(this.saidNoBatch.values().next().value!);
    const table = await batches.hasTable().catch(() => true);
    this.log({
      event: 'warning',
      job: jobName(payload),
      uuid: uuidOf(payload),
      reason: `batch ${batchId} is not in ${batches.where}${table ? '' : ' (no such table)'}: its jobs run, but the batch does not count them; point --batch-db (and --batch-table) at the app's database, where Bus::batch() wrote it`,
    });
  }

  /** Says, once per batch and kind of callback, which callbacks did not run. */
  private sayNotRun(payload: DecodedPayload, batch: BatchRow, callbacks: string[]): void {
    const notRun = callbacks.filter((name) => !this.saidBatch.has(`${batch.id}:${name}`));
    if (notRun.length === 0) return;
    for (const name of notRun) this.saidBatch.add(`${batch.id}:${name}`);
    this.log({
      event: 'warning',
      job: jobName(payload),
      uuid: uuidOf(payload),
      reason: `batch ${batch.id}${batch.name ? ` (${batch.name})` : ''}: its ${notRun.join(' and ')} callbacks are PHP closures Node cannot run: they did not run (with --share, a PHP worker beside this one runs the job that finishes or first fails a batch)`,
    });
  }

  /**
   * How the job is unique, if it is; undefined when it is not, or has no lock the worker can
   * reach. A class whose key cannot be known (its uniqueId() is PHP) is logged as an error once
   * per job, naming the class: its lock stays, and the log says so. At once when nothing in it
   * waits (see uniquenessNow), else a promise; worked out once per job either way.
   */
  private uniquenessFor(payload: DecodedPayload, command: PhpValue | undefined): Uniqueness | undefined | Promise<Uniqueness | undefined> {
    if (!this.deps.locks) return undefined;
    if (this.uniqueness.has(payload)) return this.uniqueness.get(payload);
    const object = command === undefined ? undefined : deref(command);
    const methods = object instanceof PhpObject ? this.methodsFor(object.className) : undefined;
    let found: Uniqueness | undefined | Promise<Uniqueness | undefined>;
    try {
      found = uniquenessNow(payload, command, this.deps.shapes, methods);
    } catch (error) {
      found = this.unnamed(payload, error);
    }
    found =
      found instanceof Promise
        ? found.then(
            (unique) => this.inThisStore(payload, unique),
            (error: unknown) => this.inThisStore(payload, this.unnamed(payload, error)),
          )
        : this.inThisStore(payload, found);
    this.uniqueness.set(payload, found);
    return found;
  }

  /** A unique job whose lock cannot be named: said, and left (anything else is thrown on). */
  private unnamed(payload: DecodedPayload, error: unknown): undefined {
    if (!(error instanceof UnnamedLockError)) throw error;
    this.log({ event: 'error', job: jobName(payload), uuid: uuidOf(payload), error: error.message });
    return undefined;
  }

  /**
   * A lock the payload places in another cache store (uniqueVia(), or another default) is not
   * this worker's to release: the log says where it stays, rather than deleting a key of that
   * name in the wrong store.
   */
  private inThisStore(payload: DecodedPayload, unique: Uniqueness | undefined): Uniqueness | undefined {
    const here = this.deps.locks?.storeName;
    if (unique?.store === undefined || here === undefined || unique.store === here) return unique;
    this.log({
      event: 'error',
      job: jobName(payload),
      uuid: uuidOf(payload),
      error: `its unique lock ${unique.keys[0]} is in the cache store "${unique.store}", as its payload says, and this worker keeps locks in "${here}" (--cache-store): the lock was not released`,
    });
    return undefined;
  }

  /** Laravel's forceRelease() of each key; by owner (restoreLock()->release()) when the job carries one (13.24+). */
  private async releaseLock(unique: Uniqueness): Promise<void> {
    const locks = this.deps.locks!;
    const owner = unique.owner;
    // Without an owner every spelling goes in one round trip: a worker given no shapes does this
    // after every job, unique or not.
    if (owner === undefined) await locks.forceReleaseAll(unique.keys);
    else await Promise.all(unique.keys.map((key) => locks.release(key, owner)));
  }

  /**
   * When a chained job succeeds, the next one is pushed the way Laravel's Queueable does it
   * (built beside the envelope it writes, src/laravel/chain.ts): its queue defaults to the
   * chain's, then to the connection's own queue.
   */
  dispatchNextInChain(payload: DecodedPayload, command: PhpValue | undefined): Promise<void> | undefined {
    // Undefined for a job with no chain (most): nothing to wait for. A link that cannot be built
    // throws here, inside the caller's try, as the rejection it was before.
    const link = nextInChain(
      payload,
      command,
      (this.#linkOptions ??= { connection: this.options.connectionName, shaped: (next) => this.shapedLink(next) }),
    );
    if (!link) return undefined;
    const queue = link.queue ?? this.queue.defaultQueue;
    const pushed = link.delay > 0 ? this.queue.laterRaw(link.delay, link.raw, queue) : this.queue.pushRaw(link.raw, queue);
    return pushed.then(() => undefined);
  }

  /** How the next link is built: the same for every job of this worker. */
  #linkOptions: NextLinkOptions | undefined;

  /**
   * What the class's shape says of a chain's next link: its declared tries, backoff and the
   * like for the envelope, its displayName() as `lqb shapes` translated it, and its encryption
   * (ShouldBeEncrypted: never pushed in clear text, so a worker without the APP_KEY fails the
   * finished job instead). A method whose result Laravel would write (backoff(), retryUntil())
   * is said once per class.
   */
  private shapedLink(next: PhpObject): LinkEnvelope | undefined {
    const shape = findShape(this.deps.shapes, next.className);
    if (!shape) return undefined;
    const declared = declaredForEnvelope(shape, next);
    if (declared.notRun.length > 0 && !this.saidNotRun.has(shape.name)) {
      this.saidNotRun.add(shape.name);
      this.log({
        event: 'warning',
        reason: `${shape.name} defines ${declared.notRun.join(' and ')}, PHP that Node cannot run: the next link of a chain is pushed without ${declared.notRun.length > 1 ? 'their results' : 'its result'}`,
      });
    }
    const displayName = shape.methods.includes('displayName') ? translatedDisplayName(shape, next) : undefined;
    const named = { ...(displayName !== undefined ? { displayName } : {}), ...declared.envelope };
    if (!shape.interfaces.includes(SHOULD_BE_ENCRYPTED)) return named;
    if (!this.deps.encrypter)
      throw new Error(`the next job in the chain, ${shape.name}, is ShouldBeEncrypted and this worker has no APP_KEY to encrypt it with`);
    return { ...named, encrypter: this.deps.encrypter };
  }
}

function uuidOf(payload: DecodedPayload): string | undefined {
  const uuid = payload.envelope.uuid;
  return typeof uuid === 'string' ? uuid : undefined;
}

/** How many catch callbacks the command's chain carries (Queueable's chainCatchCallbacks). */
function chainCatchCallbacks(command: PhpValue | undefined): number {
  const object = command === undefined ? undefined : deref(command);
  if (!(object instanceof PhpObject)) return 0;
  const callbacks = deref(object.get('chainCatchCallbacks') ?? null);
  return callbacks instanceof PhpArray ? callbacks.size : 0;
}

/**
 * Whether the app serializes closures with laravel/serializable-closure: Laravel 8.62 and later
 * (on PHP 7.4+, which 8.62+ apps run); 5.8 to 7 used opis/closure, and so did 8.x before 8.62.
 * A Laravel 8 payload from an app of unknown version is taken for the later form.
 */
function closuresAreLaravels(profile: LaravelProfile, laravel: string | undefined): boolean {
  if (profile === '5.8' || profile === '6' || profile === '7') return false;
  const version = /^v?(\d+)(?:\.(\d+))?/.exec(laravel ?? '');
  if (!version) return true;
  const [major, minor] = [Number(version[1]), version[2] === undefined ? undefined : Number(version[2])];
  return major > 8 || (major === 8 && (minor === undefined || minor >= 62));
}
