/**
 * Handler modules: an ES module whose default export maps names to async functions.
 *
 *   export default {
 *     'App\\Jobs\\SendWelcomeEmail': async (job) => { … },                 // a job class
 *     'App\\Listeners\\SendShipmentNotification@handle': async (job) => { … }, // a queued listener
 *     'App\\Handlers\\Legacy@fire': async (job) => { … },                 // a string job (Queue::push('App\\Handlers\\Legacy', $data))
 *     'App\\Notifications\\InvoicePaid@mail': async (job) => { … },          // a queued notification, on one channel
 *     'App\\Notifications\\InvoicePaid': async (job) => { … },               // … on any channel
 *     'App\\Mail\\OrderShippedMail': async (job) => { … },                   // a queued mailable
 *   };
 *
 * A handler may carry a `failed(job, error)` function too, the way a Laravel job has `failed()`
 * (as a property of the function, or as `{ handle, failed }`), and JavaScript for the PHP methods
 * Node needs and cannot run (`JobMethods`): `uniqueId`, `backoff`, `retryUntil`, `tags`,
 * `displayName`, functions of the job.
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { QueueCache } from './cache.js';
import type { UniqueLockStore } from './locks/index.js';
import { toJS } from '../php/index.js';
import { describeError } from './errors.js';
import type { DecodedPayload, JobView, MailableView, ModelIdentifierView, NotificationView } from '../laravel/index.js';

/** A notifiable as a handler gets it: a model's identifier (class, id, …), or the notifiable's properties. */
export type Notifiable = ModelIdentifierView | Record<string, unknown>;

/** A queued notification's `job.args`: whom it is for, and the notification's properties. */
export type NotificationArgs = [notifiables: Notifiable[], notification: Record<string, unknown>];

/** A queued mailable's `job.args`: the mailable's properties (to, cc, subject, its own, …). */
export type MailableArgs = [mailable: Record<string, unknown>];

/** What a handler is given. */
export interface HandlerJob<Args extends unknown[] = unknown[]> {
  /** The class (or `Class@method`) this handler was found under. */
  name: string;
  /** The command's properties as plain JavaScript (`toJS`); for a string job, its data. */
  command: Record<string, unknown>;
  /**
   * As plain JavaScript: a queued listener's arguments (the event, usually); a notification's
   * notifiables and the notification (`NotificationArgs`); a mailable (`MailableArgs`); else [].
   */
  args: Args;
  /** This attempt's number, from 1. */
  attempts: number;
  uuid: string | undefined;
  id: string;
  queue: string;
  /** The job's payload as plain JSON, as Laravel's `$job->payload()` gives it (uuid, displayName, data, …). */
  payload: Record<string, unknown>;
  /** The payload decoded in full: the envelope in order, the lossless command, the profile, the raw string. */
  decoded: DecodedPayload;
  view: JobView;
  /** Fired when the job's timeout passes: stop work and return. */
  signal: AbortSignal;
  /** Puts the job back to run again after `seconds` (0 by default). */
  release(this: void, seconds?: number): Promise<void>;
  /**
   * Fails the job now, without retrying it: with an Error, or a string (the message of a
   * ManuallyFailedException, as Laravel 9+'s fail('reason')), or nothing (one with no message).
   */
  fail(this: void, error?: unknown): Promise<void>;
  /** Deletes the job: it is done, and will not run again. */
  delete(this: void): Promise<void>;
  /** The worker's cache: Laravel's Redis cache store, where withoutOverlapping() and rateLimited() keep their locks and counts. */
  cache: QueueCache | undefined;
  /**
   * The cache store's locks, when the worker was given a store (the database store's
   * `cache_locks`, or Redis on the lock connection): withoutOverlapping() takes its lock there,
   * where Laravel's Cache::lock() takes it.
   */
  locks?: UniqueLockStore;
}

/** What a handler keyed by a notification class gets. */
export interface NotificationJob extends HandlerJob<NotificationArgs> {
  view: NotificationView;
}

