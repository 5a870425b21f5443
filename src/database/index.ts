/**
 * SQL databases (SQLite, MySQL/MariaDB, PostgreSQL) for the tables Laravel keeps there: failed
 * jobs, cache locks, job batches.
 */
export { databaseConfig, type DatabaseConfig, type Dialect } from './url.js';
export { openDatabase, quoteName, DatabaseClosedError, type Database, type Queryable, type QueryResult } from './database.js';
export { MissingDriverError, DRIVER_PACKAGES } from './drivers.js';
