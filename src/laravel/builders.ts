/**
 * Builders for producers: a job, a queued listener, a model identifier or a date, laid out the
 * way a given Laravel version lays them out, and the envelope that version writes around them.
 *
 * A command is the job's own properties (in declaration order, visibility kept), then
 * InteractsWithQueue's `job` and Queueable's properties in that version's order. Under
 * SerializesModels, Laravel 9.4+ leaves out properties that still equal their declared default.
 */
import { randomFillSync, randomUUID } from 'node:crypto';
import { fromJSAt } from '../php/js.js';
import { PhpArray, PhpObject, fromJS, mangle, serialize, type FromJSHint, type PhpValue, type Visibility } from '../php/index.js';
import type { Encrypter } from './encrypter.js';
import { encodeJson, type JsonObject } from './json.js';
import { CALL_QUEUED_HANDLER, type LaravelProfile } from './payload.js';
import type { QueueDriver } from '../queue/contract.js';
import { CALL_QUEUED_LISTENER } from './views.js';
import { MODEL_IDENTIFIER } from './values.js';

type Field = readonly [name: string, defaultValue: PhpValue];
const EMPTY = (): PhpValue => new PhpArray();

/** Queueable's public properties, with their defaults, per version. */
function queueableFields(profile: LaravelProfile): Field[] {
  const chain: Field[] = [
    ['chainConnection', null],
    ['chainQueue', null],
  ];
  switch (profile) {
    case '5.8':
      return [['connection', null], ['queue', null], ...chain, ['delay', null], ['chained', EMPTY()]];
    case '6':
    case '7':
      return [['connection', null], ['queue', null], ...chain, ['delay', null], ['middleware', EMPTY()], ['chained', EMPTY()]];
    case '8':
    case '9':
    case '10':
      return [
        ['connection', null],
        ['queue', null],
        ...chain,
        ['chainCatchCallbacks', null],
        ['delay', null],
        ['afterCommit', null],
        ['middleware', EMPTY()],
        ['chained', EMPTY()],
      ];
    case '11':
      return [
        ['connection', null],
        ['queue', null],
        ['delay', null],
        ['afterCommit', null],
        ['middleware', EMPTY()],
        ['chained', EMPTY()],
        ...chain,
        ['chainCatchCallbacks', null],
      ];
    case '12':
    case '13':
      return [
        ['connection', null],
        ['queue', null],
        ['messageGroup', null],
        ['deduplicator', null],
        // 13.6 added debounceOwner, 13.24 uniqueLockOwner: '' until a debounce or unique lock takes it.
        ...(profile === '13'
          ? ([
              ['debounceOwner', ''],
              ['uniqueLockOwner', ''],
            ] as Field[])
          : []),
        ['delay', null],
        ['afterCommit', null],
        ['middleware', EMPTY()],
        ['chained', EMPTY()],
        ...chain,
        ['chainCatchCallbacks', null],
      ];
  }
}

/** InteractsWithQueue's `$job`: protected until 7.7, public since. */
const jobProperty = (profile: LaravelProfile): string => (profile === '5.8' || profile === '6' ? mangle('job', 'protected') : 'job');

/** One of the job's own properties. */
export interface PropertySpec {
  name: string;
  value: unknown;
  visibility?: Visibility;
  /** For a private property declared by a parent class. */
  declaringClass?: string;
  /** Hint for `fromJS` (e.g. 'float'). */
  hint?: FromJSHint;
  /** The declared default; under SerializesModels (9.4+) a value equal to it is left out. */
  default?: unknown;
}

export interface JobSpec {
  className: string;
  /** Own properties in declaration order: a list, or an object (all public) with `hints`. */
  properties?: PropertySpec[] | Record<string, unknown>;
  hints?: Record<string, FromJSHint>;
  /** Values for Queueable's properties (queue, connection, delay, chained, middleware, …). */
  queueable?: Record<string, unknown>;
  /** Uses InteractsWithQueue (adds `job`); true by default, as `make:job` writes it. */
  interactsWithQueue?: boolean;
  /** Uses SerializesModels; true by default, as `make:job` writes it. */
  serializesModels?: boolean;
}