/** What a handler keyed by a mailable class gets. */
export interface MailableJob extends HandlerJob<MailableArgs> {
  view: MailableView;
}

/**
 * A handler's `failed(job, error)` hook, as a Laravel job's `failed(Throwable $e)`: run once the
 * job has failed for good (its tries used up, its timeout passed, or `job.fail()`), with what it
 * failed with (an Error, or whatever the handler threw).
 */
export type FailedHook<Job = HandlerJob> = (job: Job, error: unknown) => unknown;

/** What the methods of `JobMethods` are given: the job's class and its command's properties (`toJS`). */
export interface MethodJob {
  name: string;
  command: Record<string, unknown>;
}

/**
 * JavaScript for the PHP methods whose results Laravel writes into a payload or a lock's key,
 * for classes where `lqb shapes` could not translate them. Each is a function of the job, and
 * may return a promise. The worker uses `uniqueId` (a unique job's lock key); Node's producer
 * (`dispatch`) all five. What each returns is what the PHP method would.
 */
export interface JobMethods<Job = MethodJob> {
  /** ShouldBeUnique's uniqueId(): what the lock key ends with. */
  uniqueId?: (job: Job) => unknown;
  /** backoff(): seconds, one number or one per attempt. */
  backoff?: (job: Job) => number | number[] | string | null | Promise<number | number[] | string | null>;
  /** retryUntil(): when the job stops being retried, a Date or UNIX seconds. */
  retryUntil?: (job: Job) => Date | number | null | Promise<Date | number | null>;
  /** Horizon's tags(). */
  tags?: (job: Job) => string[] | Promise<string[]>;
  /** displayName(): the envelope's displayName (and, 12.41+, the lock key's name). */
  displayName?: (job: Job) => string | Promise<string>;
}

/** The names of `JobMethods`, as a handler carries them. */
export const JOB_METHODS = ['uniqueId', 'backoff', 'retryUntil', 'tags', 'displayName'] as const;

export type Handler = ((job: HandlerJob) => unknown) & { failed?: FailedHook } & JobMethods;
export type HandlerMap = Record<string, Handler>;

/**
 * A handler as a Laravel job class reads: `handle`, and the `failed` hook beside it. defineHandlers
 * (and a handlers module) take it in place of a function.
 */
export interface HandlerObject<Job = HandlerJob> {
  handle(job: Job): unknown;
  failed?: FailedHook<Job>;
}

/**
 * A handler's job with what a `Jobs` entry declares (`command`, or a listener's `args`) in place
 * of the untyped fields; the rest as HandlerJob has them.
 */
export type TypedHandlerJob<Entry> = Omit<HandlerJob, keyof Entry & keyof HandlerJob> & Entry;

export type TypedHandler<Entry> = ((job: TypedHandlerJob<Entry>) => unknown) & {
  failed?: FailedHook<TypedHandlerJob<Entry>>;
} & TypedJobMethods<Entry>;

/** JobMethods as a class of `Jobs` gives them: the job's command typed by its entry. */
export type TypedJobMethods<Entry> = JobMethods<{
  name: string;
  command: TypedHandlerJob<Entry>['command' & keyof TypedHandlerJob<Entry>];
}>;

/** A handler map checked against `Jobs`: only its names, each handler (a function, or `{ handle, failed }`) given its entry's types. */
export type TypedHandlerMap<Jobs> = {
  [Name in keyof Jobs]?: TypedHandler<Jobs[Name]> | (HandlerObject<TypedHandlerJob<Jobs[Name]>> & TypedJobMethods<Jobs[Name]>);
};

/** Keeps TypeScript from reading Jobs off the map: it comes from the type argument or the default. */
type NoInference<T> = [T][T extends unknown ? 0 : never];

