export type {
  Queue,
  QueueDriver,
  QueuedJob,
  ReservedFields,
  ReservedJob,
  Reservation,
  TakeOnly,
  ThreadRenewal,
  WatchedClient,
} from './contract.js';
export { BookkeepingError, isBookkeepingError } from './errors.js';
export { ClassTally, envelopeField, type ClassCount, type JobState } from './byClass.js';
