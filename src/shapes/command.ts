/**
 * Checked dispatch: a command written as its class's own serialize() would write it, from the
 * class's shape and plain JavaScript values. Each property is mangled by its visibility and
 * declaring class, typed as declared (an int stays an int, a float a float, a model becomes the
 * ModelIdentifier SerializesModels writes), defaulted as PHP would leave it; a property the class
 * does not declare, a required one missing, or a value of the wrong type is refused before
 * anything is pushed, naming the class and the property.
 */
import { PhpArray, PhpFloat, PhpObject, formatPhpFloat, fromJS, mangle, serialize, unserialize, type PhpValue } from '../php/index.js';
import { isInt64 } from '../php/int64.js';
import {
  Encrypter,
  buildDate,
  buildModelIdentifier,
  buildPayload,
  type BuiltPayload,
  type LaravelProfile,
  type PayloadOptions,
} from '../laravel/index.js';
import type { ClassShape, PropertyShape, ShapesFile } from './shape.js';
import { backoffOfValue, evaluate, retryUntilOfValue, translatedMethod, type ExpressionValue } from './expression.js';

/** A value the shape refuses, or a class it does not know: one line, naming class and property. */
export class ShapeError extends Error {
  override name = 'ShapeError';
}

export const SHOULD_BE_ENCRYPTED = 'Illuminate\\Contracts\\Queue\\ShouldBeEncrypted';
export const SERIALIZES_MODELS = 'Illuminate\\Queue\\SerializesModels';

/** What a checked dispatch needs besides the values. */
export interface ShapedCommandOptions {
  /** The layout to write (from the shapes file's Laravel version unless given). */
  profile?: LaravelProfile;
  /** Queueable's values set as onQueue(), delay() and the like set them (queue, delay, connection). */
  queueable?: Record<string, unknown>;
}

/** The command, and what its class declares for the envelope. */
export interface ShapedCommand {
  command: PhpObject;
  shape: ClassShape;
  /** `$tries`, `$timeout`, `$maxExceptions`, `$failOnTimeout`, `$backoff` as the command holds them, as Laravel 8's createPayloadArray reads them. */
  envelope: {
    maxTries: number | null;
    timeout: number | null;
    maxExceptions: number | null;
    failOnTimeout: boolean;
    backoff: string | null;
    retryUntil: number | null;
  };
  /** The command's own queue (onQueue(), or the declared `$queue`), if any. */
  queue: string | null;
  /** The class is ShouldBeEncrypted: the command must be encrypted with the APP_KEY. */
  encrypted: boolean;
  /** PHP methods whose results Laravel writes into the payload and Node cannot call (backoff(), retryUntil()). */
  notRun: string[];
}

/** What a checked payload takes beside the values: the envelope's own settings win over the declared ones. */
export interface ShapedPayloadOptions extends ShapedCommandOptions, Pick<PayloadOptions, 'uuid' | 'id' | 'createdAt'> {
  /** Encrypts a ShouldBeEncrypted command; without one such a class is refused. */
  encrypter?: Encrypter;
  maxTries?: number | null;
  timeout?: number | null;
  backoff?: number | number[] | string | null;
  /** UNIX seconds after which the job is not retried (what a retryUntil() gives). */
  retryUntil?: number | null;
  /** The envelope's displayName (what a displayName() gives); else the class's translated displayName(), else its name. */
  displayName?: string;
  /** 12.11+: the dispatch delay in seconds, written into the envelope. */
  delay?: number | null;
  /** Said once per payload: PHP methods whose results Laravel writes and Node cannot call. */
  onNotRun?: (className: string, methods: string[]) => void;
  /** Keys a `Queue::createPayloadUsing` hook adds (a trace context, say), in order. */
  extra?: PayloadOptions['extra'];
  /** The queue driver: the database's payload has no `id` or `attempts` (buildPayload). */
  driver?: PayloadOptions['driver'];
}

/**
 * A job's payload checked against its shape, as that Laravel version's dispatch writes it: the
 * command as its serialize() writes it, the declared tries, backoff, timeout, maxExceptions and
 * failOnTimeout in the envelope (the options win), encrypted when the class is ShouldBeEncrypted.
 * Returns the queue the command names (onQueue() or its declared `$queue`), if any.
 */
