/**
 * `laravel-queue-bridge/testing`: a fake of connect()'s queue that records what it would push
 * (fakeQueue), one payload run as the worker runs it with no Redis and no database (runJob), and
 * Redis servers for tests and demos — a free loopback port, a wait until a Redis answers, and a
 * `redis-server` of our own when none is running.
 */
export { freePort, redisAnswers, waitForRedis, startRedisServer } from './redis-server.js';
export { fakeQueue, FakeQueue, type FakeDispatch, type FakeBatch, type FakeQueueOptions } from './fakeQueue.js';
export type { PayloadMakers } from '../connect/connect.js';
export { runJob, type RunJobOptions, type RunJobResult, type JobOutcome, type BatchCounts } from './runJob.js';