/** A job's own property named as one of Queueable's (or InteractsWithQueue's), which the builder writes. */
export class QueueablePropertyError extends TypeError {
  override name = 'QueueablePropertyError';
  constructor(
    readonly className: string,
    readonly property: string,
  ) {
    const option =
      property === 'queue' ? ' (the queue option, as onQueue())' : property === 'delay' ? ' (the delay option, as delay())' : '';
    super(
      `${className}: $${property} is Laravel's Queueable (or InteractsWithQueue) property, which dispatch sets${option}: it cannot be given among the properties`,
    );
  }
}

/** The command object a Laravel version serializes for a job of this shape. */
export function buildJob(spec: JobSpec, profile: LaravelProfile = '8'): PhpObject {
  const object = new PhpObject(spec.className);
  const omitDefaults = (spec.serializesModels ?? true) && laterThan94(profile);
  const interactsWithQueue = spec.interactsWithQueue ?? true;
  const traits = traitLayout(profile, interactsWithQueue);
  // The properties are appended as they come, with no lookup index made for them: a job's own
  // names are told apart from the traits' by the layout's set, and from each other here.
  const props = object.props;
  const add = (name: string, value: PhpValue) => {
    // A name given twice keeps its first place and takes its last value, as PhpArray.set does.
    const at = props.keys.indexOf(name);
    if (at >= 0) props.values[at] = value;
    else props.append(name, value);
  };
  const own = spec.properties ?? {};
  if (Array.isArray(own)) {
    for (const prop of own) addOwn(spec.className, prop, traits, omitDefaults, add);
  } else {
    for (const name of Object.keys(own))
      addOwn(spec.className, { name, value: own[name], hint: spec.hints?.[name] }, traits, omitDefaults, add);
  }
  addTraitProperties(traits.fields, spec.queueable ?? {}, omitDefaults, add);
  return object;
}

/** One of the job's own properties, unless it is a trait's or (9.4+, SerializesModels) still its default. */
function addOwn(
  className: string,
  prop: PropertySpec,
  traits: TraitLayout,
  omitDefaults: boolean,
  add: (name: string, value: PhpValue) => void,
): void {
  // The trait's slot would overwrite it: a value dropped without a word, or (queue, delay) one
  // the command claims and the push ignores.
  if (traits.names.has(prop.name)) throw new QueueablePropertyError(className, prop.name);
  const value = propertyValue(prop);
  if (omitDefaults && 'default' in prop && samePhp(value, fromJS(prop.default, prop.hint))) return;
  add(mangle(prop.name, prop.visibility ?? 'public', prop.declaringClass ?? className), value);
}

/** A property's value made PHP; an error's path starts at the property (`$.items[2]`), not at `$`. */
function propertyValue(prop: PropertySpec): PhpValue {
  return fromJSAt(prop.value, prop.hint, '$', prop.name);
}

/**
 * What a version's traits write after a job's own properties: InteractsWithQueue's `job` (as
 * that version names it) then Queueable's, with their defaults, and the plain names of them all,
 * which a job's own properties may not take. The same for every job of a version: made once.
 */
interface TraitLayout {
  fields: readonly (readonly [written: string, given: string, defaultValue: PhpValue | (() => PhpValue)])[];
  names: ReadonlySet<string>;
}

const traitLayouts = new Map<string, TraitLayout>();

function traitLayout(profile: LaravelProfile, interactsWithQueue: boolean): TraitLayout {
  const cacheKey = `${profile}:${interactsWithQueue}`;
  let layout = traitLayouts.get(cacheKey);
  if (layout === undefined) {
    const queueable = queueableFields(profile).map(
      ([name, defaultValue]) => [name, name, defaultValue instanceof PhpArray ? EMPTY : defaultValue] as const,
    );
    const fields = interactsWithQueue ? [[jobProperty(profile), 'job', null] as const, ...queueable] : queueable;
    layout = { fields, names: new Set(fields.map(([, given]) => given)) };
    traitLayouts.set(cacheKey, layout);
  }
  return layout;
}