export function buildShapedPayload(
  shapes: ShapesFile,
  className: string,
  values: Record<string, unknown>,
  options: ShapedPayloadOptions = {},
): BuiltPayload & { queue: string | null } {
  const profile = options.profile ?? profileOfShapes(shapes) ?? '8';
  const shaped = shapedCommand(shapes, className, values, { ...options, profile });
  if (shaped.encrypted && !options.encrypter)
    throw new ShapeError(
      `${className} is ShouldBeEncrypted: give the APP_KEY (--key, APP_KEY or --env) to encrypt it with; it is never pushed in clear text`,
    );
  const displayName = options.displayName ?? translatedDisplayName(shaped.shape, shaped.command);
  // What the caller gave is not missing.
  const given = new Set([options.backoff != null ? 'backoff()' : '', options.retryUntil != null ? 'retryUntil()' : '']);
  const notRun = [
    ...shaped.notRun.filter((method) => !given.has(method)),
    ...(shaped.shape.methods.includes('displayName') && displayName === undefined ? ['displayName()'] : []),
  ];
  if (notRun.length > 0) options.onNotRun?.(className, notRun);
  const declared = shaped.envelope;
  const payload: PayloadOptions = {
    profile,
    maxTries: options.maxTries ?? declared.maxTries,
    timeout: options.timeout ?? declared.timeout,
    backoff: options.backoff ?? declared.backoff,
    maxExceptions: declared.maxExceptions,
    failOnTimeout: declared.failOnTimeout,
    retryUntil: options.retryUntil ?? declared.retryUntil,
    ...(displayName !== undefined ? { displayName } : {}),
    delay: (profile === '12' || profile === '13') && options.delay ? options.delay : null,
    ...(shaped.encrypted ? { encrypter: options.encrypter } : {}),
    ...(options.extra ? { extra: options.extra } : {}),
    ...(options.driver ? { driver: options.driver } : {}),
    ...(options.uuid !== undefined ? { uuid: options.uuid } : {}),
    ...(options.id !== undefined ? { id: options.id } : {}),
    ...(options.createdAt !== undefined ? { createdAt: options.createdAt } : {}),
  };
  // Object.assign, not a spread, which would read (and so encode) the payload's text now.
  return Object.assign(buildPayload(shaped.command, payload), { queue: shaped.queue });
}

/**
 * The shape of a class when the shapes file has it. Own keys only: a class named `constructor`
 * or `toString` must not find Object.prototype's members.
 */
export function findShape(shapes: ShapesFile | undefined, className: string): ClassShape | undefined {
  return shapes && Object.hasOwn(shapes.classes, className) ? shapes.classes[className] : undefined;
}

/** The shape of a class, or a one-line error saying the shapes file does not have it. */
export function shapeOf(shapes: ShapesFile, className: string): ClassShape {
  const shape = findShape(shapes, className);
  if (!shape) throw new ShapeError(`${className} is not in the shapes file (run lqb shapes again if the class is new)`);
  return shape;
}

/** The profile a shapes file's Laravel version writes: its major version (5.8 for 5.x). */
export function profileOfShapes(shapes: ShapesFile): LaravelProfile | undefined {
  const version = shapes.laravel;
  if (!version) return undefined;
  const major = version.split('.')[0]!;
  if (major === '5') return '5.8';
  return ['6', '7', '8', '9', '10', '11', '12', '13'].includes(major) ? (major as LaravelProfile) : undefined;
}

/** Builds a job's command from its shape and plain values, refusing what the class would not hold. */
export function shapedCommand(
  shapes: ShapesFile,
  className: string,
  values: Record<string, unknown>,
  options: ShapedCommandOptions = {},
): ShapedCommand {
  const shape = shapeOf(shapes, className);
  if (shape.kind !== 'job') throw new ShapeError(`${className} is a ${shape.kind}, not a job: only job classes are dispatched`);
  const profile = options.profile ?? profileOfShapes(shapes) ?? '8';
  refuseUndeclared(shape, values);
  const command = buildObject(shapes, shape, values, options.queueable ?? {}, profile);
  return { command, shape, ...declaredForEnvelope(shape, command), encrypted: shape.interfaces.includes(SHOULD_BE_ENCRYPTED) };
}

