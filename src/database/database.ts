/**
 * A small SQL layer over the three drivers, in place of a query builder: the stores write their
 * few statements themselves (with `?` placeholders), and this runs them. What differs between
 * the databases is here: placeholders, identifier quoting, how a transaction holds its
 * connection, how rows and counts come back.
 *
 * A transaction runs on one connection, and `FOR UPDATE` (with `SKIP LOCKED` on MySQL 8 /
 * MariaDB 10.6 / PostgreSQL) works inside it as the database gives it; SQLite has no row locks,
 * so its transactions begin EXCLUSIVE (the file's locks taken at the start, as a reader that will
 * write needs, and not while another connection reads: see #beginExclusive) and run one at a time
 * in this process.
 *
 * SQLite's busy wait: better-sqlite3 is synchronous, so its own busy handler would stall the
 * whole event loop while another process (a PHP worker) holds the file's lock. It waits only a
 * few milliseconds itself; past that, a statement, BEGIN EXCLUSIVE or COMMIT that met a lock is
 * tried again after an asynchronous pause, for up to `busyTimeout` in all (60 s by default, as
 * PDO's SQLite driver waits), and only then reports "database is locked".
 */
import { loadDriver } from './drivers.js';
import { DatabaseReach, serverName } from './reach.js';
import type { DatabaseConfig, Dialect } from './url.js';

/** What a statement gave: its rows (a select), and how many rows it changed (insert, update, delete). */
export interface QueryResult<Row = Record<string, unknown>> {
  rows: Row[];
  affected: number;
  /** The id an insert gave its (last) row, where the driver reports one (SQLite, MySQL); PostgreSQL says it with RETURNING. */
  insertId?: string;
}

/** How a database is opened. */
export interface DatabaseOptions {
  /** SQLite: milliseconds a statement waits for another process's lock before "database is locked" (60 000). */
  busyTimeout?: number;
}

/** Something statements run on: the database, or one transaction of it. */
export interface Queryable {
  readonly dialect: Dialect;
  /** Runs one statement; `?` marks each parameter, in order. */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>>;
}

export interface Database extends Queryable {
  /** Whether the server answers, as its statements say (a server's database; a SQLite file has none). */
  readonly reach?: DatabaseReach;
  /** Runs `work` in a transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Closes the connections, if any were opened. */
  close(): Promise<void>;
}

/** A statement on a database after its close(): a store closed with its owner is not opened again behind its back. */
export class DatabaseClosedError extends Error {
  override name = 'DatabaseClosedError';
  constructor() {
    super('the database was closed');
  }
}

/** An identifier quoted for the dialect (`schema.table` part by part), as Laravel's grammars quote. */
export function quoteName(dialect: Dialect, name: string): string {
  const quote = dialect === 'mysql' ? '`' : '"';
  return name
    .split('.')
    .map((part) => quote + part.replaceAll(quote, quote + quote) + quote)
    .join('.');
}

/** `?` placeholders as PostgreSQL's `$1, $2, …` (the stores' statements hold no `?` in a literal). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** Whether a table is there, as the dialect's catalogue says (on `db`, which may be a transaction). */
export async function tableExists(db: Queryable, table: string): Promise<boolean> {
  const sql = {
    sqlite: "select name from sqlite_master where type = 'table' and name = ?",
    mysql: 'select table_name from information_schema.tables where table_name = ? and table_schema = database()',
    pgsql: 'select table_name from information_schema.tables where table_name = ? and table_schema = current_schema()',
  }[db.dialect];
  return (await db.query(sql, [table])).rows.length > 0;
}

/** A database opened on its first statement, so a store that is never used never connects. */
export function openDatabase(config: DatabaseConfig, options: DatabaseOptions = {}): Database {
  switch (config.dialect) {
    case 'sqlite':
      return new SqliteDatabase(config.filename, options.busyTimeout ?? SQLITE_BUSY_TIMEOUT_MS);
    case 'mysql':
      return new MysqlDatabase(config.url);
    case 'pgsql':
      return new PostgresDatabase(config.url);
  }
}

// ---- SQLite (better-sqlite3: synchronous, one connection) ----

