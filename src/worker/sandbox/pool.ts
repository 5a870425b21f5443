/**
 * Sandboxed handlers: the handlers module runs in a pool of worker threads, as BullMQ's
 * sandboxed processors run in child processes, so a CPU-bound handler starves neither the other
 * jobs nor the reservations' renewals on the main thread.
 *
 * `sandboxedHandlers(file, { threads })` returns a HandlerMap like the module's own, whose
 * handlers (and `failed` hooks) send the job to a free thread and wait for it; the worker runs
 * them as any others, with the same rules. In the thread a handler gets the same job API:
 * `name`, `command`, `args`, `attempts`, `uuid`, `id`, `queue`, `payload` (copies, by structured
 * clone), `signal`, and `release()`, `fail()`, `delete()`, which the worker carries out on the
 * real job. Not there: `decoded`, `view` and `cache`, which hold what does not cross threads.
 * The PHP methods' JavaScript a handler carries (`uniqueId`, …) runs in a thread too, when asked.
 *
 * One job at a time per thread. When a job's signal fires (its timeout, or stop()'s deadline)
 * its thread is ended at once, whatever the handler is doing, and a fresh one takes its place:
 * the process goes on.
 *
 * Each thread says what it holds live after its full collections (memory.ts's measure), and the
 * pool adds its threads' figures to the process's for the worker's `memory` limit. Given
 * `memoryLimitMb`, a thread is also capped: V8 ends one whose JS heap passes it
 * (`resourceLimits`), and the pool ends one that reports more than it after a full collection
 * (Buffers included, which V8's cap leaves out); either is a crash, as below.
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { Worker as Thread } from 'node:worker_threads';
import { JOB_METHODS, type Handler, type HandlerJob, type HandlerMap, type MethodJob } from '../handlers.js';
import { countThreadMemory } from '../memory.js';
import { sandboxThread, threadSource } from './thread.js';

export interface SandboxOptions {
  /** Threads in the pool, each running one job at a time (1). */
  threads?: number;
  /**
   * Each thread's memory cap in MB (none: V8's own heap limit). A thread past it is ended as a
   * crash: its job fails with the reason, and a fresh thread takes its place. A backstop for a
   * job that grows without end, well above what the worker's `memory` limit stops at.
   */
  memoryLimitMb?: number;
}

/** How long the stop check waits for a thread's full collection: seconds for a heap of GBs, or a handler's sync work. */
const REMEASURE_PATIENCE_MS = 5000;

/** The handlers of a sandbox, and the pool to close when the worker is done. */
export interface SandboxedHandlers {
  handlers: HandlerMap;
  /** Ends the pool's threads. */
  close(): Promise<void>;
  /** How many threads were ended for a job that ran out of time, and replaced. */
  replaced(): number;
}

type Flat = { name: string; message: string; stack?: string };

/** A thread's message. */
interface FromThread {
  ready?: string[];
  failedHooks?: string[];
  methods?: Record<string, string[]>;
  refused?: [string, string][];
  value?: unknown;
  loadError?: string;
  call?: number;
  action?: 'release' | 'fail' | 'delete';
  arg?: unknown;
  done?: number;
  error?: Flat;
  /** Bytes the thread holds live after its last full collection (JS heap and Buffers). */
  memory?: number;
  /** Set when `memory` answers `{ measure }`: taken after a full collection run for it. */
  measured?: number;
}

/** A job sent to a thread, until it is done. */
interface Running {
  job: HandlerJob;
  settle: (error?: Error, value?: unknown) => void;
}

/** What a thread found in the module: the handlers, those with a failed hook, and each one's PHP methods. */
interface Found {
  names: string[];
  failedHooks: string[];
  methods: Record<string, string[]>;
  /** Entries that are no handler: their names and what they are. */
  refused: [string, string][];
}

