/**
 * TypeScript declarations from shapes (`lqb shapes --types=FILE.d.ts`): an interface per class,
 * in namespaces that mirror PHP's (`App\Jobs\ShipOrder` is `App.Jobs.ShipOrder`), and one
 * `interface Jobs` mapping each name a handler is found under to what it receives, for
 * `defineHandlers<Jobs>(…)`.
 *
 * An interface describes the command as a handler sees it: through `toJS`, visibility
 * stripped, only the properties serialize() writes. PHP types map as:
 *   int → number (toJS gives a bigint past 2^53, which ids and counts do not reach in practice;
 *         typing every int `number | bigint` would make plain arithmetic a compile error),
 *   float → number, string → string, bool → boolean, null → null,
 *   array / iterable → `unknown[] | Record<string, unknown>` (a list is an Array, other arrays
 *         null-prototype objects), mixed / untyped / callable → unknown,
 *   ?T and T|null → `… | null`,
 *   an Eloquent model (or Eloquent collection) under SerializesModels → the ModelIdentifier
 *         SerializesModels writes in its place,
 *   a date class → its serialized fields (date, timezone_type, timezone),
 *   another class → its interface when the shapes hold it, else Record<string, unknown>.
 * A typed property with no default that is neither promoted nor named by a constructor
 * parameter may be uninitialized, and PHP does not serialize it then: it is optional (`?:`).
 */
import type { ClassShape, PropertyShape, ShapesFile } from './shape.js';

/** The namespace the helper types live in, out of the way of PHP's namespaces. */
const HELPERS = 'LqbTypes';
const RESERVED_ROOTS = new Set([HELPERS, 'Jobs']);

const SEND_QUEUED_NOTIFICATIONS = 'Illuminate\\Notifications\\SendQueuedNotifications';
const SEND_QUEUED_MAILABLE = 'Illuminate\\Mail\\SendQueuedMailable';

const DATE_CLASSES = new Set([
  'DateTimeInterface',
  'DateTime',
  'DateTimeImmutable',
  'Carbon\\Carbon',
  'Carbon\\CarbonImmutable',
  'Carbon\\CarbonInterface',
  'Illuminate\\Support\\Carbon',
  'Illuminate\\Support\\CarbonImmutable',
]);

// Words TypeScript does not take as a namespace or interface name.
const TS_RESERVED = new Set(
  'break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof new null return super switch this throw true try typeof var void while with implements interface let package private protected public static yield any boolean number string symbol never unknown object undefined type declare namespace module'.split(
    ' ',
  ),
);

/** A PHP name segment as a TypeScript identifier: kept when it is one, else with `_` added or put in. */
function identifier(segment: string, root = false): string {
  let id = segment.replace(/[^\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}$]/gu, '_');
  if (/^\p{Nd}/u.test(id)) id = `_${id}`;
  if (TS_RESERVED.has(id) || (root && RESERVED_ROOTS.has(id))) id = `${id}_`;
  return id;
}

/** How a PHP class is named in the declarations: `App\Jobs\ShipOrder` → `App.Jobs.ShipOrder`. */
export function typeName(className: string): string {
  return className
    .split('\\')
    .map((segment, i) => identifier(segment, i === 0))
    .join('.');
}

/** The .d.ts text for the shapes. */
export function declarationsFor(shapes: ShapesFile): string {
  const out: string[] = [];
  out.push(
    "// Written by `lqb shapes --types` from the app's classes as PHP read them" +
      (shapes.laravel ? ` (Laravel ${shapes.laravel}, PHP ${shapes.php})` : ` (PHP ${shapes.php})`) +
      '.',
    '// Do not edit: run `lqb shapes` again when the classes change.',
    '//',
    '// PHP ints are `number` here: toJS gives a bigint past 2^53 (9007199254740991).',
    '',
    helpers(),
    '',
  );
  const tree = new Map<string, Tree>();
  for (const shape of Object.values(shapes.classes)) {
    const parts = shape.name.split('\\');
    let level = tree;
    for (const [i, part] of parts.slice(0, -1).entries()) {
      const key = identifier(part, i === 0);
      let node = level.get(key);
      if (!node) level.set(key, (node = { classes: [], children: new Map() }));
      level = node.children;
    }
    const leaf = identifier(parts.at(-1)!, parts.length === 1);
    let node = level.get(leaf);
    if (!node) level.set(leaf, (node = { classes: [], children: new Map() }));
    node.classes.push(shape);
  }
  for (const [name, node] of [...tree].sort(([a], [b]) => a.localeCompare(b))) out.push(...printNode(name, node, shapes, '', true));
  out.push('', ...jobsInterface(shapes), '');
  return out.join('\n');
}

interface Tree {
  classes: ClassShape[];
  children: Map<string, Tree>;
}