function addTraitProperties(
  fields: TraitLayout['fields'],
  values: Record<string, unknown>,
  omitDefaults: boolean,
  add: (name: string, value: PhpValue) => void,
): void {
  for (const [written, given, fallback] of fields) {
    // An empty array is made afresh for each command: a caller may fill its own.
    const defaultValue = typeof fallback === 'function' ? fallback() : fallback;
    const value = values[given] === undefined ? defaultValue : fromJS(values[given]);
    if (omitDefaults && samePhp(value, defaultValue)) continue;
    add(written, value);
  }
}

function laterThan94(profile: LaravelProfile): boolean {
  return !['5.8', '6', '7', '8'].includes(profile);
}

function samePhp(a: PhpValue, b: PhpValue): boolean {
  return Buffer.from(serialize(a)).equals(Buffer.from(serialize(b)));
}

export interface ListenerSpec {
  /** The listener class, e.g. App\Listeners\SendShipmentNotification. */
  listener: string;
  method?: string;
  /** The arguments the listener receives: usually one event object (build it with `fromJS` and a class hint). */
  arguments: unknown[];
  tries?: number | null;
  maxExceptions?: number | null;
  backoff?: number | number[] | null;
  retryUntil?: number | null;
  timeout?: number | null;
  failOnTimeout?: boolean;
  shouldBeEncrypted?: boolean;
  /** 13.x: the listener's deleteWhenMissingModels (false unless the listener says so). */
  deleteWhenMissingModels?: boolean | null;
  /** 13.26+: the listener's debounce id. */
  debounceId?: unknown;
  queueable?: Record<string, unknown>;
}

/** `Illuminate\Events\CallQueuedListener` as that version writes it. */
export function buildListener(spec: ListenerSpec, profile: LaravelProfile = '8'): PhpObject {
  const object = new PhpObject(CALL_QUEUED_LISTENER);
  const set = (name: string, value: unknown) => object.props.set(name, fromJS(value));
  set('class', spec.listener);
  set('method', spec.method ?? 'handle');
  object.props.set('data', PhpArray.list(spec.arguments.map((arg) => fromJS(arg))));
  set('tries', spec.tries ?? null);
  if (profile === '5.8' || profile === '6' || profile === '7') {
    // Before 8: the retry delay was `retryAfter` (from 6), the expiry `timeoutAt`, and the
    // listener wrapper used InteractsWithQueue alone, without Queueable.
    if (profile !== '5.8') set('retryAfter', spec.backoff ?? null);
    set('timeoutAt', spec.retryUntil ?? null);
    set('timeout', spec.timeout ?? null);
    object.props.set(jobProperty(profile), null);
    return object;
  }
  set('maxExceptions', spec.maxExceptions ?? null);
  set('backoff', spec.backoff ?? null);
  set('retryUntil', spec.retryUntil ?? null);
  set('timeout', spec.timeout ?? null);
  if (profile !== '8' && profile !== '9') set('failOnTimeout', spec.failOnTimeout ?? false);
  set('shouldBeEncrypted', spec.shouldBeEncrypted ?? false);
  if (profile === '13') set('deleteWhenMissingModels', spec.deleteWhenMissingModels === undefined ? false : spec.deleteWhenMissingModels);
  if (profile === '12' || profile === '13') {
    set('shouldBeUnique', false);
    set('shouldBeUniqueUntilProcessing', false);
    set('uniqueId', null);
    set('uniqueFor', null);
  }
  if (profile === '13') set('debounceId', spec.debounceId ?? null);
  addTraitProperties(traitLayout(profile, true).fields, spec.queueable ?? {}, false, (name, value) => object.props.set(name, value));
  return object;
}

/** What SerializesModels leaves in place of a model (or, with an id list, a collection of them). */
export function buildModelIdentifier(
  model: { class: string | null; id: unknown; relations?: string[]; connection?: string | null; collectionClass?: string | null },
  profile: LaravelProfile = '8',
): PhpObject {
  const object = new PhpObject(MODEL_IDENTIFIER);
  object.props.set('class', model.class);
  object.props.set('id', fromJS(model.id));
  object.props.set('relations', fromJS(model.relations ?? []));
  object.props.set('connection', model.connection ?? null);
  // 9.26 added the collection's class; it is null for a single model.
  if (laterThan94(profile)) object.props.set('collectionClass', model.collectionClass ?? null);
  return object;
}

