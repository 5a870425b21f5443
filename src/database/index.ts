/**
 * SQL databases (SQLite, MySQL/MariaDB, PostgreSQL) for the tables Laravel keeps there: failed
 * jobs, cache locks, job batches, and the `jobs` table of Laravel's database queue driver.
 */
export { databaseConfig, type DatabaseConfig, type Dialect } from './url.js';
export {
  openDatabase,
  quoteName,
  tableExists,
  DatabaseClosedError,
  type Database,
  type DatabaseOptions,
  type Queryable,
  type QueryResult,
} from './database.js';
export { DatabaseReach, isConnectionError, throughOutage } from './reach.js';
export { MissingDriverError, DRIVER_PACKAGES } from './drivers.js';
export { DatabaseQueue, DatabaseReserveError, lockForPopping, phpVersionCompare, type DatabaseQueueOptions } from './DatabaseQueue.js';
export { DatabaseJob, type JobRecord } from './DatabaseJob.js';