/**
 * Declares a handler map. With the `Jobs` interface `lqb shapes --types` writes,
 *
 *   export default defineHandlers<Jobs>({
 *     'App\\Jobs\\ShipOrder': {
 *       handle: async (job) => { job.command.orderId; … },                  // job.command: App.Jobs.ShipOrder
 *       failed: async (job, error) => { … },                                // once it has failed for good
 *     },
 *     'App\\Listeners\\SendShipmentNotification@handle': async (job) => { job.args[0].orderId; },
 *   });
 *
 * each handler's `job.command` (a listener's `job.args`) has the class's type, and a name that is
 * not in `Jobs` is a compile error. Without a type argument it takes any HandlerMap. At run time
 * it returns the map with each `{ handle, failed }` made a function carrying `failed`.
 */
export function defineHandlers<Jobs extends object = Record<string, object>>(map: NoInference<TypedHandlerMap<Jobs>>): HandlerMap {
  const entries = Object.entries(map as Record<string, unknown>);
  if (!entries.some(([, entry]) => isHandlerObject(entry))) return map as unknown as HandlerMap;
  return Object.fromEntries(entries.map(([name, entry]) => [name, isHandlerObject(entry) ? handlerOf(entry) : entry])) as HandlerMap;
}

function isHandlerObject(entry: unknown): entry is HandlerObject<never> {
  return entry !== null && typeof entry === 'object' && typeof (entry as { handle?: unknown }).handle === 'function';
}

/** `{ handle, failed }` as the function the worker calls, `handle` bound to its object (so `this` works in it). */
function handlerOf(entry: HandlerObject<never>): Handler {
  const handler: Handler = (job) => entry.handle.call(entry, job as never);
  if (entry.failed !== undefined) {
    const failed = entry.failed;
    handler.failed = (job, error) => failed.call(entry, job as never, error);
  }
  // The PHP methods' JavaScript goes along, bound to the object as handle is.
  for (const method of JOB_METHODS) {
    const given = (entry as JobMethods)[method];
    if (typeof given === 'function')
      (handler as JobMethods)[method] = (job: MethodJob) => (given as (job: MethodJob) => never).call(entry, job);
  }
  return handler;
}

/** Loads a handlers module (a path or file URL) and checks its shape. */
export async function loadHandlers(file: string): Promise<HandlerMap> {
  return checkedHandlers(file, defaultExport(await importHandlersModule(file)));
}

/**
 * A module's default export. CommonJS comes to import() as module.exports; what TypeScript (or
 * Babel) compiles `export default` to in CommonJS has it under `.default`, beside `__esModule`.
 */
export function defaultExport(module: { default?: unknown }): unknown {
  const exported = module.default as { __esModule?: unknown; default?: unknown } | undefined;
  return exported !== null && typeof exported === 'object' && exported.__esModule === true ? exported.default : exported;
}

/**
 * The module at `file`; an error while it loads (a syntax error, a throw at its top level, an
 * import it cannot resolve) names the file, since the error itself often does not.
 */
export async function importHandlersModule(file: string): Promise<{ default?: unknown }> {
  const url = file.startsWith('file:') ? file : pathToFileURL(resolve(file)).href;
  try {
    return (await import(url)) as { default?: unknown };
  } catch (error) {
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new Error(`${file} could not be loaded: ${reason}`, { cause: error });
  }
}

/** A default export that maps names to functions, as it was given; anything else is refused, naming the file. */
export function checkedHandlers(file: string, handlers: unknown): HandlerMap {
  // An array's indexes are no job class names: a list of handlers is a mistake for a map of them.
  if (handlers === null || typeof handlers !== 'object' || Array.isArray(handlers)) {
    throw new Error(`${file} must export default an object mapping job classes to handler functions`);
  }
  // A Map's entries are no properties: taken as it is, it would look like a map of nothing.
  if (handlers instanceof Map)
    throw new Error(
      `${file} must export default a plain object mapping job classes to handler functions, not a Map (Object.fromEntries(map) makes one)`,
    );
  const entries = Object.entries(handlers);
  // No handler at all would fail every job the worker takes, for want of one.
  if (entries.length === 0) throw new Error(`${file} exports default an object with no handlers: name at least one job class`);
  for (const [name, handler] of entries) {
    if (typeof handler !== 'function' && !isHandlerObject(handler))
      throw new Error(`${file}: the handler for ${name} is not a function (or { handle, failed }) but ${kindOf(handler)}`);
    for (const method of JOB_METHODS) {
      const given = (handler as JobMethods)[method];
      if (given !== undefined && typeof given !== 'function')
        throw new Error(`${file}: the handler for ${name} carries ${method}, which must be a function of the job, not ${kindOf(given)}`);
    }
  }
  return defineHandlers(handlers as TypedHandlerMap<Record<string, object>>);
}

