/**
 * Views of the Laravel and PHP classes that turn up inside commands: model identifiers (what
 * SerializesModels leaves in place of a model), dates, collections and enums. Each `as…`
 * returns undefined for a value of another kind, so they can be tried in turn.
 */
import { PhpArray, PhpEnum, PhpObject, deref, toJS, type PhpValue } from '../php/index.js';

export const MODEL_IDENTIFIER = 'Illuminate\\Contracts\\Database\\ModelIdentifier';

/** An Eloquent model (or collection of them) as SerializesModels stores it. */
export interface ModelIdentifierView {
  /** The model's class; null for an empty collection, which has none. */
  class: string | null;
  /** The primary key, or for a collection the list of keys. */
  id: unknown;
  isCollection: boolean;
  /** Relations to load again, e.g. ['customer', 'lines.product']. */
  relations: string[];
  connection: string | null;
  /** The collection's class (Laravel 9.26+); undefined when the payload predates it. */
  collectionClass?: string | null;
  /**
   * True when `class` is a morph-map alias (12.50+ writes `getMorphClass()`, e.g. 'user', for a
   * model in Relation::morphMap): a name with no namespace separator. `modelClass()` resolves it.
   */
  classIsAlias: boolean;
}

/** The model's class: an alias looked up in the app's morph map (alias to class) when given, else as stored. */
export function modelClass(
  view: Pick<ModelIdentifierView, 'class' | 'classIsAlias'>,
  morphMap: Record<string, string> = {},
): string | null {
  if (view.class === null || !view.classIsAlias) return view.class;
  return Object.hasOwn(morphMap, view.class) ? morphMap[view.class]! : view.class;
}

export function asModelIdentifier(value: PhpValue): ModelIdentifierView | undefined {
  const object = deref(value);
  if (!(object instanceof PhpObject) || object.className !== MODEL_IDENTIFIER) return undefined;
  // Laravel restores any array of keys as a collection, keyed or not: a filtered collection
  // keeps its keys (`[1 => 2, 2 => 3]`), and its keys are the array's values, in order.
  const ids = deref(object.get('id') ?? null);
  const isCollection = ids instanceof PhpArray;
  const id = isCollection ? ids.values.map((key) => toJS(key)) : toJS(ids);
  const relations = toJS(object.get('relations') ?? null);
  const className = nullableString(object.get('class'));
  const view: ModelIdentifierView = {
    class: className,
    classIsAlias: className !== null && !className.includes('\\'),
    id,
    isCollection,
    relations: Array.isArray(relations) ? relations.map(String) : [],
    connection: nullableString(object.get('connection')),
  };
  if (object.props.has('collectionClass')) view.collectionClass = nullableString(object.get('collectionClass'));
  return view;
}

function nullableString(value: PhpValue | undefined): string | null {
  const plain = value === undefined ? null : toJS(value);
  return plain === null ? null : String(plain);
}

const DATE_CLASSES = new Set([
  'DateTime',
  'DateTimeImmutable',
  'Carbon\\Carbon',
  'Carbon\\CarbonImmutable',
  'Illuminate\\Support\\Carbon',
  'Illuminate\\Support\\CarbonImmutable',
]);

/** A PHP date: a JS Date for the instant, and what a Date cannot hold kept beside it. */
export interface PhpDateView {
  className: string;
  /** The instant, to the millisecond. */
  date: Date;
  /** The microseconds PHP kept (0 to 999999); `date` holds only their first three digits. */
  microseconds: number;
  /** PHP's wall-clock text, "Y-m-d H:i:s.u". */
  text: string;
  timezone: string;
  /** 1: an offset like +02:00; 2: an abbreviation like EST; 3: an identifier like Europe/Paris. */
  timezoneType: number;
}

/**
 * DateTime and Carbon serialize as `date` ("Y-m-d H:i:s.u" in their own zone), `timezone_type`
 * and `timezone`. The wall-clock time is turned into an instant with the zone's offset.
 */