function printNode(name: string, node: Tree, shapes: ShapesFile, indent: string, top: boolean): string[] {
  const lines: string[] = [];
  const exported = top ? 'export declare ' : 'export ';
  for (const shape of node.classes) lines.push(...printInterface(name, shape, shapes, indent, exported));
  if (node.children.size > 0) {
    lines.push(`${indent}${exported}namespace ${name} {`);
    for (const [child, sub] of [...node.children].sort(([a], [b]) => a.localeCompare(b)))
      lines.push(...printNode(child, sub, shapes, indent + '  ', false));
    lines.push(`${indent}}`);
  }
  return lines;
}

function printInterface(name: string, shape: ClassShape, shapes: ShapesFile, indent: string, exported: string): string[] {
  const lines = [
    `${indent}/** ${shape.name} (${shape.kind}${shape.serializer === 'SerializesModels' ? ', SerializesModels' : ''}). */`,
    `${indent}${exported}interface ${name} {`,
  ];
  // Two properties of one plain name (a parent's private one and the child's own) are one key to toJS.
  const byName = new Map<string, PropertyShape[]>();
  for (const property of shape.properties) {
    if (!property.serialized) continue;
    const same = byName.get(property.name);
    if (same) same.push(property);
    else byName.set(property.name, [property]);
  }
  for (const [plain, properties] of byName) {
    const optional = properties.every((p) => mayBeMissing(p, shape));
    const type = union(properties.map((p) => propertyType(p, shape, shapes)));
    const where = properties
      .map((p) => `${p.visibility} ${p.type ?? '(untyped)'}${p.class !== shape.name ? ` of ${p.class}` : ''}`)
      .join('; ');
    lines.push(`${indent}  /** PHP: ${escapeComment(where)} */`);
    lines.push(`${indent}  ${/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(plain) ? plain : JSON.stringify(plain)}${optional ? '?' : ''}: ${type};`);
  }
  lines.push(`${indent}}`);
  return lines;
}

