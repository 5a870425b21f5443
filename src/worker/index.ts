/**
 * The worker: Laravel's queue:work loop and rules, failed jobs where Laravel keeps them.
 */
import { Worker } from './Worker.js';
import { telemetryRecorder } from '../telemetry/jobs.js';

// The package's workers are heard by OpenTelemetry (their `telemetry` option): wired here, at
// the package's entry, so that the worker itself never imports src/telemetry/.
if (!Worker.defaultRecorders.includes(telemetryRecorder)) Worker.defaultRecorders.push(telemetryRecorder);

export {
  Worker,
  WorkerUsageError,
  type WorkerEvent,
  type WorkerEventMap,
  type WorkerDependencies,
  type WorkerLogger,
  type WorkerStats,
  type WorkerCounts,
  type FailedJobInfo,
  type StopOptions,
  type StopReason,
} from './Worker.js';
export { defaultWorkerOptions, type WorkerOptions } from './WorkerOptions.js';
export { DatabaseUnreachableError, RedisUnreachableError, type WorkerHealth } from './health.js';
export { sandboxedHandlers, type SandboxedHandlers, type SandboxOptions } from './sandbox/pool.js';
export {
  loadHandlers,
  handlerNames,
  argsOf,
  defineHandlers,
  type Handler,
  type HandlerJob,
  type HandlerMap,
  type TypedHandler,
  type HandlerObject,
  type FailedHook,
  type TypedHandlerJob,
  type TypedHandlerMap,
  type JobMethods,
  type TypedJobMethods,
  type MethodJob,
  JOB_METHODS,
  type MailableArgs,
  type MailableJob,
  type Notifiable,
  type NotificationArgs,
  type NotificationJob,
} from './handlers.js';
export { QueueCache, PauseWatch, RESTART_KEY, ALL_PAUSED_KEY, pausedKey, phpTruthy, phpTruthyValue, type WorkerCache } from './cache.js';
export { DatabaseQueueCache } from './DatabaseQueueCache.js';
export { DatabaseUuidFailedJobProvider, laravelTimestamp, type FailedJob, type FailedJobProvider } from './FailedJobProvider.js';
export {
  databaseConfig,
  openDatabase,
  quoteName,
  type Database,
  type DatabaseConfig,
  type Dialect,
  type Queryable,
  type QueryResult,
} from '../database/index.js';
export { MissingDriverError, DRIVER_PACKAGES } from '../database/index.js';
export {
  MaxAttemptsExceededError,
  TimeoutExceededError,
  ManuallyFailedError,
  NoHandlerError,
  UndecodableJobError,
  describeError,
  exceptionText,
} from './errors.js';
export { resetAttempts, retryFailedJob, retryUntilFor, type RetryUntilChoice } from './retry.js';
export { RedisLock } from './locks/index.js';
export { RateLimiter } from './RateLimiter.js';
export {
  withoutOverlapping,
  rateLimited,
  overlapLockName,
  rateLimitKeys,
  type GuardedHandler,
  type GuardKey,
  type Limit,
  type Limits,
  type WithoutOverlappingOptions,
  type RateLimitedOptions,
} from './middleware.js';
export { CallQueuedHandler } from './CallQueuedHandler.js';
export {
  RedisLockStore,
  DatabaseLockStore,
  acquireUniqueLock,
  planUniqueLock,
  uniqueLockFields,
  hiddenUniqueContext,
  UnnamedLockError,
  type DispatchLock,
  type PlannedLock,
  type UniqueContext,
  uniqueLockKeys,
  uniquenessOf,
  hiddenContextKey,
  xxh128,
  SHOULD_BE_UNIQUE,
  SHOULD_BE_UNIQUE_UNTIL_PROCESSING,
  type UniqueLockStore,
  type Uniqueness,
} from './locks/index.js';
export {
  DatabaseBatchRepository,
  allJobsHaveRanExactlyOnce,
  type BatchCounts,
  type BatchOptions,
  type BatchRow,
} from './BatchRepository.js';
