/**
 * The worker: Laravel's queue:work loop and rules, failed jobs where Laravel keeps them.
 */
export { Worker, type WorkerEvent, type WorkerDependencies, type StopReason } from './Worker.js';
export { defaultWorkerOptions, type WorkerOptions } from './WorkerOptions.js';
export { loadHandlers, handlerNames, type Handler, type HandlerJob, type HandlerMap } from './handlers.js';
export { QueueCache, RESTART_KEY } from './cache.js';
export { DatabaseUuidFailedJobProvider, knexConfig, laravelTimestamp, type FailedJob, type FailedJobProvider } from './FailedJobProvider.js';
export { MaxAttemptsExceededError, TimeoutExceededError, ManuallyFailedError, NoHandlerError, UndecodableJobError, describeError, exceptionText } from './errors.js';
export { resetAttempts, retryFailedJob } from './retry.js';
export { CallQueuedHandler } from './CallQueuedHandler.js';
export { RedisLockStore, DatabaseLockStore, uniqueLockKeys, uniquenessOf, hiddenContextKey, xxh128, SHOULD_BE_UNIQUE, SHOULD_BE_UNIQUE_UNTIL_PROCESSING, type UniqueLockStore, type Uniqueness } from './UniqueLock.js';
export { DatabaseBatchRepository, allJobsHaveRanExactlyOnce, type BatchCounts, type BatchOptions, type BatchRow } from './BatchRepository.js';
