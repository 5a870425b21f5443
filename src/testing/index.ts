/**
 * `laravel-queue-bridge/testing`: Redis servers for tests and demos — a free loopback port, a
 * wait until a Redis answers, and a `redis-server` of our own when none is running.
 */
export { freePort, redisAnswers, waitForRedis, startRedisServer } from './redis-server.js';