function refuseUndeclared(shape: ClassShape, values: Record<string, unknown>): void {
  const declared = new Set(shape.properties.filter((p) => p.serialized).map((p) => p.name));
  for (const name of Object.keys(values)) {
    if (!declared.has(name)) throw new ShapeError(`${shape.name} has no property $${name} that it serializes`);
  }
}

/**
 * The object as the class's serialize() writes it: its serialized properties in order, each the
 * value given, else the one onQueue()/delay() set, else its default; a typed property with no
 * default is left out (uninitialized, as PHP leaves it) unless it is required, and then refused.
 * Under SerializesModels, Laravel 9.4+ also leaves out what equals its declared default.
 */
function buildObject(
  shapes: ShapesFile,
  shape: ClassShape,
  values: Record<string, unknown>,
  queueable: Record<string, unknown>,
  profile: LaravelProfile,
): PhpObject {
  const object = new PhpObject(shape.name);
  const omitDefaults = shape.serializer === 'SerializesModels' && !['5.8', '6', '7', '8'].includes(profile);
  for (const property of shape.properties) {
    if (!property.serialized) continue;
    const value = propertyValue(shapes, shape, property, values, queueable, profile);
    if (value === UNINITIALIZED) continue;
    if (omitDefaults && property.default !== undefined && samePhp(value, unserialize(property.default))) continue;
    object.props.set(mangle(property.name, property.visibility, property.class), value);
  }
  return object;
}

const UNINITIALIZED = Symbol('uninitialized');

function propertyValue(
  shapes: ShapesFile,
  shape: ClassShape,
  property: PropertyShape,
  values: Record<string, unknown>,
  queueable: Record<string, unknown>,
  profile: LaravelProfile,
): PhpValue | typeof UNINITIALIZED {
  if (Object.hasOwn(values, property.name)) return typed(shapes, shape, property, values[property.name], profile);
  if (Object.hasOwn(queueable, property.name) && isQueueableProperty(property)) return fromJS(queueable[property.name]);
  if (property.default !== undefined) return unserialize(property.default);
  const parameter = shape.constructorParams?.find((p) => p.name === property.name);
  if (parameter?.default !== undefined) return unserialize(parameter.default);
  // PHP gives an untyped property null; a typed one stays uninitialized, and is not written.
  if (property.type === null) return null;
  if (isRequired(shape, property))
    throw new ShapeError(
      `${shape.name}::$${property.name} (${property.type}) is required: the class sets it in its constructor, and PHP fails reading it uninitialized`,
    );
  return UNINITIALIZED;
}

/**
 * A typed property without a default is required when the constructor sets it (a parameter of
 * that name without a default); when the shape does not list the constructor, when it is not
 * nullable. One the constructor does not set may stay uninitialized, as PHP leaves it.
 */
function isRequired(shape: ClassShape, property: PropertyShape): boolean {
  if (shape.constructorParams) return shape.constructorParams.some((p) => p.name === property.name && p.default === undefined);
  return !property.nullable;
}

/** Queueable's and InteractsWithQueue's properties, which onQueue(), delay() and the like set. */
function isQueueableProperty(property: PropertyShape): boolean {
  return property.visibility === 'public' && QUEUEABLE.has(property.name);
}

// uniqueLockOwner (13.24+): what UniqueLock::acquire sets on a unique job before it is pushed.
export const QUEUEABLE = new Set([
  'job',
  'connection',
  'queue',
  'chainConnection',
  'chainQueue',
  'chainCatchCallbacks',
  'delay',
  'afterCommit',
  'middleware',
  'chained',
  'messageGroup',
  'deduplicator',
  'uniqueLockOwner',
]);

