/**
 * `fakeQueue()`: connect()'s dispatch API (dispatch, bulk, chain, batch) recording what it would
 * push instead of pushing it, with the assertions Laravel's Queue::fake() and Bus::fake() give.
 * The payloads are laid out by the same LaravelQueue a real connection uses, so what is recorded
 * is what a dispatch would push, byte for byte (but the uuid and id each dispatch makes afresh).
 * No Redis, no database: a batch's row and a unique job's lock are kept in memory.
 */
import { connectWith, type ConnectOptions, type LaravelQueue, type PayloadMakers, type UntypedJobs } from '../connect/connect.js';
import { envFileOf, resolveFromEnv } from '../connect/settings.js';
import { DatabaseQueueCache } from '../worker/DatabaseQueueCache.js';
import { databaseConfig } from '../database/index.js';
import { decodePayload } from '../laravel/payload.js';
import { PhpArray, PhpObject, deref, toJS, unserialize } from '../php/index.js';
import type { Queue } from '../queue/contract.js';
import type { UniqueLockStore } from '../worker/locks/LockStore.js';

/** One job the fake was asked to push: where, when, the payload, and what it says. */
export interface FakeDispatch {
  /** The class the payload names (displayName, else commandName). */
  name: string;
  queue: string;
  /** Seconds, or a moment, when it was pushed delayed. */
  delay?: number | Date;
  /** The payload, as a real dispatch would push it. */
  payload: string;
  /** The command's properties through toJS (undefined for an encrypted command). */
  command: Record<string, unknown> | undefined;
  /** The classes chained after it (its `chained`), in order. */
  chained: string[];
  /** Its batch's id, when it was pushed in one. */
  batchId: string | null;
}

/** A batch the fake was asked to dispatch: its row as job_batches would hold it, and its jobs. */
export interface FakeBatch {
  id: string;
  name: string;
  totalJobs: number;
  options: Record<string, unknown>;
  jobs: FakeDispatch[];
}

export interface FakeQueueOptions extends Pick<
  ConnectOptions,
  'env' | 'prefix' | 'defaultQueue' | 'key' | 'cipher' | 'laravel' | 'shapes' | 'strictShapes'
> {
  /**
   * What each dispatch makes afresh, made by these functions instead, so that a test can compare
   * whole payloads: `uuid()`, `id()` (Redis's payloads), `now()` (UNIX seconds: 12.11+'s createdAt,
   * a Date delay's seconds, a batch's id) and `iv(length)` (an encrypted command's IV).
   */
  make?: PayloadMakers;
}

/** Jobs pushed to a fake: recorded, never run. */
export class RecordingQueue implements Pick<Queue, 'driver' | 'defaultQueue' | 'retryAfter' | 'pushRaw' | 'laterRaw' | 'bulkRaw'> {
  readonly driver = 'redis' as const;
  readonly retryAfter = 90;
  readonly pushed: { payload: string; queue: string; delay?: number | Date }[] = [];

  constructor(readonly defaultQueue: string) {}

  async pushRaw(payload: string, queue?: string): Promise<void> {
    this.pushed.push({ payload, queue: queue ?? this.defaultQueue });
  }

  async laterRaw(delay: number | Date, payload: string, queue?: string): Promise<void> {
    this.pushed.push({ payload, queue: queue ?? this.defaultQueue, delay });
  }

  async bulkRaw(payloads: string[], queue?: string): Promise<void> {
    for (const payload of payloads) await this.pushRaw(payload, queue);
  }
}

/** Every other method of the queue contract: a fake records pushes, and has nothing to pop or count. */
function recordingQueue(defaultQueue: string): RecordingQueue & Queue {
  const recording = new RecordingQueue(defaultQueue);
  return new Proxy(recording, {
    get(target, property, receiver) {
      if (property in target || typeof property === 'symbol') return Reflect.get(target, property, receiver) as unknown;
      return () => {
        throw new Error(`a fake queue records dispatches: it has no ${String(property)}()`);
      };
    },
  }) as RecordingQueue & Queue;
}

/** Unique locks in memory, as the cache store would keep them for the length of a test. */
export class MemoryLocks implements UniqueLockStore {
  readonly held = new Map<string, string>();
  /** The cache store these locks stand for (`cache.default`), as 11.39+ payloads name it. */
  constructor(readonly storeName = 'fake') {}
  /** Told each key a release names (runJob reports them). */
  onRelease: ((key: string) => void) | undefined;
  async forceRelease(key: string): Promise<void> {
    this.onRelease?.(key);
    this.held.delete(key);
  }
  async forceReleaseAll(keys: string[]): Promise<void> {
    for (const key of keys) await this.forceRelease(key);
  }
  async release(key: string, owner: string): Promise<boolean> {
    this.onRelease?.(key);
    if (this.held.get(key) !== owner) return false;
    this.held.delete(key);
    return true;
  }
  async owner(key: string): Promise<string | null> {
    return this.held.get(key) ?? null;
  }
  async acquire(key: string, owner: string): Promise<boolean> {
    if (this.held.has(key)) return false;
    this.held.set(key, owner);
    return true;
  }
}

