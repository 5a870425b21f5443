/**
 * laravel-queue-bridge: Laravel's queue protocol, spoken from Node.js.
 */
export * from './php/index.js';
export * from './laravel/index.js';
export * from './redis/index.js';
export * from './worker/index.js';
export * from './shapes/index.js';

// The one way in (issue 16): connect() to a Laravel app's queue; the embeddable worker's types.
export { connect, LaravelQueue, resolveConnection, ConnectionSettingsError, RedisUnavailable, type ConnectOptions, type DispatchOptions, type Dispatched, type QueueWorkerOptions, type ConnectionOptions, type ConnectionSettings } from './connect/index.js';
export { WorkerUsageError, type WorkerEventMap, type WorkerLogger, type WorkerStats, type WorkerCounts, type FailedJobInfo, type StopOptions } from './worker/Worker.js';