/** A JavaScript value as the property's declared type has it, or a one-line refusal. */
function typed(shapes: ShapesFile, shape: ClassShape, property: PropertyShape, js: unknown, profile: LaravelProfile): PhpValue {
  const where = `${shape.name}::$${property.name}`;
  if (property.type === null) return fromJS(js);
  const { members, nullable } = parseType(property.type);
  if (js === null || js === undefined) {
    if (nullable || members.includes('mixed')) return null;
    throw new ShapeError(`${where} is ${property.type}, not nullable: it cannot be null`);
  }
  if (property.model) return modelIdentifier(where, property.model, js, null, profile);
  if (property.collection) return collectionIdentifier(shapes, where, property.collection, js, profile);
  // A value of a member's own kind first, as PHP keeps it: 7 for int|float stays an int.
  const ordered = wholeInt(js) !== undefined ? [...members].sort((a, b) => Number(b === 'int') - Number(a === 'int')) : members;
  for (const member of ordered) {
    const value = asMember(shapes, where, member, js, profile);
    if (value !== NO_MATCH) return value;
  }
  // A whole float (`1.0` in --props JSON) for an int: the int, as PHP's coercion gives it when
  // the job is made with `new`, and as the library gets it from JavaScript, where 1.0 is 1.
  const whole = js instanceof PhpFloat ? wholeInt(js.value) : undefined;
  if (members.includes('int') && whole !== undefined) return whole;
  throw new ShapeError(`${where} is ${property.type}; ${describe(js)} is not`);
}

/** An int64 int as PHP holds it (a bigint past 2^53), or undefined for anything else (a float, a number past int64). */
function wholeInt(js: unknown): number | bigint | undefined {
  if (typeof js === 'bigint') return isInt64(js) ? js : undefined;
  if (typeof js !== 'number' || !Number.isInteger(js)) return undefined;
  if (Number.isSafeInteger(js)) return js === 0 ? 0 : js;
  return isInt64(BigInt(js)) ? BigInt(js) : undefined;
}

/** A number of any kind --props or JavaScript gives (a JSON float comes as a PhpFloat). */
function numberOf(js: unknown): number | undefined {
  if (typeof js === 'number') return js;
  if (typeof js === 'bigint') return Number(js);
  return js instanceof PhpFloat ? js.value : undefined;
}

/** A JSON object as --props gives it (a Map when a key is integer-like) or as JavaScript does, as a plain record. */
function recordOf(js: unknown): Record<string, unknown> | undefined {
  if (isPlainObject(js)) return js;
  return js instanceof Map ? Object.fromEntries([...js].map(([key, value]) => [String(key), value])) : undefined;
}

const NO_MATCH = Symbol('no match');

/** `?int` → int + nullable; `int|string|null` → both + nullable. */
function parseType(type: string): { members: string[]; nullable: boolean } {
  const optional = type.startsWith('?');
  const members = (optional ? type.slice(1) : type).split('|').map((member) => member.replace(/^\\/, ''));
  return { members: members.filter((m) => m !== 'null'), nullable: optional || members.includes('null') };
}

const DATE_CLASSES = new Set([
  'DateTimeInterface',
  'DateTime',
  'DateTimeImmutable',
  'Carbon\\Carbon',
  'Carbon\\CarbonImmutable',
  'Carbon\\CarbonInterface',
  'Illuminate\\Support\\Carbon',
]);

function asMember(shapes: ShapesFile, where: string, member: string, js: unknown, profile: LaravelProfile): PhpValue | typeof NO_MATCH {
  switch (member.toLowerCase()) {
    case 'int':
      return wholeInt(js) ?? NO_MATCH;
    case 'float': {
      const number = numberOf(js);
      return number === undefined ? NO_MATCH : new PhpFloat(number);
    }
    case 'string':
      return typeof js === 'string' ? js : NO_MATCH;
    case 'bool':
      return typeof js === 'boolean' ? js : NO_MATCH;
    case 'true':
    case 'false':
      return js === (member.toLowerCase() === 'true') ? js : NO_MATCH;
    case 'array':
    case 'iterable':
      return Array.isArray(js) || js instanceof Map || isPlainObject(js) ? fromJS(js) : NO_MATCH;
    case 'mixed':
      return fromJS(js);
    case 'object': {
      const record = recordOf(js);
      return record ? fromJS(record, { class: 'stdClass' }) : NO_MATCH;
    }
  }
  if (DATE_CLASSES.has(member)) return asDate(member, js);
  const shape = Object.hasOwn(shapes.classes, member) ? shapes.classes[member] : undefined;
  if (shape?.kind === 'model') return modelIdentifier(where, { class: member, connection: shape.connection ?? null }, js, null, profile);
  const record = recordOf(js);
  if (shape && record) {
    refuseUndeclared(shape, record);
    return buildObject(shapes, shape, record, {}, profile);
  }
  if (!shape) throw new ShapeError(`${where} holds a ${member}, which the shapes file does not describe: it cannot be written from JSON`);
  return NO_MATCH;
}

