/**
 * What Horizon's queue works out from the job object it pushes (its JobPayload::prepare and
 * Tags::for), here from the command as PHP serialized it: the job's type, its tags, and whether
 * it is silenced.
 *
 * Horizon calls the job's `tags()` when it has one; Node cannot run PHP, so the tags a handler
 * or `dispatch` gives stand in for it. Otherwise the tags are `Class:key` of each Eloquent model
 * held by a property of the target (the job; an event's listener: the event; a mailable; a
 * notification). Under SerializesModels the serialized command holds a ModelIdentifier where
 * the job held the model, so its class and key are read from that.
 */
import { PhpArray, PhpObject, deref, toJS, type PhpValue } from '../php/index.js';
import { asEloquentModel, asModelIdentifier } from '../laravel/values.js';
import { CALL_QUEUED_LISTENER, SEND_QUEUED_MAILABLE, SEND_QUEUED_NOTIFICATIONS } from '../laravel/views.js';
import { phpString } from './payload.js';

export const BROADCAST_EVENT = 'Illuminate\\Broadcasting\\BroadcastEvent';
const ELOQUENT_COLLECTION = 'Illuminate\\Database\\Eloquent\\Collection';

/** Horizon's type for a command class: broadcast, event (a queued listener), mail, notification, else job. */
export function horizonType(commandName: string): string {
  switch (commandName) {
    case BROADCAST_EVENT:
      return 'broadcast';
    case CALL_QUEUED_LISTENER:
      return 'event';
    case SEND_QUEUED_MAILABLE:
      return 'mail';
    case SEND_QUEUED_NOTIFICATIONS:
      return 'notification';
    default:
      return 'job';
  }
}

/**
 * The class `horizon.silenced` is matched against: the event a broadcast sends, the listener
 * a queued listener calls, the mailable, the notification, else the job's own class.
 */
export function underlyingClass(command: PhpValue | undefined, commandName: string): string {
  const object = command === undefined ? undefined : deref(command);
  if (!(object instanceof PhpObject)) return commandName;
  switch (object.className) {
    case BROADCAST_EVENT:
      return classOf(object.get('event')) ?? commandName;
    case CALL_QUEUED_LISTENER: {
      const listener = object.get('class');
      return listener === undefined ? commandName : phpString(toJS(listener));
    }
    case SEND_QUEUED_MAILABLE:
      return classOf(object.get('mailable')) ?? commandName;
    case SEND_QUEUED_NOTIFICATIONS:
      return classOf(object.get('notification')) ?? commandName;
    default:
      return object.className;
  }
}

/**
 * Tags::for: the explicit tags when there are any, else the models' tags. A queued listener's
 * tags are its listener's and its event's together (each explicit, else its models); a
 * listener object Horizon makes without its constructor holds no models, so without explicit
 * tags that is the event's models.
 */
export function horizonTags(command: PhpValue | undefined, explicit: readonly string[] = []): string[] {
  const object = command === undefined ? undefined : deref(command);
  if (object instanceof PhpObject && object.className === CALL_QUEUED_LISTENER) {
    return unique([...explicit, ...modelTags(eventOf(object))]);
  }
  if (explicit.length > 0) return unique(explicit);
  return object instanceof PhpObject ? modelTags(targetOf(object)) : [];
}

/** The object whose properties Horizon looks through for models. */
function targetOf(command: PhpObject): PhpValue | undefined {
  switch (command.className) {
    case BROADCAST_EVENT:
      return command.get('event');
    case SEND_QUEUED_MAILABLE:
      return command.get('mailable');
    case SEND_QUEUED_NOTIFICATIONS:
      return command.get('notification');
    default:
      return command;
  }
}

/** A queued listener's event: the first of its arguments when that is an object. */
function eventOf(listener: PhpObject): PhpValue | undefined {
  const data = deref(listener.get('data') ?? null);
  if (!(data instanceof PhpArray)) return undefined;
  const first = data.get(0);
  return first !== undefined && deref(first) instanceof PhpObject ? first : undefined;
}

/** `Class:key` of each model a property of the target holds (one per model of a collection), each tag once. */
function modelTags(target: PhpValue | undefined): string[] {
  const object = target === undefined ? undefined : deref(target);
  if (!(object instanceof PhpObject)) return [];
  const tags: string[] = [];
  for (const value of object.props.values) {
    // Only an object is a model or a collection of them (Horizon looks no deeper, not into
    // arrays): most properties are scalars or arrays, skipped before the model checks.
    if (value === null || typeof value !== 'object' || !(deref(value) instanceof PhpObject)) continue;
    tags.push(...tagsOfValue(value));
  }
  return tags.length > 1 ? unique(tags) : tags;
}

function tagsOfValue(value: PhpValue): string[] {
  const identifier = asModelIdentifier(value);
  if (identifier) {
    if (identifier.class === null) return [];
    const ids = Array.isArray(identifier.id) ? identifier.id : [identifier.id];
    return ids.map((id) => `${identifier.class}:${phpString(id)}`);
  }
  const object = deref(value);
  if (object instanceof PhpObject && object.className === ELOQUENT_COLLECTION) {
    const items = deref(object.get('items') ?? null);
    return items instanceof PhpArray ? items.values.flatMap((item) => modelTag(item)) : [];
  }
  return modelTag(value);
}

/** A model held as itself (a job without SerializesModels): its class and primary key. */
function modelTag(value: PhpValue): string[] {
  const model = asEloquentModel(value);
  return model ? [`${model.class}:${phpString(model.id)}`] : [];
}

function classOf(value: PhpValue | undefined): string | undefined {
  const object = value === undefined ? undefined : deref(value);
  return object instanceof PhpObject ? object.className : undefined;
}

function unique(tags: readonly string[]): string[] {
  return [...new Set(tags)];
}
