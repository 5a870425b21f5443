/**
 * Typed views of what Laravel puts in `data.command`: which kind of job it is, and the fields
 * that kind carries, read from the lossless PHP value without changing it.
 */
import { PhpArray, PhpObject, deref, demangle, toJS, unserialize, type PhpValue, type Visibility } from '../php/index.js';
import { asCollection, asModelIdentifier, type ModelIdentifierView } from './values.js';

/** The public properties Laravel's Queueable trait (and InteractsWithQueue's `job`) add to a command. */
export interface QueueableFields {
  connection: PhpValue | undefined;
  queue: PhpValue | undefined;
  delay: PhpValue | undefined;
  afterCommit: PhpValue | undefined;
  middleware: PhpValue | undefined;
  /** Each following job of a chain, serialized by Laravel as a string of its own. */
  chained: PhpValue | undefined;
  chainConnection: PhpValue | undefined;
  chainQueue: PhpValue | undefined;
  chainCatchCallbacks: PhpValue | undefined;
}

export const QUEUEABLE_FIELDS = [
  'connection',
  'queue',
  'delay',
  'afterCommit',
  'middleware',
  'chained',
  'chainConnection',
  'chainQueue',
  'chainCatchCallbacks',
] as const;

/** One property as PHP stored it. */
export interface PropertyView {
  name: string;
  visibility: Visibility;
  /** For a private property, the class that declares it. */
  declaringClass?: string;
  value: PhpValue;
}

interface CommandView {
  className: string;
  /** Every property, visibility kept, in the order PHP wrote them. */
  properties: PropertyView[];
  queueable: QueueableFields;
  /** The chained jobs, each decoded in turn (a string that does not decode stays a string). */
  chain: (JobView | string)[];
  /** The command as plain JavaScript (`toJS`). */
  toJS(): Record<string, unknown>;
}

/** An application's own job class. */
export interface UserJobView extends CommandView {
  kind: 'job';
}

/** `Illuminate\Events\CallQueuedListener`: a queued event listener. */
export interface ListenerView extends CommandView {
  kind: 'listener';
  listener: string;
  method: string;
  /** The arguments the listener is called with: usually the event object. */
  arguments: PhpValue[];
  tries: PhpValue | undefined;
  maxExceptions: PhpValue | undefined;
  backoff: PhpValue | undefined;
  retryUntil: PhpValue | undefined;
  timeout: PhpValue | undefined;
}

/**
 * One notifiable of a queued notification: a model as the identifier SerializesModels left
 * (one id each), or anything else (an AnonymousNotifiable, a plain object) as PHP stored it.
 */
export type NotifiableView = { model: ModelIdentifierView; value?: undefined } | { model?: undefined; value: PhpValue };

/** `Illuminate\Notifications\SendQueuedNotifications`: one notification, for its notifiables, on its channels. */
export interface NotificationView extends CommandView {
  kind: 'notification';
  /** As stored: a ModelIdentifier of the models' collection, or a Collection of other notifiables. */
  notifiables: PhpValue | undefined;
  notification: PhpValue | undefined;
  channels: PhpValue | undefined;
  /** The notification's class (what displayName and the log show); '' when there is none. */
  notificationClass: string;
  /** The channels this job sends on; Laravel queues one job per notifiable and channel, so usually one. */
  channelNames: string[];
  /** Each notifiable, a model per id. */
  notifiableList: NotifiableView[];
}

/** `Illuminate\Mail\SendQueuedMailable`: a queued mailable. */
export interface MailableView extends CommandView {
  kind: 'mailable';
  mailable: PhpValue | undefined;
  /** The mailable's class (what displayName and the log show); '' when there is none. */
  mailableClass: string;
}

/** `Illuminate\Queue\CallQueuedClosure`: PHP code in the payload, which only PHP can run. */
export interface ClosureView extends CommandView {
  kind: 'closure';
  runnable: false;
  reason: string;
}

/** A string job, `Queue::push('Class@method', $data)`. */
export interface StringJobView {
  kind: 'string';
  handler: string;
  data: unknown;
}

/** A ShouldBeEncrypted command not yet decrypted. */
export interface EncryptedView {
  kind: 'encrypted';
  commandName: string;
}

export type JobView = UserJobView | ListenerView | NotificationView | MailableView | ClosureView | StringJobView | EncryptedView;

export const CALL_QUEUED_LISTENER = 'Illuminate\\Events\\CallQueuedListener';
export const SEND_QUEUED_NOTIFICATIONS = 'Illuminate\\Notifications\\SendQueuedNotifications';
export const SEND_QUEUED_MAILABLE = 'Illuminate\\Mail\\SendQueuedMailable';
export const CALL_QUEUED_CLOSURE = 'Illuminate\\Queue\\CallQueuedClosure';