class SandboxThread {
  readonly thread: Thread;
  running: Running | undefined;
  readonly ready: Promise<Found>;
  /** Bytes live after the thread's last full collection, as it last said. */
  memory = 0;
  /** Those waiting for the thread to measure again. */
  private remeasured: (() => void)[] = [];

  constructor(
    url: string,
    private readonly limitMb: number | undefined,
    onGone: (thread: SandboxThread, error: Error) => void,
  ) {
    this.thread = new Thread(threadSource(sandboxThread), {
      eval: true,
      workerData: { url, methods: JOB_METHODS },
      ...(limitMb !== undefined ? { resourceLimits: { maxOldGenerationSizeMb: limitMb } } : {}),
    });
    this.thread.unref();
    this.ready = new Promise((resolve, reject) => {
      this.thread.on('message', (message: FromThread) => {
        if (typeof message.memory === 'number') this.memory = message.memory;
        if (message.measured !== undefined) for (const done of this.remeasured.splice(0)) done();
        if (message.ready)
          resolve({
            names: message.ready,
            failedHooks: message.failedHooks ?? [],
            methods: message.methods ?? {},
            refused: message.refused ?? [],
          });
        else if (message.loadError !== undefined) reject(new Error(`${url} could not be loaded in a sandbox thread: ${message.loadError}`));
        else this.heard(message);
        // After the message is heard: a job that has finished stays done (the pool does not hand
        // the thread another, see release()), and a job still running ends as a crash.
        if (this.pastCap()) onGone(this, pastItsCap(this.memory, limitMb!));
      });
      this.thread.on('error', (thrown) => {
        const error = (thrown as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' ? outOfHeap(thrown, limitMb) : thrown;
        reject(error);
        onGone(this, error);
      });
      this.thread.on('exit', (code) => {
        for (const done of this.remeasured.splice(0)) done();
        onGone(this, new Error(`the sandbox thread ended (exit code ${code}) while running the job`));
      });
    });
  }

  /**
   * Has the thread collect in full and say what it holds then; resolves when it has, when it
   * is gone, or after `patienceMs` (a figure it cannot give in time stays as it was).
   */
  remeasure(patienceMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, patienceMs);
      timer.unref();
      this.remeasured.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.thread.postMessage({ measure: 1 });
    });
  }

  /** Holds more than its cap after a full collection: to be ended, not given another job. */
  pastCap(): boolean {
    return this.limitMb !== undefined && this.memory > this.limitMb * 1024 * 1024;
  }

  /** An action the handler asked for, or its end. */
  private heard(message: FromThread): void {
    const running = this.running;
    if (!running) return;
    if (message.done !== undefined) {
      this.running = undefined;
      running.settle(message.error ? rebuild(message.error) : undefined, message.value);
      return;
    }
    if (message.call === undefined) return;
    const id = message.call;
    const job = running.job;
    const act =
      message.action === 'release'
        ? job.release(message.arg as number)
        : message.action === 'fail'
          ? job.fail(typeof message.arg === 'object' && message.arg !== null ? rebuild(message.arg as Flat) : message.arg)
          : job.delete();
    act.then(
      () => this.thread.postMessage({ reply: id }),
      (error: unknown) => this.thread.postMessage({ reply: id, error: flatten(error) }),
    );
  }
}

/** The pool: threads, the jobs waiting for one, and the replacement of a thread ended mid-job. */
class SandboxPool {
  private readonly idle: SandboxThread[] = [];
  private readonly waiting: ((thread: SandboxThread) => void)[] = [];
  private readonly all = new Set<SandboxThread>();
  private closed = false;
  replacedCount = 0;
  /** Stops counting the threads' memory in the process's. */
  private readonly uncount: () => void;

  constructor(
    private readonly url: string,
    private readonly limitMb: number | undefined,
  ) {
    this.uncount = countThreadMemory({ bytes: () => this.memory(), remeasure: () => this.remeasureAll() });
  }

