export type { Queue, QueueDriver, QueuedJob, ReservedFields, ReservedJob, Reservation, ThreadRenewal, WatchedClient } from './contract.js';
export { BookkeepingError, isBookkeepingError } from './errors.js';
