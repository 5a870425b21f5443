/**
 * Class shapes: what a Laravel application's queueable classes look like, as PHP's reflection
 * reads them (`lqb shapes`). A shapes file is JSON of `ShapesFile`; the bridge uses it to write
 * a command as that class's serialize() would (visibility, types, defaults, encryption, declared
 * tries and backoff) and to type handlers.
 */

/** The shapes file: one entry per class, keyed by its full name. */
export interface ShapesFile {
  /** The format's version: 1. */
  version: 1;
  /** The Laravel version the app runs (vendor/composer/installed.json, else Application::VERSION), e.g. "8.83.26". */
  laravel: string | null;
  /** PHP_VERSION of the PHP that read the classes. */
  php: string;
  classes: Record<string, ClassShape>;
  /**
   * Classes PHP could not load, and why (a parent, interface or trait that is not installed: a
   * Capsule app without illuminate/notifications). Absent when every class was read.
   */
  unreadable?: { class: string; reason: string }[];
}

/** What kind of queueable a class is (`class` for one only referenced: a model, an event's payload). */
export type ClassKind = 'job' | 'listener' | 'notification' | 'mailable' | 'event' | 'model' | 'class';

export interface ClassShape {
  name: string;
  kind: ClassKind;
  /** The parent class, if any. */
  parent: string | null;
  /** Every interface it implements, full names (ShouldQueue, ShouldBeEncrypted, ShouldBeUnique, …). */
  interfaces: string[];
  /** Every trait it uses, its parents' and its traits' traits included, full names. */
  traits: string[];
  /**
   * How its serialize() writes it: `SerializesModels` (8.x+: its __serialize writes the
   * initialized properties reflection lists, models as ModelIdentifiers), or `native`.
   */
  serializer: 'SerializesModels' | 'native';
  /** Its properties, non-static, in the order its serialize() writes them. */
  properties: PropertyShape[];
  /** Declared values of tries, timeout, backoff, maxExceptions, failOnTimeout, uniqueFor, uniqueId, deleteWhenMissingModels, connection, queue (only those it declares, as JSON). */
  declared: Partial<Record<DeclaredName, unknown>>;
  /** Which of backoff, retryUntil, uniqueId, uniqueVia, middleware, failed, tags, displayName it defines (itself or inherited, not Laravel's own). */
  methods: string[];
  /**
   * The constructor's parameters, in order: a typed property the constructor sets (a parameter
   * of its name without a default) is required; a parameter's default fills its property.
   */
  constructorParams?: { name: string; default?: string }[];
  /**
   * Each of uniqueId(), backoff(), retryUntil(), tags(), displayName() the class defines, its body
   * translated into an expression Node evaluates on the command (expression.ts), or why it was not.
   * (Added after the format was fixed: optional, so older files still read.)
   */
  expressions?: Partial<Record<TranslatedMethod, Expression | Untranslated>>;
  /** A model's `$connection` default (kind `model`). */
  connection?: string | null;
  /** A listener's handled events: method name and the class of its first parameter. */
  handles?: { method: string; event: string | null }[];
}

export type DeclaredName =
  | 'tries'
  | 'timeout'
  | 'backoff'
  | 'maxExceptions'
  | 'failOnTimeout'
  | 'uniqueFor'
  | 'uniqueId'
  | 'deleteWhenMissingModels'
  | 'connection'
  | 'queue';

export interface PropertyShape {
  /** The plain name. */
  name: string;
  visibility: 'public' | 'protected' | 'private';
  /** The class that declares it (a private property is mangled with this name). */
  class: string;
  /** The declared type as PHP prints it (`int`, `?string`, `int|string`, `App\Models\User`), null when untyped. */
  type: string | null;
  nullable: boolean;
  /** False for a property serialize() never writes (a parent's private one under SerializesModels 8.x). */
  serialized: boolean;
  /**
   * True for a promoted constructor parameter (`public function __construct(public int $id)`):
   * it has no default, yet is always initialized (and so always serialized) once constructed.
   * Absent otherwise. (Added after the format was fixed: optional, so older files still read.)
   */
  promoted?: true;
  /** Set when the property has a default: its value as PHP serialize() writes it (a string of serialized PHP). */
  default?: string;
  /** When the type names an Eloquent model: its class and declared connection. */
  model?: { class: string; connection: string | null };
  /** When the type is an Eloquent collection (Illuminate\Database\Eloquent\Collection or a subclass). */
  collection?: string;
}

/** The methods `lqb shapes` translates: their results go into a payload or a lock's key. */
export type TranslatedMethod = 'uniqueId' | 'backoff' | 'retryUntil' | 'tags' | 'displayName';

/** A method's body that is not a pure expression over the command's properties, and why. */
export interface Untranslated {
  untranslated: string;
}

/** A pure expression over the command's properties (src/shapes/methods.php writes them). */
export type Expression =
  | { prop: string }
  /** `orNull`: read through `?->`, so a property holding null gives null. */
  | { modelKey: string; orNull?: true }
  | { lit: string | number | boolean | null }
  | { float: number }
  | { concat: Expression[] }
  | { cast: 'string' | 'int' | 'float' | 'bool'; of: Expression }
  | { array: Expression[] }
  | { now: { addSeconds: number } }
  | { commandClass: true }
  /** The method's declared return type, applied to what its body returns (`instant`: a class Carbon is). */
  | { returns: 'int' | 'float' | 'string' | 'bool' | 'array' | 'instant'; nullable: boolean; strict: boolean; of: Expression };