  /**
   * Every thread measures again after a full collection (see memory.ts). A thread at work
   * answers when its handler next awaits, its job's working set counted (live, as the other
   * jobs' in-process would be), or when the job ends; one that cannot within the patience keeps
   * its figure.
   */
  private async remeasureAll(): Promise<void> {
    await Promise.all([...this.all].map((thread) => thread.remeasure(REMEASURE_PATIENCE_MS)));
  }

  /** Bytes the pool's threads hold live, each as its last full collection left it. */
  memory(): number {
    let bytes = 0;
    for (const thread of this.all) bytes += thread.memory;
    return bytes;
  }

  /** A new thread, ready once the module is read. */
  async add(): Promise<Found> {
    const thread = this.spawn();
    const found = await thread.ready;
    this.release(thread);
    return found;
  }

  /**
   * Runs `name`'s handler (or its failed hook, given the error, or one of its PHP methods on a
   * MethodJob, resolving to the method's result) on a free thread.
   */
  async run(name: string, job: HandlerJob, hook?: { error: unknown } | { method: string }): Promise<unknown> {
    const thread = await this.acquire();
    const signal = job.signal;
    // Out of time while it waited for a thread: not run, and the thread, idle and sound, goes to the next job.
    if (!hook && signal.aborted) {
      this.release(thread);
      throw signal.reason instanceof Error ? signal.reason : new Error('the job was stopped');
    }
    return new Promise<unknown>((resolve, reject) => {
      const stop = () => {
        // The job ran out of time (or the worker's stop() deadline passed): the thread goes, whatever it is doing.
        thread.running = undefined;
        this.replacedCount++;
        this.replace(thread);
        reject(signal.reason instanceof Error ? signal.reason : new Error('the job was stopped'));
      };
      thread.running = {
        job,
        settle: (error, value) => {
          signal?.removeEventListener('abort', stop);
          this.release(thread);
          if (error) reject(error);
          else resolve(value);
        },
      };
      // A failed() hook runs after the job's signal fired (a timeout fails the job on its last
      // attempt): the worker bounds it by the job's timeout, the signal does not end it.
      if (!hook) signal.addEventListener('abort', stop, { once: true });
      const what = hook === undefined ? {} : 'method' in hook ? { method: hook.method } : { hook: 'failed', error: flatten(hook.error) };
      thread.thread.postMessage({ run: 1, name, job: plainJob(job), ...what });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.uncount();
    const threads = [...this.all];
    this.all.clear();
    await Promise.all(threads.map((thread) => thread.thread.terminate()));
  }

  private spawn(): SandboxThread {
    const thread = new SandboxThread(this.url, this.limitMb, (gone, error) => {
      if (!this.all.has(gone)) return;
      // A thread that died on its own (an uncaught error in the handler's stray code, a
      // process.exit() in it, its memory past the cap): its job fails with the reason (an
      // exception: released with backoff while it has tries left), and a fresh thread takes its place.
      const running = gone.running;
      gone.running = undefined;
      this.replace(gone);
      running?.settle(error);
    });
    this.all.add(thread);
    return thread;
  }

  private replace(thread: SandboxThread): void {
    this.all.delete(thread);
    const index = this.idle.indexOf(thread);
    if (index >= 0) this.idle.splice(index, 1);
    void thread.thread.terminate();
    if (this.closed) return;
    const fresh = this.spawn();
    fresh.ready.then(
      () => this.release(fresh),
      () => undefined,
    );
  }

  private acquire(): Promise<SandboxThread> {
    const thread = this.idle.pop();
    if (thread) return Promise.resolve(thread);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(thread: SandboxThread): void {
    if (!this.all.has(thread)) return;
    if (thread.pastCap()) {
      this.replace(thread);
      return;
    }
    const next = this.waiting.shift();
    if (next) next(thread);
    else this.idle.push(thread);
  }
}

/**
 * The handlers of the module at `file`, each run in a thread of a pool of `threads`. Resolves
 * once every thread has read the module; rejects, naming the file, when it cannot be read.
 */
export async function sandboxedHandlers(file: string, options: SandboxOptions = {}): Promise<SandboxedHandlers> {
  const threads = options.threads ?? 1;
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`sandbox threads must be a whole number, 1 or more, not ${JSON.stringify(threads)}`);
  const limitMb = options.memoryLimitMb;
  if (limitMb !== undefined && !(Number.isInteger(limitMb) && limitMb >= 16))
    throw new Error(`sandbox memoryLimitMb must be a whole number of MB, 16 or more, not ${JSON.stringify(limitMb)}`);
  const url = file.startsWith('file:') ? file : pathToFileURL(resolve(file)).href;
  const pool = new SandboxPool(url, limitMb);
  let found: Found[];
  try {
    found = await Promise.all(Array.from({ length: threads }, () => pool.add()));
  } catch (error) {
    await pool.close();
    throw error;
  }
  const { names, failedHooks, methods, refused } = found[0]!;
  if (refused.length > 0) {
    await pool.close();
    const [name, kind] = refused[0]!;
    throw new Error(`${file}: the handler for ${name} is not a function (or { handle, failed }) but ${kind}`);
  }
  if (names.length === 0) {
    await pool.close();
    throw new Error(`${file} exports default no handler functions: name at least one job class`);
  }
  const handlers: HandlerMap = {};
  for (const name of names) {
    const handler: Handler = (job) => pool.run(name, job);
    if (failedHooks.includes(name)) handler.failed = async (job, error) => void (await pool.run(name, job, { error }));
    // The PHP methods' JavaScript (a unique job's uniqueId) runs in a thread too, as the worker asks.
    for (const method of methods[name] ?? [])
      (handler as unknown as Record<string, unknown>)[method] = (job: MethodJob) =>
        pool.run(name, job as unknown as HandlerJob, { method });
    handlers[name] = handler;
  }
  return { handlers, close: () => pool.close(), replaced: () => pool.replacedCount };
}

/** What crosses to the thread: the job's plain fields (a MethodJob's name and command). */
function plainJob(job: HandlerJob): Record<string, unknown> {
  return {
    name: job.name,
    command: job.command,
    args: job.args,
    attempts: job.attempts,
    uuid: job.uuid,
    id: job.id,
    queue: job.queue,
    payload: job.payload,
  };
}

/** A thread ended for its memory, as its job's exception (failed_jobs records the name). */
class SandboxOutOfMemory extends Error {
  override name = 'SandboxOutOfMemory';
}

/** A thread V8 ended at its heap's cap (resourceLimits), named for what happened. */
function outOfHeap(error: Error, limitMb: number | undefined): Error {
  const cap = limitMb !== undefined ? `its cap of ${limitMb} MB` : "V8's heap limit";
  return new SandboxOutOfMemory(
    `the sandbox thread's JS heap reached ${cap} while running the job, and V8 ended the thread (${error.message})`,
  );
}

/** A thread that holds more than its cap after a full collection: ended by the pool. */
function pastItsCap(bytes: number, limitMb: number): Error {
  const held = Math.round(bytes / 1024 / 1024);
  return new SandboxOutOfMemory(
    `the sandbox thread held ${held} MB (JS heap and Buffers) after a full collection, past its cap of ${limitMb} MB: ended`,
  );
}

function flatten(error: unknown): Flat | string | undefined {
  if (error === undefined || error === null || typeof error === 'string') return error ?? undefined;
  if (error instanceof Error) return { name: error.name, message: error.message, stack: error.stack };
  return { name: 'Error', message: String(error) };
}

/** An Error as the thread threw it: its name, message and stack, which failed_jobs records. */
function rebuild(flat: Flat): Error {
  return Object.assign(new Error(flat.message), { name: flat.name, stack: flat.stack });
}
