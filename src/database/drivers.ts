/**
 * The SQL drivers, optional peer dependencies (better-sqlite3, mysql2, pg), loaded when a database
 * is first used, not when a module is imported: a worker that never fails a job never loads one.
 * A missing one is named, with the line that installs it.
 */
import { requireBeside } from '../internal/module-url.js';
import type { Dialect } from './url.js';

/** The npm package each dialect's driver is. */
export const DRIVER_PACKAGES: Record<Dialect, string> = { sqlite: 'better-sqlite3', mysql: 'mysql2', pgsql: 'pg' };

const NAMES: Record<Dialect, string> = { sqlite: 'SQLite', mysql: 'MySQL/MariaDB', pgsql: 'PostgreSQL' };

/** Thrown when the SQL driver a database URL needs is not installed. */
export class MissingDriverError extends Error {
  readonly packageName: string;

  constructor(packageName: string, database: string, cause?: unknown) {
    super(`the ${database} database needs the npm package "${packageName}", which is not installed: run \`npm install ${packageName}\``, {
      cause,
    });
    this.name = 'MissingDriverError';
    this.packageName = packageName;
  }
}

/** A driver's module (`mysql2/promise` for MySQL's promise API); a driver that is not installed is a MissingDriverError. */
export function loadDriver<T>(dialect: Dialect, entry: string = DRIVER_PACKAGES[dialect]): T {
  const requireDriver = requireBeside(import.meta.url);
  const packageName = DRIVER_PACKAGES[dialect];
  try {
    requireDriver.resolve(entry);
  } catch (error) {
    throw new MissingDriverError(packageName, NAMES[dialect], error);
  }
  return requireDriver(entry) as T;
}