/**
 * A Carbon (or DateTime) as PHP serializes it: "Y-m-d H:i:s.u" in the given zone. The zone is
 * an identifier such as "UTC" or "Europe/Paris" (timezone_type 3) or an offset such as "+05:30"
 * (timezone_type 1); microseconds beyond the Date's milliseconds can be given.
 */
export function buildDate(date: Date, options: { className?: string; timezone?: string; microseconds?: number } = {}): PhpObject {
  const timezone = options.timezone ?? 'UTC';
  const offset = /^([+-])(\d\d):(\d\d)$/.exec(timezone);
  const micro = options.microseconds ?? date.getUTCMilliseconds() * 1000;
  let wall: Record<string, string>;
  if (offset) {
    // An offset zone: the wall clock is the instant moved by the offset.
    const minutes = (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3]));
    const shifted = new Date(date.getTime() + minutes * 60_000).toISOString();
    wall = {
      year: shifted.slice(0, 4),
      month: shifted.slice(5, 7),
      day: shifted.slice(8, 10),
      hour: shifted.slice(11, 13),
      minute: shifted.slice(14, 16),
      second: shifted.slice(17, 19),
    };
  } else {
    const parts = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    }).formatToParts(date);
    wall = Object.fromEntries(parts.map((p) => [p.type, p.value]));
  }
  const text = `${wall.year}-${wall.month}-${wall.day} ${wall.hour}:${wall.minute}:${wall.second}.${String(micro).padStart(6, '0')}`;
  const object = new PhpObject(options.className ?? 'Illuminate\\Support\\Carbon');
  object.props.set('date', text);
  object.props.set('timezone_type', offset ? 1 : 3);
  object.props.set('timezone', timezone);
  return object;
}

export interface PayloadOptions {
  profile?: LaravelProfile;
  /** The class shown in Horizon and logs: the job's class, or a listener's. */
  displayName?: string;
  maxTries?: number | null;
  maxExceptions?: number | null;
  failOnTimeout?: boolean;
  /** Seconds between retries: one number, or one per attempt. */
  backoff?: number | number[] | string | null;
  /** Seconds a worker lets the job run. */
  timeout?: number | null;
  /** UNIX time after which the job is not retried (`timeoutAt` before 8). */
  retryUntil?: number | null;
  /** 13.x: the job's deleteWhenMissingModels (false by default). */
  deleteWhenMissingModels?: boolean;
  /** 12.11+ and 13: the dispatch delay in seconds; 5.8–7: the retry delay. */
  delay?: number | null;
  batchId?: string | null;
  uuid?: string;
  id?: string;
  /** UNIX seconds (12.11+). */
  createdAt?: number;
  /**
   * The queue driver the payload is pushed through: RedisQueue appends `id` and `attempts`; the
   * database driver does not (the row's id is the job's, and attempts live in their column).
   */
  driver?: QueueDriver;
  attempts?: number;
  /** Keys a `Queue::createPayloadUsing` hook (or Horizon) adds, in order. */
  extra?: JsonObject;
  /** Encrypts the command, as for a ShouldBeEncrypted job. */
  encrypter?: Encrypter;
  /** JSON_UNESCAPED_UNICODE; by default as the version does (8.82+ and later: yes). */
  unescapedUnicode?: boolean;
}

export interface BuiltPayload {
  /** The envelope as the string Laravel stores, encoded from it when first read. */
  readonly raw: string;
  envelope: JsonObject;
  command: PhpObject;
}

