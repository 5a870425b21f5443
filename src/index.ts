/**
 * laravel-queue-bridge: Laravel's queue protocol, spoken from Node.js.
 *
 * The root holds what a team embedding the library reaches for; each group's whole list,
 * internals included (Lua steps, key names, lock and cache plumbing, JSON helpers, the shapes
 * reflector and `.d.ts` writer), is its own entry point: `laravel-queue-bridge/php`, `/laravel`,
 * `/redis`, `/worker`, `/shapes`. The Redis-server helpers for tests are in `/testing` only.
 *
 * - php: the whole codec, as DESIGN.md's contract asks (the root re-exports `/php` entire).
 * - connect: the one way in (DESIGN.md §4), with its options, results and the errors it rejects with.
 * - worker: `Worker` with its options, events, stats and logger, the handler types and
 *   `defineHandlers`/`loadHandlers` (every handlers module uses them), the failed-jobs store,
 *   the errors a handler or a `failed` callback sees, and the two guards a handler is wrapped in.
 *   The worker's other collaborators (QueueCache, lock stores, batch repository) are in `/worker`.
 * - laravel: the payload tools a producer or consumer calls (decode, encode, build, validate,
 *   view, encrypt) with the errors they throw and the types of what they return.
 * - redis: `RedisQueue`, `RedisJob` and `connectRedis`, for a producer pushing its own payloads.
 * - shapes: reading a shapes file and building a payload by it; `lqb shapes` makes the file.
 */

// PHP's serialize() format, lossless both ways: every name of `laravel-queue-bridge/php`.
export {
  unserialize,
  PhpIncompleteObject,
  type UnserializeOptions,
  serialize,
  type SerializeOptions,
  toJS,
  fromJS,
  phpClassOf,
  PHP_CLASS,
  PHP_ENUM,
  PHP_SERIALIZED,
  type FromJSHint,
  type JSPhpObject,
  formatPhpFloat,
  parsePhpFloat,
  phpStringOfFloat,
  PhpUnserializeError,
  PhpSerializeError,
  PhpArray,
  PhpObject,
  PhpFloat,
  PhpEnum,
  PhpRef,
  PhpSerializable,
  mangle,
  demangle,
  deref,
  type PhpKey,
  type PhpValue,
  type PropertyName,
  type Visibility,
} from './php/index.js';

// connect() to a Laravel app's queue: dispatch, work, close.
export {
  connect,
  LaravelQueue,
  resolveConnection,
  ConnectionSettingsError,
  RedisUnavailable,
  type ConnectOptions,
  type DispatchOptions,
  type JobToPush,
  type ChainOptions,
  type PendingBatchOptions,
  type DispatchedBatch,
  type DispatchName,
  type DispatchProps,
  type UntypedJobs,
  type Dispatched,
  type FoundJob,
  type QueueWorkerOptions,
  type ConnectionOptions,
  type ConnectionSettings,
} from './connect/index.js';
// Where connect()'s and a worker's OpenTelemetry spans and metrics go (`telemetry`).
export type { TelemetryOptions } from './telemetry/options.js';

// The worker, its handlers, failed jobs and the errors a job fails with.
export {
  Worker,
  WorkerUsageError,
  type WorkerOptions,
  type WorkerDependencies,
  type WorkerEvent,
  type WorkerEventMap,
  type WorkerLogger,
  type WorkerStats,
  type WorkerCounts,
  type WorkerHealth,
  type FailedJobInfo,
  type StopOptions,
  type StopReason,
  loadHandlers,
  defineHandlers,
  type Handler,
  type HandlerJob,
  type HandlerMap,
  type HandlerObject,
  type FailedHook,
  type TypedHandler,
  type TypedHandlerJob,
  type TypedHandlerMap,
  type TypedJobMethods,
  type JobMethods,
  type MethodJob,
  type MailableArgs,
  type MailableJob,
  type Notifiable,
  type NotificationArgs,
  type NotificationJob,
  DatabaseUuidFailedJobProvider,
  MissingDriverError,
  type FailedJob,
  type FailedJobProvider,
  MaxAttemptsExceededError,
  TimeoutExceededError,
  ManuallyFailedError,
  NoHandlerError,
  UndecodableJobError,
  withoutOverlapping,
  rateLimited,
  type GuardedHandler,
  type GuardKey,
  type Limit,
  type Limits,
  type WithoutOverlappingOptions,
  type RateLimitedOptions,
  sandboxedHandlers,
  type SandboxedHandlers,
  type SandboxOptions,
} from './worker/index.js';

// Laravel's job envelope: decode, encode, build, validate, view, encrypt.
export {
  decodePayload,
  encodePayload,
  commandOf,
  PayloadError,
  type DecodedPayload,
  type Envelope,
  type LaravelProfile,
  type PayloadFormat,
  buildJob,
  buildListener,
  buildModelIdentifier,
  buildDate,
  buildPayload,
  type JobSpec,
  type ListenerSpec,
  type PropertySpec,
  type PayloadOptions,
  type BuiltPayload,
  validatePayload,
  assertValidPayload,
  PayloadSchemaError,
  type PayloadIssue,
  type PayloadValidationOptions,
  Encrypter,
  DecryptError,
  type Cipher,
  viewCommand,
  type QueueableFields,
  type PropertyView,
  type UserJobView,
  type ListenerView,
  type NotifiableView,
  type NotificationView,
  type MailableView,
  type ClosureView,
  type StringJobView,
  type EncryptedView,
  type JobView,
  modelClass,
  asModelIdentifier,
  asDate,
  asCollection,
  asEnum,
  asEloquentModel,
  type ModelIdentifierView,
  type PhpDateView,
  type CollectionView,
  type EnumView,
  type EloquentModelView,
} from './laravel/index.js';

// The queue contract every driver implements (the worker depends on it alone).
export type { Queue, QueueDriver, ReservedJob } from './queue/index.js';

// Laravel's Redis queue driver, for pushing payloads of one's own.
export {
  RedisQueue,
  cancelDelayed,
  type CancelOutcome,
  type RedisQueueOptions,
  type QueuedJob,
  RedisJob,
  type ReservedFields,
  connectRedis,
  type ConnectOptions as RedisConnectOptions,
  type RedisClient,
} from './redis/index.js';

// The app's class shapes (`lqb shapes`): read them, build a payload the class would accept.
export {
  type ShapesFile,
  type ClassShape,
  type ClassKind,
  type PropertyShape,
  type DeclaredName,
  readShapes,
  parseShapes,
  ShapesError,
  buildShapedPayload,
  ShapeError,
  type ShapedPayloadOptions,
} from './shapes/index.js';