export function asDate(value: PhpValue): PhpDateView | undefined {
  const object = deref(value);
  if (!(object instanceof PhpObject) || !isDateClass(object)) return undefined;
  const text = toJS(object.get('date') ?? null);
  const timezone = String(toJS(object.get('timezone') ?? null) ?? 'UTC');
  const timezoneType = Number(toJS(object.get('timezone_type') ?? null) ?? 3);
  const match = typeof text === 'string' ? /^(-?\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?$/.exec(text) : null;
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction = ''] = match;
  const microseconds = Number(fraction.padEnd(6, '0'));
  const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Math.floor(microseconds / 1000));
  const offset = offsetMinutes(timezone, timezoneType, wall);
  if (offset === undefined) return undefined;
  return {
    className: object.className,
    date: new Date(wall - offset * 60_000),
    microseconds,
    text: text as string,
    timezone,
    timezoneType,
  };
}

function isDateClass(object: PhpObject): boolean {
  return (
    DATE_CLASSES.has(object.className) || (object.props.has('date') && object.props.has('timezone_type') && object.props.has('timezone'))
  );
}

/** Minutes east of UTC that `timezone` was at the given wall-clock time. */
function offsetMinutes(timezone: string, type: number, wall: number): number | undefined {
  if (type === 1) {
    const m = /^([+-])(\d\d):?(\d\d)$/.exec(timezone);
    return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : undefined;
  }
  if (type === 2) return ABBREVIATIONS[timezone.toUpperCase()];
  // An identifier: ask Intl for the zone's offset; twice, since the offset can move across a change.
  try {
    let guess = wall - zoneOffset(timezone, wall) * 60_000;
    guess = wall - zoneOffset(timezone, guess) * 60_000;
    return (wall - guess) / 60_000;
  } catch {
    return undefined;
  }
}

function zoneOffset(timezone: string, instant: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(instant));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000);
}

/** The abbreviations PHP writes for timezone_type 2 that have one fixed offset. */
const ABBREVIATIONS: Record<string, number> = {
  UTC: 0,
  GMT: 0,
  Z: 0,
  BST: 60,
  CET: 60,
  CEST: 120,
  EET: 120,
  EEST: 180,
  WET: 0,
  WEST: 60,
  EST: -300,
  EDT: -240,
  CST: -360,
  CDT: -300,
  MST: -420,
  MDT: -360,
  PST: -480,
  PDT: -420,
  JST: 540,
  IST: 330,
  AEST: 600,
  AEDT: 660,
};

/** `Illuminate\Support\Collection` and its subclasses (Eloquent's included) hold their items in `items`. */
export interface CollectionView {
  className: string;
  items: PhpArray;
}

export function asCollection(value: PhpValue): CollectionView | undefined {
  const object = deref(value);
  if (!(object instanceof PhpObject)) return undefined;
  const items = object.get('items');
  if (!/Collection$/.test(object.className) || items === undefined) return undefined;
  const array = deref(items);
  return array instanceof PhpArray ? { className: object.className, items: array } : undefined;
}

export interface EnumView {
  className: string;
  case: string;
}

export function asEnum(value: PhpValue): EnumView | undefined {
  const object = deref(value);
  return object instanceof PhpEnum ? { className: object.className, case: object.caseName } : undefined;
}

/**
 * An Eloquent model serialized whole (held by a class without SerializesModels): its
 * attributes, and the key under its primary key name.
 */
export interface EloquentModelView {
  class: string;
  /** The primary key's value. */
  id: unknown;
  attributes: Record<string, unknown>;
  table: string | null;
  connection: string | null;
  exists: boolean;
}

export function asEloquentModel(value: PhpValue): EloquentModelView | undefined {
  const object = deref(value);
  if (!(object instanceof PhpObject)) return undefined;
  const attributes = object.get('attributes');
  const primaryKey = object.get('primaryKey');
  if (attributes === undefined || primaryKey === undefined || object.get('exists') === undefined) return undefined;
  const plain = toJS(attributes) as Record<string, unknown> | unknown[];
  const record = Array.isArray(plain) ? {} : plain;
  return {
    class: object.className,
    id: record[String(toJS(primaryKey))] ?? null,
    attributes: { ...record },
    table: nullableString(object.get('table')),
    connection: nullableString(object.get('connection')),
    exists: toJS(object.get('exists') ?? false) === true,
  };
}