/** What a value is, for a message: `a number`, `an object`, `undefined`. */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  const type = Array.isArray(value) ? 'array' : typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/**
 * The names a payload can be handled under, most specific first: a listener as
 * `Class@method` (and as `Class` when the method is `handle`), a job by its command class,
 * a string job by its `Class@method` (`fire` when it names none, and then also as `Class`),
 * a queued notification as `Notification@channel` (when it goes out on one channel, as
 * Laravel queues them), then `Notification`, then Laravel's wrapper class; a queued mailable
 * as its class, then the wrapper.
 */
export function handlerNames(payload: DecodedPayload, view: JobView): string[] {
  if (view.kind === 'notification' && view.notificationClass) {
    const channel = view.channelNames.length === 1 ? [`${view.notificationClass}@${view.channelNames[0]}`] : [];
    return [...channel, view.notificationClass, payload.name];
  }
  if (view.kind === 'mailable' && view.mailableClass) return [view.mailableClass, payload.name];
  if (view.kind === 'listener')
    return view.method === 'handle' ? [`${view.listener}@handle`, view.listener] : [`${view.listener}@${view.method}`];
  if (view.kind === 'string') {
    // Laravel calls `fire` on a string job that names no method (Str::parseCallback's default),
    // so the bare class stands for `Class@fire` here.
    const at = view.handler.indexOf('@');
    const [cls, method] = at < 0 ? [view.handler, 'fire'] : [view.handler.slice(0, at), view.handler.slice(at + 1)];
    return method === 'fire' ? [`${cls}@fire`, cls] : [`${cls}@${method}`];
  }
  return [payload.name];
}

/**
 * The seconds `job.release(seconds)` was given, as a number: a numeric string is taken as PHP
 * takes one. Anything else is refused with a TypeError (which the handler then throws, so the job
 * is released by the rules or failed) rather than scored NaN, which Redis refuses after the job
 * has left the queue, or Infinity, which would keep it in :delayed for ever.
 */
export function releaseDelay(seconds: unknown): number {
  const value = typeof seconds === 'string' && seconds.trim() !== '' ? Number(seconds) : seconds;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  throw new TypeError(
    `job.release(seconds): seconds must be a finite number, not ${typeof seconds === 'string' ? JSON.stringify(seconds) : describeError(seconds)}`,
  );
}

/**
 * The classes a worker with these handlers takes when it shares its queues with PHP's: each
 * key's class (`Class@method` is a listener's or a string job's class). A listener handled for
 * one method is taken for all of them: its method is inside the command, which the queue does not
 * read, so one of another method is given back at run time.
 */
export function takenClasses(handlers: HandlerMap): string[] {
  return [...new Set(Object.keys(handlers).map((key) => key.split('@')[0]!))];
}

/** The job's name in events and failures: the envelope's displayName, else its class. */
export function jobName(payload: DecodedPayload): string {
  return String(payload.envelope.displayName ?? payload.name);
}

/** `job.args` for a payload's view: see `HandlerJob.args`. */
export function argsOf(view: JobView): unknown[] {
  switch (view.kind) {
    case 'listener':
      return view.arguments.map((arg) => toJS(arg));
    case 'notification':
      return [
        view.notifiableList.map((n) => (n.model ? n.model : (toJS(n.value) as Record<string, unknown>))),
        view.notification === undefined ? {} : (toJS(view.notification) as Record<string, unknown>),
      ] satisfies NotificationArgs;
    case 'mailable':
      return [view.mailable === undefined ? {} : (toJS(view.mailable) as Record<string, unknown>)] satisfies MailableArgs;
    default:
      return [];
  }
}
