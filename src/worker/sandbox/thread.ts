/**
 * The code a sandbox thread runs (see pool.ts): it imports the handlers module and runs one job
 * at a time, with the handler API proxied by messages to the worker on the main thread.
 *
 * It is a function run with `eval`, so that it needs no file of its own beside the compiled one
 * (the tests run the TypeScript sources), and it reads only Node's own modules.
 *
 * Messages, main → thread: `{ run, name, job, hook?, error?, method? }` (run a handler, its
 * `failed` hook with the error, or one of its PHP methods' JavaScript), `{ reply, error? }` (an action done). `{ measure }` (collect in full and say what is left). Thread → main: `{ ready, failedHooks, methods }`
 * or `{ loadError }` once the module is read, `{ call, action, arg }` (job.release / fail / delete),
 * `{ done, error?, value? }`. Errors cross as `{ name, message, stack }`. The `ready` and `done`
 * messages carry `memory`, and the thread sends `{ memory }` after each of its full collections:
 * the bytes its isolate holds live (JS heap and Buffers), for the worker's --memory (memory.ts);
 * its answer to `{ measure }` is `{ memory, measured }`.
 */
/**
 * A function's source as a thread's script. A loader that keeps function names (tsx, esbuild's
 * keepNames) wraps them in calls to its own `__name` helper, which the thread does not have: it
 * gets one that does nothing. The function gets the thread's `require` as its argument: a bundler
 * (the package's own build among them) rewrites a `require` in the function's own text into a
 * helper of its bundle, which the thread does not have either.
 */
export function threadSource(main: (need: NodeJS.Require) => void): string {
  return `var __name = (target) => target;\n(${main.toString()})(require)`;
}

