/**
 * The dashboard `lqb ui` serves, as a request handler any Node HTTP server can mount.
 */
export { createDashboard, type Dashboard, type DashboardOptions } from './dashboard.js';
export { startDashboard, DashboardListenError, type StartDashboardOptions, type StartedDashboard } from './start.js';
export { RedisQueueSource, type QueueSource, type QueueCounts, type StoredJob } from './source.js';
export { DatabaseQueueSource, type DatabaseQueueSourceOptions } from './DatabaseQueueSource.js';
export {
  HorizonView,
  HORIZON_LISTS,
  type HorizonJob,
  type HorizonList,
  type HorizonListedJob,
  type HorizonQueueMetrics,
} from './horizon.js';
export { summarizeJob, withModels, type JobSummary, type JobState } from './jobs.js';
export { sideOfException, type Side } from './side.js';
export { cancelDelayed, type CancelOutcome } from '../redis/cancel.js';
