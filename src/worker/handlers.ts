/**
 * Handler modules: an ES module whose default export maps names to async functions.
 *
 *   export default {
 *     'App\\Jobs\\SendWelcomeEmail': async (job) => { … },                 // a job class
 *     'App\\Listeners\\SendShipmentNotification@handle': async (job) => { … }, // a queued listener
 *     'App\\Handlers\\Legacy@fire': async (job) => { … },                 // a string job (Queue::push('App\\Handlers\\Legacy', $data))
 *   };
 *
 * A handler may carry a `failed(job, error)` function too, the way a Laravel job has `failed()`.
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { DecodedPayload, JobView } from '../laravel/index.js';
import type { QueueCache } from './cache.js';

/** What a handler is given. */
export interface HandlerJob {
  /** The class (or `Class@method`) this handler was found under. */
  name: string;
  /** The command's properties as plain JavaScript (`toJS`); for a string job, its data. */
  command: Record<string, unknown>;
  /** A queued listener's arguments (the event, usually) as plain JavaScript. */
  args: unknown[];
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
  release(seconds?: number): Promise<void>;
  /** Fails the job now, with a reason, without retrying it. */
  fail(error?: unknown): Promise<void>;
  /** Deletes the job: it is done, and will not run again. */
  delete(): Promise<void>;
  /** The worker's cache: Laravel's Redis cache store, where withoutOverlapping() and rateLimited() keep their locks and counts. */
  cache: QueueCache | undefined;
}

export type Handler = ((job: HandlerJob) => unknown) & { failed?: (job: HandlerJob, error: unknown) => unknown };
export type HandlerMap = Record<string, Handler>;

/**
 * A handler's job with what a `Jobs` entry declares (`command`, or a listener's `args`) in place
 * of the untyped fields; the rest as HandlerJob has them.
 */
export type TypedHandlerJob<Entry> = Omit<HandlerJob, keyof Entry & keyof HandlerJob> & Entry;

export type TypedHandler<Entry> = ((job: TypedHandlerJob<Entry>) => unknown) & { failed?: (job: TypedHandlerJob<Entry>, error: unknown) => unknown };

/** A handler map checked against `Jobs`: only its names, each handler given its entry's types. */
export type TypedHandlerMap<Jobs> = { [Name in keyof Jobs]?: TypedHandler<Jobs[Name]> };

/** Keeps TypeScript from reading Jobs off the map: it comes from the type argument or the default. */
type NoInference<T> = [T][T extends unknown ? 0 : never];

/**
 * Declares a handler map. With the `Jobs` interface `lqb shapes --types` writes,
 *
 *   export default defineHandlers<Jobs>({
 *     'App\\Jobs\\ShipOrder': async (job) => { job.command.orderId; … },        // job.command: App.Jobs.ShipOrder
 *     'App\\Listeners\\SendShipmentNotification@handle': async (job) => { job.args[0].orderId; },
 *   });
 *
 * each handler's `job.command` (a listener's `job.args`) has the class's type, and a name that is
 * not in `Jobs` is a compile error. Without a type argument it takes any HandlerMap. At run time
 * it returns the map unchanged.
 */
export function defineHandlers<Jobs extends object = Record<string, object>>(map: NoInference<TypedHandlerMap<Jobs>>): HandlerMap {
  return map as unknown as HandlerMap;
}

/** Loads a handlers module (a path or file URL) and checks its shape. */
export async function loadHandlers(file: string): Promise<HandlerMap> {
  const url = file.startsWith('file:') ? file : pathToFileURL(resolve(file)).href;
  const module = (await import(url)) as { default?: unknown };
  const handlers = module.default;
  if (handlers === null || typeof handlers !== 'object') {
    throw new Error(`${file} must export default an object mapping job classes to handler functions`);
  }
  for (const [name, handler] of Object.entries(handlers)) {
    if (typeof handler !== 'function') throw new Error(`${file}: the handler for ${name} is not a function`);
  }
  return handlers as HandlerMap;
}

/**
 * The names a payload can be handled under, most specific first: a listener as
 * `Class@method` (and as `Class` when the method is `handle`), a job by its command class,
 * a string job by its `Class@method` (`fire` when it names none, and then also as `Class`).
 */
export function handlerNames(payload: DecodedPayload, view: JobView): string[] {
  if (view.kind === 'listener') return view.method === 'handle' ? [`${view.listener}@handle`, view.listener] : [`${view.listener}@${view.method}`];
  if (view.kind === 'string') {
    // Laravel calls `fire` on a string job that names no method (Str::parseCallback's default),
    // so the bare class stands for `Class@fire` here.
    const at = view.handler.indexOf('@');
    const [cls, method] = at < 0 ? [view.handler, 'fire'] : [view.handler.slice(0, at), view.handler.slice(at + 1)];
    return method === 'fire' ? [`${cls}@fire`, cls] : [`${cls}@${method}`];
  }
  return [payload.name];
}
