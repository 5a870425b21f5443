/**
 * The code a sandbox thread runs (see pool.ts): it imports the handlers module and runs one job
 * at a time, with the handler API proxied by messages to the worker on the main thread.
 *
 * It is a function run with `eval`, so that it needs no file of its own beside the compiled one
 * (the tests run the TypeScript sources), and it reads only Node's own modules.
 *
 * Messages, main → thread: `{ run, name, job, hook?, error?, method? }` (run a handler, its
 * `failed` hook with the error, or one of its PHP methods' JavaScript), `{ reply, error? }` (an action done). Thread → main: `{ ready, failedHooks, methods }`
 * or `{ loadError }` once the module is read, `{ call, action, arg }` (job.release / fail / delete),
 * `{ done, error?, value? }`. Errors cross as `{ name, message, stack }`.
 */
/**
 * A function's source as a thread's script. A loader that keeps function names (tsx, esbuild's
 * keepNames) wraps them in calls to its own `__name` helper, which the thread does not have: it
 * gets one that does nothing.
 */
export function threadSource(main: () => void): string {
  return `var __name = (target) => target;\n(${main.toString()})()`;
}

export function sandboxThread(): void {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const threads = require('node:worker_threads') as typeof import('node:worker_threads');
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
    }) => {
      if (message.reply !== undefined) {
        const waiting = pending.get(message.reply);
        pending.delete(message.reply);
        if (message.error) waiting?.reject(rebuild(message.error));
        else waiting?.resolve();
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
          (value) => port.postMessage({ done: run, ...(message.method !== undefined ? { value } : {}) }),
          (error: unknown) => port.postMessage({ done: run, error: thrown(error) }),
        );
    },
  );
}