/** A date: a JS Date, or text or a time Date can read; written as Carbon serializes it, in UTC. */
function asDate(member: string, js: unknown): PhpValue | typeof NO_MATCH {
  const date = js instanceof Date ? js : typeof js === 'string' || typeof js === 'number' ? new Date(js) : undefined;
  if (!date || Number.isNaN(date.getTime())) return NO_MATCH;
  // An interface is filled with what Laravel's now() makes.
  const className = member.endsWith('Interface') ? 'Illuminate\\Support\\Carbon' : member;
  return buildDate(date, { className });
}

/**
 * A model as SerializesModels leaves it: its key, or `{ id, connection?, relations? }`; the
 * connection defaults to the model's declared one, as getQueueableConnection() gives it.
 */
function modelIdentifier(
  where: string,
  model: { class: string; connection: string | null },
  js: unknown,
  collectionClass: string | null,
  profile: LaravelProfile,
): PhpObject {
  const given = isPlainObject(js) ? js : { id: js };
  const id = given.id;
  const validKey = (key: unknown) =>
    typeof key === 'string' || (typeof key === 'number' && Number.isInteger(key)) || typeof key === 'bigint';
  if (collectionClass === null ? !validKey(id) : !(Array.isArray(id) && id.every(validKey))) {
    throw new ShapeError(
      `${where} holds ${collectionClass === null ? `a ${model.class}: give its key, or { "id": key, "connection": … }` : `a collection of models: give { "class": "App\\\\Models\\\\X", "id": [keys…] }`}; ${describe(js)} is neither`,
    );
  }
  const connection = given.connection === undefined ? model.connection : (given.connection as string | null);
  const relations = Array.isArray(given.relations) ? (given.relations as string[]) : [];
  return buildModelIdentifier({ class: model.class, id, relations, connection, collectionClass }, profile);
}

/** A collection of models: `{ class, id: [keys…], connection? }`; the connection defaults to the model class's declared one, as the first model's getQueueableConnection() gives it. */
function collectionIdentifier(shapes: ShapesFile, where: string, collectionClass: string, js: unknown, profile: LaravelProfile): PhpObject {
  if (!isPlainObject(js) || typeof js.class !== 'string') {
    throw new ShapeError(
      `${where} holds a collection of models: give { "class": "App\\\\Models\\\\X", "id": [keys…] }; ${describe(js)} is not`,
    );
  }
  const model = Object.hasOwn(shapes.classes, js.class) ? shapes.classes[js.class] : undefined;
  return modelIdentifier(where, { class: js.class, connection: model?.connection ?? null }, js, collectionClass, profile);
}

/**
 * What Laravel 8's createPayloadArray reads off the command: `$tries`, `$timeout`,
 * `$maxExceptions`, `$failOnTimeout`, `$backoff` (its property before its method), `$retryUntil`.
 * A backoff() or retryUntil() method whose property is unset gives its value when `lqb shapes`
 * translated it; otherwise it is PHP that Node cannot run (`notRun`).
 */