interface SqliteStatement {
  reader: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  close(): void;
  readonly inTransaction: boolean;
}

/** As PDO's SQLite driver: a minute's wait for a lock before "database is locked". */
const SQLITE_BUSY_TIMEOUT_MS = 60_000;
/** What SQLite's own (blocking) busy handler waits before a statement comes back busy to be tried again asynchronously. */
const SQLITE_BLOCKING_WAIT_MS = 5;

/** better-sqlite3 takes numbers, strings, bigints, Buffers and null: a boolean is stored as SQLite stores one, 0 or 1. */
const sqliteValue = (value: unknown): unknown => (typeof value === 'boolean' ? Number(value) : value);

/** SQLITE_BUSY (and its extended codes): another connection holds the lock; nothing was done, and it may be tried again. */
function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

class SqliteDatabase implements Database {
  readonly dialect = 'sqlite' as const;
  #connection: SqliteConnection | undefined;
  /** One transaction at a time on the one connection; a statement outside waits for it too. */
  #turn: Promise<unknown> = Promise.resolve();

  constructor(
    readonly filename: string,
    private readonly busyTimeout: number = SQLITE_BUSY_TIMEOUT_MS,
  ) {}

  #closed = false;

  #open(): SqliteConnection {
    if (this.#connection) return this.#connection;
    if (this.#closed) throw new DatabaseClosedError();
    const Sqlite = loadDriver<new (filename: string, options: { timeout: number }) => SqliteConnection>('sqlite');
    return (this.#connection = new Sqlite(this.filename, { timeout: Math.min(SQLITE_BLOCKING_WAIT_MS, this.busyTimeout) }));
  }

  #run<Row>(sql: string, params: readonly unknown[]): QueryResult<Row> {
    return this.#runPrepared<Row>(this.#open().prepare(sql), params);
  }

  #runPrepared<Row>(statement: SqliteStatement, params: readonly unknown[]): QueryResult<Row> {
    const values = params.map(sqliteValue);
    if (statement.reader) return { rows: statement.all(...values) as Row[], affected: 0 };
    const result = statement.run(...values);
    return { rows: [], affected: result.changes, insertId: String(result.lastInsertRowid) };
  }

  /**
   * Runs `step` until it does not meet another process's lock, pausing between tries (a few ms,
   * growing, with jitter so that two waiting workers do not keep meeting), for up to busyTimeout.
   * Only a busy step is tried again: SQLite did nothing for it.
   */
  async #whileBusy<T>(step: () => T): Promise<T> {
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      try {
        return step();
      } catch (error) {
        if (!isSqliteBusy(error) || Date.now() - started >= this.busyTimeout) throw error;
        await pause(Math.min(50, 1 + attempt * 2) * (0.5 + Math.random()));
      }
    }
  }

  /**
   * Begins a transaction holding the whole file (EXCLUSIVE), or fails at once as busy. The lock
   * comes first, so a transaction that reads and then writes never finds, half-way, that another
   * process took it (SQLite refuses that one at once). EXCLUSIVE rather than IMMEDIATE, and no
   * blocking wait: another connection that has read in a transaction it means to write in
   * (Laravel 8's deferred ones: a pop's select, then its update) would be refused its write while
   * this one holds the write lock; EXCLUSIVE is not granted while it reads, and not waiting for
   * it drops the write lock at once, so that reader writes first, and this one is tried again.
   */
  #beginExclusive(connection: SqliteConnection): void {
    connection.exec('PRAGMA busy_timeout = 0');
    try {
      connection.exec('BEGIN EXCLUSIVE');
    } finally {
      connection.exec(`PRAGMA busy_timeout = ${Math.min(SQLITE_BLOCKING_WAIT_MS, this.busyTimeout)}`);
    }
  }

  /**
   * Runs `work` once the transaction before it (if any) has ended, after a turn of the event
   * loop: better-sqlite3 answers synchronously, and a caller that polls an empty table in a loop
   * (a worker with --sleep=0 and jobs in hand) would otherwise never let timers and I/O run, as
   * the deletes of the jobs it waits for.
   */
  #inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#turn.then(nextTurn).then(work);
    this.#turn = result.catch(() => undefined);
    return result;
  }

  /**
   * A statement that writes runs as a transaction of its own, holding the file from the start:
   * alone, SQLite would take the write lock and then wait for readers, and a reader in a
   * deferred transaction (Laravel's pop) would be refused its update at once meanwhile.
   */
  async query<Row = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
    return this.#inTurn(async () => {
      // Prepared once: whether it writes is the statement's own answer.
      const statement = await this.#whileBusy(() => this.#open().prepare(sql));
      if (statement.reader) return this.#whileBusy(() => this.#runPrepared<Row>(statement, params));
      return this.#exclusively(async () => this.#runPrepared<Row>(statement, params));
    });
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#inTurn(() => this.#exclusively(work));
  }

  /** `work` in a transaction begun EXCLUSIVE (see #beginExclusive), committed, or rolled back if it throws. */
  async #exclusively<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const connection = this.#open();
    await this.#whileBusy(() => this.#beginExclusive(connection));
    const tx: Queryable = {
      dialect: 'sqlite',
      query: async <Row>(sql: string, params: readonly unknown[] = []) => this.#run<Row>(sql, params),
    };
    let result: T;
    try {
      result = await work(tx);
    } catch (error) {
      // SQLite may have rolled back already (a full disk); then there is nothing to end.
      if (connection.inTransaction) connection.exec('ROLLBACK');
      throw error;
    }
    try {
      // A COMMIT that meets a reader's lock (rollback journal) leaves the transaction open: try it again.
      await this.#whileBusy(() => connection.exec('COMMIT'));
    } catch (error) {
      if (connection.inTransaction) connection.exec('ROLLBACK');
      throw error;
    }
    return result;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#turn;
    this.#connection?.close();
    this.#connection = undefined;
  }
}