export function sandboxThread(need: NodeJS.Require): void {
  const threads = need('node:worker_threads') as typeof import('node:worker_threads');
  const parentPort = threads.parentPort;
  const workerData = threads.workerData as { methods: string[]; url: string };
  type Flat = { name: string; message: string; stack?: string };
  type Handler = ((job: object, error?: unknown) => unknown) & { failed?: (job: object, error: unknown) => unknown } & Record<
      string,
      unknown
    >;
  // The PHP methods' JavaScript a handler may carry (JOB_METHODS): run here when the worker asks.
  const methodNames = workerData.methods;
  const port = parentPort!;
  // This isolate's live memory, measured as memory.ts measures the main thread's: after a full
  // collection, when what is left is what the handlers keep (heapUsed and external are this
  // thread's own; only rss would be the process's). Before the first one, the memory as it is now.
  const perfHooks = need('node:perf_hooks') as typeof import('node:perf_hooks');
  const heapAndExternal = () => {
    const { heapUsed, external } = process.memoryUsage();
    return heapUsed + external;
  };
  let measured: number | undefined;
  new perfHooks.PerformanceObserver((list) => {
    const major = list
      .getEntries()
      .some((entry) => (entry as { detail?: { kind?: number } }).detail?.kind === perfHooks.constants.NODE_PERFORMANCE_GC_MAJOR);
    if (!major) return;
    measured = heapAndExternal();
    // Sent at once too, not only with the job's result: a job that grows without end is seen mid-job.
    port.postMessage({ memory: measured });
  }).observe({ entryTypes: ['gc'] });
  const liveMemory = () => measured ?? heapAndExternal();
  // V8's full collection as a function, as memory.ts's fullCollection() gets it in the main
  // thread: the flag set just long enough to read it from a fresh context (V8's flags are the
  // process's). Null where it cannot be had now: the figure is then sent as it is.
  let collector: (() => void) | undefined;
  const fullCollection = (): (() => void) | null => {
    if (collector) return collector;
    const v8 = need('node:v8') as typeof import('node:v8');
    try {
      v8.setFlagsFromString('--expose-gc');
      collector = (need('node:vm') as typeof import('node:vm')).runInNewContext('gc') as () => void;
    } catch {
      // Another thread unset the flag between the two steps: asked again next time.
    } finally {
      v8.setFlagsFromString('--no-expose-gc');
    }
    return collector ?? null;
  };
  const flatten = (error: unknown): Flat | string | undefined => {
    if (error === undefined || error === null || typeof error === 'string') return error ?? undefined;
    if (error instanceof Error) return { name: error.name, message: error.message, stack: error.stack };
    return { name: 'Error', message: String(error) };
  };
  const rebuild = (flat: Flat): Error => Object.assign(new Error(flat.message), { name: flat.name, stack: flat.stack });
  // A thrown value that is no Error is an exception all the same: recorded as the worker records
  // it in-process (an Error of its text), not as an action's string argument would cross.
  const thrown = (error: unknown): Flat => {
    const flat = flatten(error);
    return flat === undefined
      ? { name: 'Error', message: 'undefined' }
      : typeof flat === 'string'
        ? { name: 'Error', message: flat }
        : flat;
  };
  // A handler as loadHandlers takes it: a function, or `{ handle, failed }` with `this` its object.
  const handlerOf = (entry: unknown): Handler | undefined => {
    if (typeof entry === 'function') return entry as Handler;
    const object = entry as { handle?: unknown; failed?: unknown } | null;
    if (object === null || typeof object !== 'object' || typeof object.handle !== 'function') return undefined;
    const handle = object.handle as (job: object) => unknown;
    const handler = ((job: object) => handle.call(object, job)) as Handler;
    const failed = object.failed;
    if (typeof failed === 'function') handler.failed = (job, error) => (failed as Handler).call(object, job, error);
    for (const method of methodNames) {
      const given = (object as Record<string, unknown>)[method];
      if (typeof given === 'function') handler[method] = (job: object) => (given as Handler).call(object, job);
    }
    return handler;
  };
  let handlers: Record<string, Handler> = {};
  const pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  let nextCall = 1;
  const call = (action: string, arg?: unknown) =>
    new Promise<void>((resolve, reject) => {
      const id = nextCall++;
      pending.set(id, { resolve, reject });
      port.postMessage({ call: id, action, arg });
    });

  // import() through Function: a test runner that rewrites the sources' import() calls must
  // not rewrite this one, which runs in the thread with none of its helpers.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the one way to an import() no loader rewrites
  const load = new Function('url', 'return import(url)') as (url: string) => Promise<{ default?: unknown }>;
  load(workerData.url).then(
    (module: { default?: unknown }) => {
      // CommonJS compiled from `export default` has it under .default, beside __esModule.
      let map = module.default as Record<string, unknown> & { __esModule?: unknown; default?: unknown };
      if (map !== null && typeof map === 'object' && map.__esModule === true) map = map.default as typeof map;
      handlers = {};
      // What is no handler is named, as loadHandlers names it in-process, rather than dropped.
      const refused: [string, string][] = [];
      for (const [name, entry] of Object.entries(map ?? {})) {
        const handler = handlerOf(entry);
        if (handler) handlers[name] = handler;
        else
          refused.push([
            name,
            entry === null || entry === undefined
              ? String(entry)
              : Array.isArray(entry)
                ? 'an array'
                : /^[aeiou]/.test(typeof entry)
                  ? `an ${typeof entry}`
                  : `a ${typeof entry}`,
          ]);
      }
      const names = Object.keys(handlers).filter((name) => typeof handlers[name] === 'function');
      const methods = Object.fromEntries(
        names.map((name) => [name, methodNames.filter((method) => typeof handlers[name]![method] === 'function')]),
      );
      port.postMessage({
        ready: names,
        failedHooks: names.filter((name) => typeof handlers[name]!.failed === 'function'),
        methods,
        refused,
        memory: liveMemory(),
      });
    },
    (error: unknown) => port.postMessage({ loadError: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }),
  );

  port.on(
    'message',
    (message: {
      reply?: number;
      error?: Flat;
      run?: number;
      name?: string;
      job?: Record<string, unknown>;
      hook?: 'failed';
      method?: string;
      measure?: number;
    }) => {
      if (message.reply !== undefined) {
        const waiting = pending.get(message.reply);
        pending.delete(message.reply);
        if (message.error) waiting?.reject(rebuild(message.error));
        else waiting?.resolve();
        return;
      }
      if (message.measure !== undefined) {
        // The worker's memory limit looks reached: what is left after a full collection is what is kept.
        // Twice: the Buffers a collection finds dead are freed by a sweep that runs on after it,
        // and the next collection waits for that sweep to end before it starts.
        const collect = fullCollection();
        collect?.();
        collect?.();
        measured = heapAndExternal();
        port.postMessage({ memory: measured, measured: 1 });
        return;
      }
      if (message.run === undefined) return;
      const run = message.run;
      const controller = new AbortController();
      const job = {
        ...message.job,
        signal: controller.signal,
        release: (seconds: unknown = 0) => call('release', seconds),
        fail: (error?: unknown) => call('fail', flatten(error)),
        delete: () => call('delete'),
      };
      const handler = handlers[message.name!]!;
      Promise.resolve()
        .then(() =>
          message.method !== undefined
            ? (handler[message.method] as Handler)(message.job!)
            : message.hook === 'failed'
              ? handler.failed!(job, message.error ? rebuild(message.error) : undefined)
              : handler(job),
        )
        .then(
          // A method's result goes back (structured clone); a handler's is of no use to the worker.
          (value) => port.postMessage({ done: run, memory: liveMemory(), ...(message.method !== undefined ? { value } : {}) }),
          (error: unknown) => port.postMessage({ done: run, memory: liveMemory(), error: thrown(error) }),
        );
    },
  );
}