/** job_batches rows in memory. */
class MemoryBatches {
  readonly rows = new Map<string, { id: string; name: string; totalJobs: number; options: PhpArray }>();
  readonly where = 'the fake queue’s batches';
  async store(batch: { id: string; name: string; options: PhpArray }): Promise<void> {
    this.rows.set(batch.id, { ...batch, totalJobs: 0 });
  }
  async incrementTotalJobs(batchId: string, amount: number): Promise<void> {
    const row = this.rows.get(batchId);
    if (row) row.totalJobs += amount;
  }
  async delete(batchId: string): Promise<void> {
    this.rows.delete(batchId);
  }
  async hasTable(): Promise<boolean> {
    return true;
  }
}

/** A dispatch matches a name when the payload names that class (or its commandName does). */
const named = (record: FakeDispatch, name: string) => record.name === name;

export class FakeQueue<Jobs extends object = UntypedJobs> {
  readonly #queue: LaravelQueue<Jobs>;
  readonly #recording: RecordingQueue;
  readonly #batches: MemoryBatches;
  /** Unique locks the fake's dispatches took (a duplicate is not recorded, as it is not pushed). */
  readonly locks: UniqueLockStore;

  /** @internal fakeQueue() makes one. */
  constructor(queue: LaravelQueue<Jobs>, recording: RecordingQueue, batches: MemoryBatches, locks: UniqueLockStore) {
    this.#queue = queue;
    this.#recording = recording;
    this.#batches = batches;
    this.locks = locks;
  }

  /** connect()'s dispatch, recorded. */
  get dispatch(): LaravelQueue<Jobs>['dispatch'] {
    return this.#queue.dispatch.bind<LaravelQueue<Jobs>['dispatch']>(this.#queue);
  }
  get bulk(): LaravelQueue<Jobs>['bulk'] {
    return this.#queue.bulk.bind(this.#queue);
  }
  get chain(): LaravelQueue<Jobs>['chain'] {
    return this.#queue.chain.bind(this.#queue);
  }
  get batch(): LaravelQueue<Jobs>['batch'] {
    return this.#queue.batch.bind(this.#queue);
  }

  /** What was dispatched, in order; of one class when named. */
  dispatched(name?: string): FakeDispatch[] {
    const all = this.#recording.pushed.map(describePushed);
    return name === undefined ? all : all.filter((record) => named(record, name));
  }