// ---- MySQL and MariaDB (mysql2's promise pool) ----

interface MysqlRunner {
  query(sql: string, params?: readonly unknown[]): Promise<[unknown, unknown]>;
}
interface MysqlConnection extends MysqlRunner {
  beginTransaction(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  release(): void;
}
interface MysqlPool extends MysqlRunner {
  getConnection(): Promise<MysqlConnection>;
  end(): Promise<void>;
  on(event: 'connection', listener: (connection: { on(event: 'error', listener: () => void): void }) => void): void;
}

/** A select gives an array of rows; an insert, update or delete a header with affectedRows. */
async function mysqlQuery<Row>(runner: MysqlRunner, sql: string, params: readonly unknown[]): Promise<QueryResult<Row>> {
  const [result] = await runner.query(sql, params);
  if (Array.isArray(result)) return { rows: result as Row[], affected: 0 };
  const header = result as { affectedRows?: number; insertId?: number | string };
  return {
    rows: [],
    affected: Number(header.affectedRows ?? 0),
    insertId: header.insertId === undefined ? undefined : String(header.insertId),
  };
}

class MysqlDatabase implements Database {
  readonly dialect = 'mysql' as const;
  readonly reach: DatabaseReach;
  #pool: MysqlPool | undefined;

  constructor(private readonly url: string) {
    this.reach = new DatabaseReach(serverName('MySQL', url));
  }

  #closed = false;

