/**
 * Laravel's Redis queue driver: keys, atomic steps, reservations.
 */
export { RedisQueue, hasHashTag, type RedisQueueOptions, type QueueHorizonRecords, type QueuedJob } from './RedisQueue.js';
export { cancelDelayed, type CancelOutcome } from './cancel.js';
export { RedisJob, type ReservedFields } from './RedisJob.js';
export { connectRedis, type ConnectOptions } from './connect.js';
export { describeConnectionError, isCertificateError, readyAgain, whenReady } from './ready.js';
export { luaSource, registerSteps, releaseLockStep, type RedisClient, type StepName } from './scripts.js';
export { BUSY_RETRY_MS, BookkeepingError, isBookkeepingError, isBusyError, whileBusy } from './busy.js';
export { UnconfirmedCommandError, outcomeUnknown, settleUnansweredOnClose } from './unconfirmed.js';