/** The typed view of a decoded command. */
export function viewCommand(command: PhpValue): JobView {
  const object = deref(command);
  if (!(object instanceof PhpObject)) {
    return { kind: 'string', handler: '', data: toJS(command) };
  }
  switch (object.className) {
    case CALL_QUEUED_LISTENER: {
      const data = deref(object.get('data') ?? null);
      return withShared(object, {
        kind: 'listener' as const,
        listener: String(object.get('class') ?? ''),
        method: String(object.get('method') ?? 'handle'),
        arguments: data instanceof PhpArray ? data.values.map(deref) : [],
        tries: object.get('tries'),
        maxExceptions: object.get('maxExceptions'),
        backoff: object.get('backoff'),
        retryUntil: object.get('retryUntil'),
        timeout: object.get('timeout'),
      });
    }
    case SEND_QUEUED_NOTIFICATIONS: {
      const notification = object.get('notification');
      const channels = object.get('channels');
      const notifiables = object.get('notifiables');
      return withShared(object, {
        kind: 'notification' as const,
        notifiables,
        notification,
        channels,
        notificationClass: classOf(notification),
        channelNames: channelsOf(channels),
        notifiableList: notifiablesOf(notifiables),
      });
    }
    case SEND_QUEUED_MAILABLE: {
      const mailable = object.get('mailable');
      return withShared(object, { kind: 'mailable' as const, mailable, mailableClass: classOf(mailable) });
    }
    case CALL_QUEUED_CLOSURE:
      return withShared(object, {
        kind: 'closure' as const,
        runnable: false as const,
        reason: 'a queued closure is PHP code; only a PHP worker can run it',
      });
    default:
      // The common case, made without a closure: a worker makes one per job.
      return withShared(object, { kind: 'job' as const });
  }
}

/** The shared view with the kind's own fields: Object.assign keeps its lazy getters, which a spread would lose. */
function withShared<T extends object>(object: PhpObject, extra: T): SharedView & T {
  return Object.assign(new SharedView(object), extra);
}

/**
 * The parts every command view shares. Each is worked out on first use and kept: a worker
 * that only needs the class name never pays for the rest. A class rather than an object
 * literal with getters: V8 gives each such literal a shape of its own, which a worker making
 * one per job pays for in garbage collection.
 */
class SharedView implements CommandView {
  readonly className: string;
  readonly #object: PhpObject;
  #properties: PropertyView[] | undefined;
  #queueable: QueueableFields | undefined;
  #chain: (JobView | string)[] | undefined;

  constructor(object: PhpObject) {
    this.className = object.className;
    this.#object = object;
  }

  get properties(): PropertyView[] {
    const object = this.#object;
    return (this.#properties ??= object.props.keys.map((key, i): PropertyView => {
      const { name, visibility, declaringClass } = demangle(key);
      const value = object.props.values[i]!;
      return declaringClass === undefined ? { name, visibility, value } : { name, visibility, declaringClass, value };
    }));
  }

  get queueable(): QueueableFields {
    return (this.#queueable ??= Object.fromEntries(
      QUEUEABLE_FIELDS.map((field) => [field, this.#object.get(field)]),
    ) as unknown as QueueableFields);
  }

  get chain(): (JobView | string)[] {
    return (this.#chain ??= chainOf(this.queueable.chained));
  }

  toJS(): Record<string, unknown> {
    return toJS(this.#object) as Record<string, unknown>;
  }
}

/** Laravel stores each following job of a chain as serialize($job): decode each in turn. */
function chainOf(chained: PhpValue | undefined): (JobView | string)[] {
  const list = chained === undefined ? null : deref(chained);
  if (!(list instanceof PhpArray)) return [];
  return list.values.map((entry) => {
    const text = deref(entry);
    if (typeof text !== 'string') return String(text);
    try {
      return viewCommand(unserialize(text));
    } catch {
      return text;
    }
  });
}

function classOf(value: PhpValue | undefined): string {
  const object = value === undefined ? undefined : deref(value);
  return object instanceof PhpObject ? object.className : '';
}

/** `channels` is a list of channel names (or, when built by hand, classes): strings only. */
function channelsOf(value: PhpValue | undefined): string[] {
  const list = value === undefined ? undefined : deref(value);
  if (!(list instanceof PhpArray)) return [];
  return list.values.map(deref).filter((v): v is string => typeof v === 'string');
}

/**
 * SendQueuedNotifications wraps its notifiables in a collection: models become one
 * ModelIdentifier of the collection (ids as a list), others stay a Collection of their values.
 */
function notifiablesOf(value: PhpValue | undefined): NotifiableView[] {
  if (value === undefined) return [];
  const models = asModelIdentifier(value);
  if (models) {
    if (!models.isCollection) return [{ model: models }];
    const ids = models.id as unknown[];
    return ids.map((id) => {
      // Each as the identifier of that one model (9.26+: whose collectionClass is null).
      const one: ModelIdentifierView = { ...models, id, isCollection: false };
      if (models.collectionClass !== undefined) one.collectionClass = null;
      return { model: one };
    });
  }
  const collection = asCollection(value);
  const items = collection ? collection.items.values : [value];
  return items.map((item) => {
    const model = asModelIdentifier(item);
    return model ? { model } : { value: deref(item) };
  });
}
