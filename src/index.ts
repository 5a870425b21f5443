/**
 * laravel-queue-bridge: Laravel's queue protocol, spoken from Node.js.
 */
export * from './php/index.js';
export * from './laravel/index.js';
export * from './redis/index.js';
export * from './worker/index.js';
export * from './shapes/index.js';
