/**
 * A chain's next link, as Laravel's Queueable::dispatchNextJobInChain makes it when a chained job
 * succeeds: the first of `chained` unserialized, the rest of the chain handed on to it, its
 * connection and queue defaulting to the chain's, and the envelope written around it as a
 * dispatch writes one. The worker only pushes what this returns.
 */
import { PhpArray, PhpObject, deref, toJS, unserialize, type PhpValue } from '../php/index.js';
import { buildPayload, type PayloadOptions } from './builders.js';
import type { DecodedPayload } from './payload.js';

/** The link to push: its envelope, the queue it names (if any) and its delay in seconds. */
export interface NextLink {
  raw: string;
  /** The queue the link names, else the chain's; undefined: the connection's own queue. */
  queue: string | undefined;
  /** Seconds to wait before it runs (its `delay`); 0 pushes it at once. */
  delay: number;
}

/** What the app's shapes say of a link's class, in place of its own properties (see shapes/command.ts). */
export type LinkEnvelope = Pick<
  PayloadOptions,
  'maxTries' | 'timeout' | 'backoff' | 'maxExceptions' | 'failOnTimeout' | 'retryUntil' | 'displayName' | 'encrypter'
>;

export interface NextLinkOptions {
  /** The connection the pushing worker serves: a link that names another is an error, never sent elsewhere by mistake. */
  connection: string;
  /** The envelope fields the link's class declares, when its shape is known; else its own properties give them. */
  shaped?: (next: PhpObject) => LinkEnvelope | undefined;
}

/** The next link of `command`'s chain, or undefined when it has none. Throws when the link cannot go where it says. */
export function nextInChain(payload: DecodedPayload, command: PhpValue | undefined, options: NextLinkOptions): NextLink | undefined {
  const current = command === undefined ? undefined : deref(command);
  if (!(current instanceof PhpObject)) return undefined;
  const chained = deref(current.get('chained') ?? null);
  if (!(chained instanceof PhpArray) || chained.size === 0) return undefined;
  const [first, ...rest] = chained.values.map((entry) => deref(entry));
  const next = deref(unserialize(first as string | Uint8Array));
  if (!(next instanceof PhpObject)) return undefined;
  handOnChain(current, next, rest);
  const connection = deref(next.get('connection') ?? null);
  if (connection && connection !== options.connection) {
    throw new Error(
      `the next job in the chain goes to connection ${JSON.stringify(connection)}, and this worker serves only ${JSON.stringify(options.connection)}`,
    );
  }
  const own = (prop: string) => {
    const value = next.get(prop);
    return value === undefined ? null : (toJS(value) as never);
  };
  const shaped = options.shaped?.(next);
  const built = buildPayload(next, {
    profile: payload.profile,
    ...(shaped ?? {
      maxTries: own('tries'),
      timeout: own('timeout'),
      backoff: own('backoff'),
      maxExceptions: own('maxExceptions'),
      failOnTimeout: own('failOnTimeout') ?? false,
    }),
  });
  const queue = deref(next.get('queue') ?? null);
  const delay = toJS(next.get('delay') ?? null);
  return {
    raw: built.raw,
    queue: typeof queue === 'string' && queue ? queue : undefined,
    delay: typeof delay === 'number' && delay > 0 ? delay : 0,
  };
}

/** The rest of the chain goes with the next link, its connection and queue defaulting to the chain's. */
function handOnChain(current: PhpObject, next: PhpObject, rest: PhpValue[]): void {
  const chainQueue = current.get('chainQueue') ?? null;
  const chainConnection = current.get('chainConnection') ?? null;
  setPublic(next, 'chained', PhpArray.list(rest));
  setPublic(next, 'connection', deref(next.get('connection') ?? null) || chainConnection);
  setPublic(next, 'queue', deref(next.get('queue') ?? null) || chainQueue);
  setPublic(next, 'chainConnection', chainConnection);
  setPublic(next, 'chainQueue', chainQueue);
  setPublic(next, 'chainCatchCallbacks', current.get('chainCatchCallbacks') ?? null);
}

/** Sets a property by its plain name, in place when the object has it, publicly otherwise. */
function setPublic(object: PhpObject, name: string, value: PhpValue): void {
  const { keys } = object.props;
  const at = keys.findIndex((key) => key === name || (typeof key === 'string' && key.endsWith(`\0${name}`)));
  if (at >= 0) object.props.values[at] = value;
  else object.props.set(name, value);
}
