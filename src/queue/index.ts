export type { Queue, QueueDriver, QueuedJob, ReservedFields, ReservedJob } from './contract.js';