export function declaredForEnvelope(shape: ClassShape, command: PhpObject): Omit<ShapedCommand, 'command' | 'shape' | 'encrypted'> {
  // The command's value; one Laravel 9.4+ left out for equalling its default is the declared one.
  const read = (name: string): PhpValue | undefined => {
    for (const [key, value] of command.props) {
      if (key === name || (typeof key === 'string' && key.endsWith(`\0${name}`))) return value;
    }
    const declared = shape.declared[name as keyof ClassShape['declared']];
    return declared === undefined ? undefined : fromJS(declared);
  };
  const number = (name: string) => {
    const value = read(name);
    return typeof value === 'number' ? value : value instanceof PhpFloat ? value.value : typeof value === 'bigint' ? Number(value) : null;
  };
  const backoffValue = read('backoff');
  // The property first, as Laravel reads it (`$job->backoff ?? $job->backoff()`); then the method as translated.
  const backoffMethod = (backoffValue ?? null) === null ? translatedResult(shape, 'backoff', command) : undefined;
  const retryUntilMethod = (read('retryUntil') ?? null) === null ? translatedResult(shape, 'retryUntil', command) : undefined;
  const notRun = (['backoff', 'retryUntil'] as const)
    .filter(
      (method) =>
        shape.methods.includes(method) &&
        (read(method) ?? null) === null &&
        (method === 'backoff' ? backoffMethod : retryUntilMethod) === undefined,
    )
    .map((method) => `${method}()`);
  const queue = read('queue');
  const retryUntil = retryUntilMethod === undefined ? number('retryUntil') : retryUntilOfValue(retryUntilMethod);
  return {
    envelope: {
      maxTries: number('tries'),
      timeout: number('timeout'),
      maxExceptions: number('maxExceptions'),
      failOnTimeout: read('failOnTimeout') === true,
      backoff: backoffMethod === undefined ? backoffText(backoffValue) : backoffOfValue(backoffMethod),
      retryUntil: typeof retryUntil === 'number' ? retryUntil : null,
    },
    queue: typeof queue === 'string' && queue !== '' ? queue : null,
    notRun,
  };
}

/** displayName() as `lqb shapes` translated it, when it did and it gives a string here. */
export function translatedDisplayName(shape: ClassShape, command: PhpObject): string | undefined {
  const translated = translatedMethod(shape, 'displayName');
  if (!translated || !('expression' in translated)) return undefined;
  try {
    const value = evaluate(translated.expression, command);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A backoff() or retryUntil() method's value as `lqb shapes` translated it; undefined when it is not translated or cannot be evaluated. */
function translatedResult(shape: ClassShape, method: 'backoff' | 'retryUntil', command: PhpObject): ExpressionValue | undefined {
  const translated = translatedMethod(shape, method);
  if (!translated || !('expression' in translated)) return undefined;
  try {
    return evaluate(translated.expression, command);
  } catch {
    return undefined;
  }
}

/** Arr::wrap($backoff) joined with commas, as Laravel writes it. */
function backoffText(value: PhpValue | undefined): string | null {
  if (value === undefined || value === null) return null;
  const text = (v: PhpValue) => String(v instanceof PhpFloat ? v.value : v);
  return value instanceof PhpArray ? value.values.map(text).join(',') : text(value);
}

function samePhp(a: PhpValue, b: PhpValue): boolean {
  return Buffer.from(serialize(a)).equals(Buffer.from(serialize(b)));
}

function isPlainObject(js: unknown): js is Record<string, unknown> {
  if (js === null || typeof js !== 'object' || Array.isArray(js) || js instanceof Map || js instanceof Date || js instanceof Uint8Array)
    return false;
  const prototype: unknown = Object.getPrototypeOf(js);
  return prototype === Object.prototype || prototype === null;
}

function describe(js: unknown): string {
  if (js === null) return 'null';
  if (Array.isArray(js)) return 'an array';
  // --props JSON gives a float as a PhpFloat: it is a number, not an object.
  if (js instanceof PhpFloat) return `the float ${floatText(js.value)}`;
  if (typeof js === 'object') return 'an object';
  if (typeof js === 'string') return `the string ${JSON.stringify(js.length > 40 ? `${js.slice(0, 40)}…` : js)}`;
  if (typeof js === 'bigint') return `the int ${js}`;
  // A number past int64 is a float to PHP, as json_decode reads it.
  if (typeof js === 'number') return wholeInt(js) !== undefined ? `the int ${js}` : `the float ${floatText(js)}`;
  return `a ${typeof js}`;
}

/** A float as var_export() writes it: 1.0 for a whole one, so it does not read as an int. */
function floatText(value: number): string {
  const text = formatPhpFloat(value);
  return /^-?\d+$/.test(text) ? `${text}.0` : text;
}