  #open(): MysqlPool {
    if (this.#pool) return this.#pool;
    if (this.#closed) throw new DatabaseClosedError();
    const mysql = loadDriver<{ createPool(options: object): MysqlPool }>('mysql', 'mysql2/promise');
    // Dates come back as the text the table holds, as PDO gives them to Laravel: the driver would
    // otherwise read a zone-less `failed_at` as this process's local time, and shift it by the offset.
    const pool = mysql.createPool({ uri: this.url, dateStrings: true });
    // A pooled connection listens for its first 'error' only (to leave the pool): a second one,
    // as a write on a connection the server dropped, would end the process. Its statements
    // report their own trouble.
    pool.on('connection', (connection) => connection.on('error', () => undefined));
    return (this.#pool = pool);
  }

  async query<Row = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
    return this.reach.watch(mysqlQuery<Row>(this.#open(), sql, params));
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.reach.watch(this.#transaction(work));
  }

  async #transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const connection = await this.#open().getConnection();
    try {
      await connection.beginTransaction();
      try {
        const result = await work({ dialect: 'mysql', query: (sql, params = []) => mysqlQuery(connection, sql, params) });
        await connection.commit();
        return result;
      } catch (error) {
        await connection.rollback().catch(() => undefined);
        throw error;
      }
    } finally {
      connection.release();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.end();
  }
}

// ---- PostgreSQL (pg's pool) ----

interface PgRunner {
  query(sql: string, params?: readonly unknown[]): Promise<{ rows: unknown[]; rowCount: number | null; command: string }>;
}
interface PgClient extends PgRunner {
  release(error?: Error | boolean): void;
  on(event: 'error', listener: (error: Error) => void): void;
  off(event: 'error', listener: (error: Error) => void): void;
}
interface PgPool extends PgRunner {
  connect(): Promise<PgClient>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'connect', listener: (client: PgClient) => void): void;
}
/** The type parsers node-postgres takes per connection (its `types` option). */
interface PgTypes {
  getTypeParser(oid: number, format?: string): (value: string) => unknown;
}

/** PostgreSQL's `timestamp` (without time zone): a wall-clock time with no zone to read it in. */
const PG_TIMESTAMP = 1114;

/**
 * node-postgres's parsers, but a zone-less timestamp kept as its text. Laravel's `timestamp`
 * columns are zone-less; pg would read them in this process's time zone.
 */
function zonelessAsText(types: PgTypes): PgTypes {
  return {
    getTypeParser(oid, format) {
      if (oid === PG_TIMESTAMP && format !== 'binary') return (value) => value;
      return types.getTypeParser(oid, format);
    },
  };
}

async function pgQuery<Row>(runner: PgRunner, sql: string, params: readonly unknown[]): Promise<QueryResult<Row>> {
  const result = await runner.query(numbered(sql), params);
  return { rows: result.rows as Row[], affected: result.command === 'SELECT' ? 0 : Number(result.rowCount ?? 0) };
}

class PostgresDatabase implements Database {
  readonly dialect = 'pgsql' as const;
  readonly reach: DatabaseReach;
  #pool: PgPool | undefined;

  constructor(private readonly url: string) {
    this.reach = new DatabaseReach(serverName('PostgreSQL', url));
  }

  #closed = false;

  #open(): PgPool {
    if (this.#pool) return this.#pool;
    if (this.#closed) throw new DatabaseClosedError();
    const pg = loadDriver<{ Pool: new (options: object) => PgPool; types: PgTypes }>('pgsql');
    const pool = new pg.Pool({ connectionString: this.url, types: zonelessAsText(pg.types) });
    // An idle connection the server drops is an 'error' on the pool: without a listener it would
    // end the process. The next statement opens another connection, and reports its own trouble.
    pool.on('error', () => undefined);
    // A lent client's listeners come and go (node-postgres' own query() listens once, and a client
    // released after an error is closed with none): a server's dying words can arrive in such a gap,
    // twice over (its FATAL message, then the closed socket). Every client listens for its whole
    // life, so no error of a connection ever ends the process; whoever uses it still hears of it.
    pool.on('connect', (client) => client.on('error', () => undefined));
    return (this.#pool = pool);
  }

  async query<Row = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
    return this.reach.watch(pgQuery<Row>(this.#open(), sql, params));
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.reach.watch(this.#transaction(work));
  }

  async #transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.#open().connect();
    let broken: Error | undefined;
    // The pool stops listening to a client it lends out: a server gone between two statements
    // (a crash, a restart) is an 'error' on it, which would end the process with no listener.
    // Noted here, and the client is not given back to be used again.
    const lost = (error: Error) => (broken ??= error);
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      try {
        const result = await work({ dialect: 'pgsql', query: (sql, params = []) => pgQuery(client, sql, params) });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
        throw error;
      }
    } finally {
      // A connection whose rollback failed, or that was lost, is not given back to the pool to be used again.
      client.release(broken ?? false);
      client.off('error', lost);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.end();
  }
}
