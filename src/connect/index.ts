/**
 * The library's one way in: connect() to a Laravel app's queue, then dispatch, work, close.
 */
export {
  connect,
  LaravelQueue,
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
} from './connect.js';
export { resolveConnection, readEnvFile, ConnectionSettingsError, type ConnectionOptions, type ConnectionSettings } from './settings.js';
export { RedisUnavailable } from './clients.js';
