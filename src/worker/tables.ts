/**
 * A store on one table of a database (failed jobs, unique locks, batches): the database given,
 * or opened from its config when first used (so a worker that never fails a job never opens
 * it), and closed with the store.
 */
import {
  openDatabase,
  quoteName,
  tableExists,
  type Database,
  type DatabaseConfig,
  type DatabaseReach,
  type Queryable,
} from '../database/index.js';

export abstract class TableStore {
  protected readonly db: Database;
  /** The config the database was opened from, when it was not given open. */
  readonly config: DatabaseConfig | undefined;

  constructor(
    db: Database | DatabaseConfig,
    protected readonly table: string,
  ) {
    if ('query' in db) this.db = db;
    else {
      this.config = db;
      this.db = openDatabase(db);
    }
  }

  /** Whether the store's server answers (none for a SQLite file): the worker watches its cache's. */
  get reach(): DatabaseReach | undefined {
    return this.db.reach;
  }

  /** The table's name, quoted for the database's SQL. */
  protected get tableName(): string {
    return quoteName(this.db.dialect, this.table);
  }

  /** Column names, quoted for the database's SQL and joined by commas. */
  protected columns(names: string[]): string {
    return names.map((name) => quoteName(this.db.dialect, name)).join(', ');
  }

  /** Whether the table is there, as the dialect's catalogue says (on `db`, a transaction, when given). */
  hasTable(db: Queryable = this.db): Promise<boolean> {
    return tableExists(db, this.table);
  }

  #there = false;
  /** Whether the table is there, for a store that only reads (a dashboard's): once it is, it is not asked again. */
  protected async tableThere(): Promise<boolean> {
    this.#there ||= await this.hasTable();
    return this.#there;
  }

  /** Closes the database's connections, if any were opened. */
  async close(): Promise<void> {
    await this.db.close();
  }
}
