/**
 * knex and the SQL driver under it, loaded when a database-backed store is first used (failed
 * jobs, unique locks, batches), not when a module is imported: they would otherwise double the
 * start-up time of every worker and one-off command. The drivers are optional peer dependencies
 * (better-sqlite3, the documented default; mysql2; pg): a missing one is named in the error.
 */
import { createRequire } from 'node:module';
import type { Knex } from 'knex';

/** knex client name to the npm package that client needs. */
const DRIVERS: Record<string, string> = {
  'better-sqlite3': 'better-sqlite3',
  mysql2: 'mysql2',
  mysql: 'mysql2',
  pg: 'pg',
  postgres: 'pg',
  postgresql: 'pg',
};

/** Thrown when the SQL driver a database URL needs is not installed. */
export class MissingDriverError extends Error {
  readonly packageName: string;

  constructor(packageName: string, client: string, cause?: unknown) {
    super(`the ${client} database needs the npm package "${packageName}", which is not installed: run \`npm install ${packageName}\``, { cause });
    this.name = 'MissingDriverError';
    this.packageName = packageName;
  }
}

/** The package that a knex config's client needs, when it is one of the drivers this package knows. */
export function driverPackage(config: Knex.Config): string | undefined {
  const client = typeof config.client === 'string' ? config.client : undefined;
  return client === undefined ? undefined : DRIVERS[client];
}

/** A knex instance for a config, after checking that its driver can be loaded. */
export function openKnex(config: Knex.Config): Knex {
  const require = createRequire(import.meta.url);
  const driver = driverPackage(config);
  if (driver !== undefined) {
    try {
      // knex requires the driver from its own place; resolving from knex's place finds what it will.
      createRequire(require.resolve('knex')).resolve(driver);
    } catch (error) {
      throw new MissingDriverError(driver, String(config.client), error);
    }
  }
  return (require('knex') as { knex: (config: Knex.Config) => Knex }).knex(config);
}

/**
 * The database a store works on: a knex instance given by the caller, or one made from a config
 * when the store is first used (so a worker that never fails a job never opens it).
 */
export class LazyKnex {
  #db: Knex | undefined;
  /** The config the instance is made from, when none was given. */
  readonly config: Knex.Config | undefined;

  constructor(db: Knex | Knex.Config) {
    // A knex instance is a function; a config is a plain object.
    if (typeof db === 'function') this.#db = db;
    else this.config = db;
  }

  get db(): Knex {
    return (this.#db ??= openKnex(this.config!));
  }

  /** Closes the instance's pool, if it was opened. */
  async destroy(): Promise<void> {
    await this.#db?.destroy();
  }
}

/**
 * A store on one table of a database (failed jobs, unique locks, batches): the database given,
 * or opened from its config when first used, and closed with the store.
 */
export abstract class TableStore {
  protected readonly knex: LazyKnex;

  constructor(
    db: Knex | Knex.Config,
    protected readonly table: string,
  ) {
    this.knex = new LazyKnex(db);
  }

  protected get db(): Knex {
    return this.knex.db;
  }

  /** Closes the database's pool, if the store opened it. */
  async close(): Promise<void> {
    await this.knex.destroy();
  }
}

/** The type parsers node-postgres takes per connection (its `types` option). */
interface PgTypes {
  getTypeParser(oid: number, format?: string): (value: string) => unknown;
}

/** PostgreSQL's `timestamp` (without time zone): a wall-clock time with no zone to read it in. */
const PG_TIMESTAMP = 1114;

/**
 * node-postgres's parsers, but a zone-less timestamp kept as its text. Laravel's `timestamp`
 * columns are zone-less; pg would read them in this process's time zone. pg is loaded at the
 * first query, where knex loads it, so a worker that never opens the database never loads it.
 */
let pgTypes: PgTypes | undefined;

export const ZONELESS_AS_TEXT: PgTypes = {
  getTypeParser(oid, format) {
    if (oid === PG_TIMESTAMP && format !== 'binary') return (value) => value;
    pgTypes ??= (createRequire(createRequire(import.meta.url).resolve('knex'))('pg') as { types: PgTypes }).types;
    return pgTypes.getTypeParser(oid, format);
  },
};