/** The envelope a Laravel version's queue (RedisQueue unless `driver` says otherwise) writes around a command, as the string it stores. */
export function buildPayload(command: PhpObject, options: PayloadOptions = {}): BuiltPayload {
  const profile = options.profile ?? '8';
  const since12 = profile === '12' || profile === '13';
  const serialized = serialize(command).toString('utf8');
  const data: JsonObject = {
    commandName: command.className,
    command: options.encrypter ? options.encrypter.encryptCommand(serialized) : serialized,
  };
  if (since12) data.batchId = options.batchId ?? null;
  const backoff = backoffText(options.backoff);
  const e: JsonObject = {};
  if (profile !== '5.8' && profile !== '6') e.uuid = options.uuid ?? randomUUID();
  e.displayName = options.displayName ?? command.className;
  e.job = CALL_QUEUED_HANDLER;
  e.maxTries = options.maxTries ?? null;
  if (profile === '5.8' || profile === '6' || profile === '7') {
    if (profile === '7') e.maxExceptions = options.maxExceptions ?? null;
    e.delay = options.delay ?? null;
    e.timeout = options.timeout ?? null;
    e.timeoutAt = options.retryUntil ?? null;
  } else {
    e.maxExceptions = options.maxExceptions ?? null;
    e.failOnTimeout = options.failOnTimeout ?? false;
    e.backoff = backoff;
    e.timeout = options.timeout ?? null;
    e.retryUntil = options.retryUntil ?? null;
    if (profile === '13') e.deleteWhenMissingModels = options.deleteWhenMissingModels ?? false;
  }
  e.data = data;
  if (since12) e.createdAt = options.createdAt ?? Math.floor(Date.now() / 1000);
  for (const [key, value] of Object.entries(options.extra ?? {})) e[key] = value;
  if (options.driver !== 'database') {
    e.id = options.id ?? randomId();
    e.attempts = options.attempts ?? 0;
  }
  if (since12) e.delay = options.delay ?? null;
  const unescapedUnicode = options.unescapedUnicode ?? !(profile === '5.8' || profile === '6' || profile === '7');
  return new Built(e, command, unescapedUnicode);
}

/**
 * buildPayload's result. Its text is encoded when first read: a producer that lays the payload
 * out otherwise (Horizon's queue encodes it its own way) need not encode it twice. A class, not
 * an object literal with a getter, which V8 makes through its runtime, with closures of its own,
 * at about a third of the rest of buildPayload's cost and many times its garbage.
 */
class Built implements BuiltPayload {
  readonly #unescapedUnicode: boolean;
  #raw: string | undefined;

  constructor(
    public envelope: JsonObject,
    public command: PhpObject,
    unescapedUnicode: boolean,
  ) {
    this.#unescapedUnicode = unescapedUnicode;
  }

  get raw(): string {
    return (this.#raw ??= encodeJson(this.envelope, { unescapedUnicode: this.#unescapedUnicode }));
  }
}

/** Laravel writes backoff as comma-joined seconds. */
function backoffText(backoff: PayloadOptions['backoff']): string | null {
  if (backoff === undefined || backoff === null) return null;
  return Array.isArray(backoff) ? backoff.join(',') : String(backoff);
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Random bytes drawn from the system a pool at a time: one randomBytes call per id was a fifth
 * of a dispatch's own CPU (a call into the system's generator, and a Buffer, for 64 bytes).
 */
const RANDOM_POOL = 4096;
const randomPool = Buffer.allocUnsafe(RANDOM_POOL);
let randomUsed = RANDOM_POOL;

/** The next random byte of the pool, refilled from the system's generator when spent. */
function randomByte(): number {
  if (randomUsed === RANDOM_POOL) {
    randomFillSync(randomPool);
    randomUsed = 0;
  }
  return randomPool[randomUsed++]!;
}

/** Str::random(32): the payload id Laravel's RedisQueue writes. */
export function randomId(length = 32): string {
  // The characters' codes first, made a string at once: appended one by one, each made a string of its own.
  const codes = new Array<number>(length);
  for (let i = 0; i < length;) {
    const byte = randomByte();
    // 62 × 4 = 248: bytes above that would favour some letters.
    if (byte < 248) codes[i++] = ALPHANUMERIC.charCodeAt(byte % 62);
  }
  return String.fromCharCode(...codes);
}