const escapeComment = (text: string) => text.replace(/\*\//g, '*\\/');

/**
 * The properties a producer must give (a union of their names, `never` for none): typed, with no
 * default and not nullable. Node builds the object without running its constructor, so such a
 * property left out is uninitialized when PHP's worker reads it, a promoted one included.
 */
function requiredNames(shape: ClassShape): string {
  const names = new Map<string, boolean>();
  for (const property of shape.properties) {
    if (!property.serialized) continue;
    const required = property.type !== null && property.default === undefined && !property.nullable;
    names.set(property.name, (names.get(property.name) ?? true) && required);
  }
  const required = [...names].filter(([, needed]) => needed).map(([name]) => JSON.stringify(name));
  return required.length ? required.join(' | ') : 'never';
}

/**
 * Typed, no default, not promoted, and no constructor parameter of its name to set it:
 * uninitialized until something sets it, and then not serialized. (A constructor parameter of
 * the same name is taken to set it, as `$this->x = $x` does; a producer with shapes refuses to
 * leave such a property out.)
 */
function mayBeMissing(property: PropertyShape, shape: ClassShape): boolean {
  if (property.type === null || property.default !== undefined || property.promoted === true) return false;
  return !(shape.constructorParams ?? []).some((p) => p.name === property.name);
}

function union(types: string[]): string {
  const parts = [...new Set(types.flatMap((t) => t.split(' | ')))];
  if (parts.includes('unknown')) return 'unknown';
  return parts.join(' | ');
}

function propertyType(property: PropertyShape, owner: ClassShape, shapes: ShapesFile): string {
  if (property.type === null) return 'unknown';
  const nullable = property.nullable ? ' | null' : '';
  if (owner.serializer === 'SerializesModels') {
    if (property.collection) return `${HELPERS}.ModelCollectionIdentifier${nullable}`;
    if (property.model) return `${HELPERS}.ModelIdentifier${nullable}`;
  }
  return union([phpType(property.type, owner, shapes), ...(property.nullable ? ['null'] : [])]);
}

/** A PHP type as ReflectionType prints it, mapped. Intersections (and DNF types) are unknown. */
function phpType(type: string, owner: ClassShape, shapes: ShapesFile): string {
  if (type.includes('&') || type.includes('(')) return 'unknown';
  const members = (type.startsWith('?') ? type.slice(1) : type).split('|');
  return union(members.map((member) => memberType(member.replace(/^\\/, ''), owner, shapes)));
}

function memberType(name: string, owner: ClassShape, shapes: ShapesFile): string {
  switch (name.toLowerCase()) {
    case 'int':
    case 'float':
      return 'number';
    case 'string':
      return 'string';
    case 'bool':
      return 'boolean';
    case 'false':
      return 'false';
    case 'true':
      return 'true';
    case 'null':
      return 'null';
    case 'array':
    case 'iterable':
      return `${HELPERS}.PhpArray`;
    case 'mixed':
    case 'callable':
    case 'void':
    case 'never':
      return 'unknown';
    case 'object':
      return 'Record<string, unknown>';
    case 'self':
    case 'static':
      return typeName(owner.name);
    case 'parent':
      return owner.parent && shapes.classes[owner.parent] ? typeName(owner.parent) : 'Record<string, unknown>';
  }
  if (DATE_CLASSES.has(name)) return `${HELPERS}.PhpDate`;
  return shapes.classes[name] ? typeName(name) : 'Record<string, unknown>';
}

function helpers(): string {
  return `/** Types the declarations below share. */
export declare namespace ${HELPERS} {
  /** A PHP array through toJS: an Array for a list (keys 0..n-1), else a null-prototype object. */
  type PhpArray = unknown[] | Record<string, unknown>;
  /**
   * An Eloquent model as SerializesModels writes it (Illuminate\\Contracts\\Database\\ModelIdentifier),
   * through toJS. asModelIdentifier() from laravel-queue-bridge reads the same value as a richer view.
   */
  interface ModelIdentifier {
    /** The model's class. */
    class: string;
    /** Its primary key. */
    id: number | string;
    /** Relations loaded again when PHP restores it, e.g. ['customer', 'lines.product']. */
    relations: string[];
    connection: string | null;
    /** Laravel 9.26+. */
    collectionClass?: string | null;
  }
  /** An Eloquent collection as SerializesModels writes it: a ModelIdentifier holding a list of keys. */
  interface ModelCollectionIdentifier {
    /** The models' class; null for an empty collection. */
    class: string | null;
    id: (number | string)[];
    relations: string[];
    connection: string | null;
    /** Laravel 9.26+. */
    collectionClass?: string | null;
  }
  /** A PHP date (DateTime, Carbon) as serialize() writes it. */
  interface PhpDate {
    /** "Y-m-d H:i:s.u" */
    date: string;
    timezone_type: number;
    timezone: string;
  }
  /** Whom a notification is for: a model's identifier (SerializesModels), else its properties. */
  type Notifiable = ModelIdentifier | Record<string, unknown>;
  /** ${SEND_QUEUED_NOTIFICATIONS}: the command a queued notification travels in. */
  interface SendQueuedNotifications<Notification> {
    notifiables: unknown;
    notification: Notification;
    channels: string[] | null;
    tries?: number | null;
    timeout?: number | null;
    [property: string]: unknown;
  }
  /** ${SEND_QUEUED_MAILABLE}: the command a queued mailable travels in. */
  interface SendQueuedMailable<Mailable> {
    mailable: Mailable;
    tries?: number | null;
    timeout?: number | null;
    [property: string]: unknown;
  }
}`;
}

/**
 * `interface Jobs`: the names the worker finds handlers under. A job by its class; a listener as
 * `Class@method` (and as `Class` for `handle`), receiving the event in `args`; a notification as
 * `Class@channel` and `Class` (notifiables and notification in `args`), a mailable as `Class`;
 * both also under the class they travel in, its command holding any of the app's.
 */
function jobsInterface(shapes: ShapesFile): string[] {
  const lines = ['/** What each handler receives, by the name defineHandlers<Jobs>() files it under. */', 'export interface Jobs {'];
  const notifications: string[] = [];
  const mailables: string[] = [];
  const classes = Object.values(shapes.classes);
  for (const shape of classes) {
    if (shape.kind === 'job')
      lines.push(`  ${JSON.stringify(shape.name)}: { command: ${typeName(shape.name)}; required: ${requiredNames(shape)} };`);
    else if (shape.kind === 'notification') {
      // The worker looks a notification up as `Class@channel` (sent on one channel), then as `Class`.
      const type = typeName(shape.name);
      notifications.push(type);
      const entry = `{ args: [notifiables: ${HELPERS}.Notifiable[], notification: ${type}]; command: ${HELPERS}.SendQueuedNotifications<${type}> }`;
      lines.push(
        `  ${JSON.stringify(shape.name)}: ${entry};`,
        `  [name: \`${shape.name.replaceAll('\\', '\\\\')}@\${string}\`]: ${entry};`,
      );
    } else if (shape.kind === 'mailable') {
      const type = typeName(shape.name);
      mailables.push(type);
      lines.push(`  ${JSON.stringify(shape.name)}: { args: [mailable: ${type}]; command: ${HELPERS}.SendQueuedMailable<${type}> };`);
    } else if (shape.kind === 'listener') {
      for (const { method, event } of shape.handles ?? []) {
        const args = `{ args: [${event === null ? 'unknown' : memberType(event, shape, shapes)}] }`;
        lines.push(`  ${JSON.stringify(`${shape.name}@${method}`)}: ${args};`);
        if (method === 'handle') lines.push(`  ${JSON.stringify(shape.name)}: ${args};`);
      }
    }
  }
  if (notifications.length > 0)
    lines.push(
      `  ${JSON.stringify(SEND_QUEUED_NOTIFICATIONS)}: { command: ${HELPERS}.SendQueuedNotifications<${notifications.join(' | ')}> };`,
    );
  if (mailables.length > 0)
    lines.push(`  ${JSON.stringify(SEND_QUEUED_MAILABLE)}: { command: ${HELPERS}.SendQueuedMailable<${mailables.join(' | ')}> };`);
  lines.push('}');
  return lines;
}