  /** The batches dispatched, in order, each with its jobs. */
  batches(): FakeBatch[] {
    const all = this.dispatched();
    return [...this.#batches.rows.values()].map((row) => ({
      id: row.id,
      name: row.name,
      totalJobs: row.totalJobs,
      options: toJS(row.options) as Record<string, unknown>,
      jobs: all.filter((record) => record.batchId === row.id),
    }));
  }

  /** Queue::assertPushed: `name` was dispatched (at least once matching `predicate`). */
  assertDispatched(name: string, predicate?: (command: Record<string, unknown>, job: FakeDispatch) => boolean): void {
    const matching = this.#matching(name, predicate);
    if (matching.length === 0)
      this.#fail(`${name} was not dispatched${predicate ? ' matching the predicate' : ''}`, this.dispatched(predicate ? name : undefined));
  }

  /** Queue::assertPushed($class, $times). */
  assertDispatchedTimes(name: string, times: number): void {
    const count = this.dispatched(name).length;
    if (count !== times) this.#fail(`${name} was dispatched ${count} time${count === 1 ? '' : 's'}, not ${times}`, this.dispatched());
  }

  /** Queue::assertPushedOn: `name` was dispatched onto `queue` (matching `predicate`). */
  assertDispatchedOn(queue: string, name: string, predicate?: (command: Record<string, unknown>, job: FakeDispatch) => boolean): void {
    if (!this.#matching(name, predicate).some((record) => record.queue === queue))
      this.#fail(
        `${name} was not dispatched onto queue ${JSON.stringify(queue)}${predicate ? ' matching the predicate' : ''}`,
        this.dispatched(),
      );
  }

  /** Queue::assertNotPushed. */
  assertNotDispatched(name: string, predicate?: (command: Record<string, unknown>, job: FakeDispatch) => boolean): void {
    const matching = this.#matching(name, predicate);
    if (matching.length > 0)
      this.#fail(`${name} was dispatched${predicate ? ' matching the predicate' : ''}, ${matching.length} time(s)`, matching);
  }

  /** Queue::assertNothingPushed. */
  assertNothingDispatched(): void {
    const all = this.dispatched();
    if (all.length > 0) this.#fail(`${all.length} job(s) were dispatched, none expected`, all);
  }

  /** Bus::assertChained: a job was dispatched with these classes chained after it, in this order (its own first). */
  assertChained(names: string[]): void {
    const all = this.dispatched();
    if (!all.some((record) => same([record.name, ...record.chained], names)))
      this.#fail(
        `no chain ${names.join(' → ')} was dispatched; chains dispatched: ${
          all
            .filter((record) => record.chained.length > 0)
            .map((record) => [record.name, ...record.chained].join(' → '))
            .join('; ') || 'none'
        }`,
        [],
      );
  }

  /** Bus::assertBatched: a batch matching `predicate` was dispatched. */
  assertBatched(predicate: (batch: FakeBatch) => boolean): void {
    const batches = this.batches();
    if (!batches.some(predicate))
      throw new Error(
        `no batch matching the predicate was dispatched; batches dispatched: ${
          batches.map((batch) => `${JSON.stringify(batch.name)} of ${batch.jobs.map((job) => job.name).join(', ')}`).join('; ') || 'none'
        }`,
      );
  }

  /** Forgets what was dispatched (and the batches and locks), as a fresh fake. */
  reset(): void {
    this.#recording.pushed.length = 0;
    this.#batches.rows.clear();
    if (this.locks instanceof MemoryLocks) this.locks.held.clear();
  }

  #matching(name: string, predicate?: (command: Record<string, unknown>, job: FakeDispatch) => boolean): FakeDispatch[] {
    return this.dispatched(name).filter((record) => !predicate || predicate(record.command ?? {}, record));
  }

  #fail(what: string, shown: FakeDispatch[]): never {
    const lines = shown.map((record) => `  ${record.name} on ${record.queue}: ${JSON.stringify(record.command ?? '(encrypted)')}`);
    throw new Error(`${what}.\nDispatched instead:\n${lines.length > 0 ? lines.join('\n') : '  nothing'}`);
  }
}

function same(left: string[], right: string[]): boolean {
  return left.length === right.length && left.every((name, i) => name === right[i]);
}

/** A recorded push read back: its class, command, chain and batch. */
export function describePushed(pushed: { payload: string; queue: string; delay?: number | Date }): FakeDispatch {
  const decoded = decodePayload(pushed.payload);
  const command = decoded.command === undefined ? undefined : deref(decoded.command);
  const chained = command instanceof PhpObject ? deref(command.get('chained') ?? null) : null;
  const displayName = decoded.envelope.displayName;
  return {
    name: typeof displayName === 'string' ? displayName : decoded.name,
    queue: pushed.queue,
    ...(pushed.delay !== undefined ? { delay: pushed.delay } : {}),
    payload: pushed.payload,
    command: command === undefined ? undefined : (toJS(command) as Record<string, unknown>),
    chained:
      chained instanceof PhpArray
        ? chained.values.map((link) => {
            const next = deref(unserialize(deref(link) as string | Uint8Array));
            return next instanceof PhpObject ? next.className : '?';
          })
        : [],
    batchId: decoded.batchId,
  };
}

/**
 * A fake of connect()'s queue for tests: the same dispatch, bulk, chain and batch, recording
 * what they would push. `env` (a Laravel .env) and the other options are read as connect()
 * reads them (APP_KEY for encrypted jobs, the queue name, the Laravel version, the shapes), but
 * nothing is opened.
 */
export async function fakeQueue<Jobs extends object = UntypedJobs>(options: FakeQueueOptions = {}): Promise<FakeQueue<Jobs>> {
  const fromFile = envFileOf(options);
  const settings = resolveFromEnv(options, fromFile);
  const recording = recordingQueue(settings.defaultQueue);
  const batches = new MemoryBatches();
  const locks = new MemoryLocks();
  const queue = await connectWith<Jobs>(settings, { ...options, logger: false }, fromFile, {
    queue: recording,
    // Never read by a dispatch; an in-memory SQLite file that is not opened unless it is.
    cache: new DatabaseQueueCache(databaseConfig(':memory:')),
    locks,
    batches,
    ...(options.make ? { make: options.make } : {}),
  });
  return new FakeQueue(queue, recording, batches, locks);
}
