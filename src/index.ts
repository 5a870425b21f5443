/**
 * laravel-queue-bridge: Laravel's queue protocol, spoken from Node.js.
 *
 * Each group below is also its own entry point (`laravel-queue-bridge/php`, `/laravel`, `/redis`,
 * `/worker`, `/shapes`); the Redis-server helpers for tests are in `laravel-queue-bridge/testing`.
 */

// PHP's serialize() format, lossless both ways (also `laravel-queue-bridge/php`).
export {
  unserialize, PhpIncompleteObject, type UnserializeOptions, serialize, type SerializeOptions, toJS,
  fromJS, phpClassOf, PHP_CLASS, PHP_ENUM, PHP_SERIALIZED, type FromJSHint, type JSPhpObject,
  formatPhpFloat, parsePhpFloat, PhpUnserializeError, PhpSerializeError, PhpArray, PhpObject,
  PhpFloat, PhpEnum, PhpRef, PhpSerializable, mangle, demangle, deref, type PhpKey, type PhpValue,
  type PropertyName, type Visibility,
} from './php/index.js';

// Laravel's job envelope, its classes as serialized, the Encrypter (also `laravel-queue-bridge/laravel`).
export {
  decodePayload, encodePayload, commandOf, detectProfile, PayloadError, LARAVEL_PROFILES,
  CALL_QUEUED_HANDLER, type DecodedPayload, type Envelope, type LaravelProfile, type PayloadFormat,
  decodeJson, encodeJson, encodeString, plainJson, isJsonObject, isJsonRecord, jsonNumber,
  JsonSyntaxError, type JsonDecodeOptions, type JsonValue, type JsonObject, Encrypter, DecryptError,
  parseAppKey, supportsCipher, type Cipher, buildJob, buildListener, buildModelIdentifier,
  buildDate, buildPayload, randomId, type JobSpec, type ListenerSpec, type PropertySpec,
  type PayloadOptions, type BuiltPayload, validatePayload, assertValidPayload, schemaFor,
  horizonSchema, PayloadSchemaError, type PayloadIssue, type PayloadValidationOptions, viewCommand,
  type QueueableFields, QUEUEABLE_FIELDS, type PropertyView, type UserJobView, type ListenerView,
  type NotifiableView, type NotificationView, type MailableView, type ClosureView,
  type StringJobView, type EncryptedView, type JobView, CALL_QUEUED_LISTENER,
  SEND_QUEUED_NOTIFICATIONS, SEND_QUEUED_MAILABLE, CALL_QUEUED_CLOSURE, modelClass,
  asModelIdentifier, asDate, asCollection, asEnum, asEloquentModel, MODEL_IDENTIFIER,
  type ModelIdentifierView, type PhpDateView, type CollectionView, type EnumView,
  type EloquentModelView,
} from './laravel/index.js';

// Laravel's Redis queue driver (also `laravel-queue-bridge/redis`).
export {
  RedisQueue, hasHashTag, type RedisQueueOptions, RedisJob, type ReservedFields, connectRedis,
  type ConnectOptions as RedisConnectOptions, describeConnectionError, isCertificateError, whenReady, luaSource,
  registerSteps, type RedisClient, type StepName,
} from './redis/index.js';

// The worker, handlers, failed jobs, locks and batches (also `laravel-queue-bridge/worker`).
export {
  Worker, type WorkerEvent, type WorkerDependencies, type StopReason, defaultWorkerOptions,
  type WorkerOptions, loadHandlers, handlerNames, argsOf, defineHandlers, type Handler,
  type HandlerJob, type HandlerMap, type TypedHandler, type TypedHandlerJob, type TypedHandlerMap,
  type MailableArgs, type MailableJob, type Notifiable, type NotificationArgs, type NotificationJob,
  QueueCache, PauseWatch, RESTART_KEY, ALL_PAUSED_KEY, pausedKey, phpTruthy,
  DatabaseUuidFailedJobProvider, MissingDriverError, knexConfig, laravelTimestamp, type FailedJob,
  type FailedJobProvider, MaxAttemptsExceededError, TimeoutExceededError, ManuallyFailedError,
  NoHandlerError, UndecodableJobError, describeError, exceptionText, resetAttempts, retryFailedJob,
  retryUntilFor, type RetryUntilChoice, RedisLock, RateLimiter, withoutOverlapping, rateLimited,
  overlapLockName, rateLimitKeys, type GuardedHandler, type GuardKey, type Limit, type Limits,
  type WithoutOverlappingOptions, type RateLimitedOptions, CallQueuedHandler, RedisLockStore,
  DatabaseLockStore, acquireUniqueLock, UnnamedLockError, type DispatchLock, uniqueLockKeys,
  uniquenessOf, hiddenContextKey, xxh128, SHOULD_BE_UNIQUE, SHOULD_BE_UNIQUE_UNTIL_PROCESSING,
  type UniqueLockStore, type Uniqueness, DatabaseBatchRepository, allJobsHaveRanExactlyOnce,
  type BatchCounts, type BatchOptions, type BatchRow,
} from './worker/index.js';

// Class shapes and typed handlers (also `laravel-queue-bridge/shapes`).
export {
  type ShapesFile, type ClassShape, type ClassKind, type PropertyShape, type DeclaredName,
  readShapes, parseShapes, shapesSchema, ShapesError, reflectShapes, ReflectError, REFLECT_PHP,
  type ReflectOptions, declarationsFor, typeName, buildShapedPayload, shapedCommand,
  declaredForEnvelope, ShapeError, SHOULD_BE_ENCRYPTED, type ShapedCommand,
  type ShapedCommandOptions, type ShapedPayloadOptions,
} from './shapes/index.js';

// The one way in (issue 16): connect() to a Laravel app's queue; the embeddable worker's types.
export { connect, LaravelQueue, resolveConnection, ConnectionSettingsError, RedisUnavailable, type ConnectOptions, type DispatchOptions, type Dispatched, type QueueWorkerOptions, type ConnectionOptions, type ConnectionSettings } from './connect/index.js';
export { WorkerUsageError, type WorkerEventMap, type WorkerLogger, type WorkerStats, type WorkerCounts, type FailedJobInfo, type StopOptions } from './worker/Worker.js';
