/**
 * The failed-jobs table as the dashboard reads it: a page at a time, counts per queue, and the
 * failures of the last hour by minute (failed_at is the one history Laravel keeps). A store on the
 * same table as `lqb failed`; it never creates the table (a dashboard only looks): no table
 * reads as no failed jobs. Retry, forget and flush go through the provider itself, as the CLI's.
 */
import { DatabaseUuidFailedJobProvider, laravelTimestamp, type FailedJob } from '../worker/index.js';
import { classNamingTexts, containsParam, containsSql } from '../database/contains.js';
import { sideOfException, type Side } from './side.js';
import { cutPayloadColumns } from './DatabaseQueueSource.js';

/** Which failures a list, a count, "retry all" and "forget all" take: all that are given must hold. */
export interface FailedFilter {
  /** The job's class (its payload's displayName or commandName). */
  className?: string;
  queue?: string;
  /** Text the exception contains. */
  exception?: string;
}

export class FailedJobsView extends DatabaseUuidFailedJobProvider {
  /** Newest first, `limit` from `offset`, of the failures a filter names (a queue's, a class's, an exception's), or all. */
  async page(
    offset: number,
    limit: number,
    filter: FailedFilter = {},
    options: { cut?: boolean } = {},
  ): Promise<{ total: number; jobs: ListedFailure[] }> {
    if (!(await this.tableThere())) return { total: 0, jobs: [] };
    const { where, args } = this.whereOf(filter);
    const columns = options.cut ? this.cutColumns() : '*';
    const [{ rows: counted }, { rows }] = await Promise.all([
      this.db.query(`select count(*) as n from ${this.tableName}${where}`, args),
      this.db.query(
        `select ${columns} from ${this.tableName}${where} order by ${this.columns(['id'])} desc limit ${Math.floor(limit)} offset ${Math.floor(offset)}`,
        args,
      ),
    ]);
    return { total: Number(counted[0]?.n ?? 0), jobs: rows.map(listedFailure) };
  }

  /** A list reads a large payload's two ends and an exception's first 64 KB (where its trace's frames are), never a whole row. */
  private cutColumns(): string {
    return [
      ...['id', 'uuid', 'connection', 'queue', 'failed_at'].map((c) => this.columns([c])),
      ...cutPayloadColumns(this.db.dialect, this.columns(['payload'])),
      `substr(${this.columns(['exception'])}, 1, ${EXCEPTION_READ}) as ${this.columns(['exception'])}`,
      `${this.db.dialect === 'sqlite' ? 'length' : 'char_length'}(${this.columns(['exception'])}) as exception_length`,
    ].join(', ');
  }

  /** One failure as a page shows it (cut as a list's), by uuid; undefined when there is none. */
  async findShown(uuid: string): Promise<ListedFailure | undefined> {
    if (!(await this.tableThere())) return undefined;
    const { rows } = await this.db.query(`select ${this.cutColumns()} from ${this.tableName} where ${this.columns(['uuid'])} = ?`, [uuid]);
    return rows[0] ? listedFailure(rows[0]) : undefined;
  }

  /**
   * How many failures a filter names now, and the highest id among them: what "retry all" and
   * "forget all" then act on (ids up to it), so a failure recorded after the count is left.
   */
  async matching(filter: FailedFilter): Promise<{ count: number; upTo: number }> {
    if (!(await this.tableThere())) return { count: 0, upTo: 0 };
    const { where, args } = this.whereOf(filter);
    const id = this.columns(['id']);
    const { rows } = await this.db.query(`select count(*) as n, max(${id}) as m from ${this.tableName}${where}`, args);
    return { count: Number(rows[0]?.n ?? 0), upTo: Number(rows[0]?.m ?? 0) };
  }

  /** The uuids a filter names among ids up to `upTo`, oldest first, `limit` after id `after`. */
  async uuidsMatching(filter: FailedFilter, upTo: number, after: number, limit: number): Promise<{ id: number; uuid: string }[]> {
    if (!(await this.tableThere())) return [];
    const id = this.columns(['id']);
    const { where, args } = this.whereOf(filter, [`${id} <= ?`, `${id} > ?`], [upTo, after]);
    const { rows } = await this.db.query(
      `select ${id} as id, ${this.columns(['uuid'])} as uuid from ${this.tableName}${where} order by ${id} limit ${Math.floor(limit)}`,
      args,
    );
    return rows.map((row) => ({ id: Number(row.id), uuid: String(row.uuid) }));
  }

  /**
   * The SQL a filter makes: the queue by equality; the class as the payload names it
   * (displayName or commandName, in each spelling json_encode gives); the exception's text
   * contained (src/database/contains.ts, as the database queue's share matches a class).
   */
  private whereOf(filter: FailedFilter, more: string[] = [], moreArgs: unknown[] = []): { where: string; args: unknown[] } {
    const clauses = [...more];
    const args: unknown[] = [...moreArgs];
    const contains = (column: string, texts: string[]) => {
      clauses.push(`(${texts.map(() => containsSql(this.db.dialect, this.columns([column]))).join(' or ')})`);
      args.push(...texts.map((text) => containsParam(this.db.dialect, text)));
    };
    if (filter.queue) {
      clauses.push(`${this.columns(['queue'])} = ?`);
      args.push(filter.queue);
    }
    if (filter.className) contains('payload', classNamingTexts(filter.className));
    if (filter.exception) contains('exception', [filter.exception]);
    return { where: clauses.length ? ` where ${clauses.join(' and ')}` : '', args };
  }

  /** How many failed jobs each queue of a connection has, and how many failed since `since`, in one pass over the table. */
  async countsByQueueSince(connection: string, since: Date): Promise<{ byQueue: Map<string, number>; since: number }> {
    if (!(await this.tableThere())) return { byQueue: new Map(), since: 0 };
    const [queue, named, failedAt] = [this.columns(['queue']), this.columns(['connection']), this.columns(['failed_at'])];
    const { rows } = await this.db.query(
      `select ${queue} as q, count(*) as n, sum(case when ${failedAt} >= ? then 1 else 0 end) as s from ${this.tableName} where ${named} = ? group by ${queue}`,
      [laravelTimestamp(since), connection],
    );
    return {
      byQueue: new Map(rows.map((row) => [String(row.q), Number(row.n)])),
      since: rows.reduce((sum, row) => sum + Number(row.s ?? 0), 0),
    };
  }

  /**
   * The failures since `since` with their class and the side their trace names, newest first, at
   * most `limit`: the payload's start (where its displayName is) and the exception's first 64 KB
   * are read, never a whole payload.
   */
  async classesSince(connection: string, since: Date, limit = 1000): Promise<{ queue: string; className: string; side: Side | null }[]> {
    if (!(await this.tableThere())) return [];
    const [queue, failedAt, named, id] = [
      this.columns(['queue']),
      this.columns(['failed_at']),
      this.columns(['connection']),
      this.columns(['id']),
    ];
    const { rows } = await this.db.query(
      `select ${queue} as q, substr(${this.columns(['payload'])}, 1, 2048) as p, substr(${this.columns(['exception'])}, 1, 65536) as e from ${this.tableName} where ${named} = ? and ${failedAt} >= ? order by ${id} desc limit ${Math.floor(limit)}`,
      [connection, laravelTimestamp(since)],
    );
    return rows.map((row) => ({ queue: String(row.q), className: classOfHead(String(row.p)), side: sideOfException(String(row.e)) }));
  }

  /**
   * failed_at of a connection's failures since `since` (with their queue), for the last hour's
   * chart: counted per queue and second by the database, so an hour of 100,000 failures is a
   * few thousand rows at most.
   */
  async failedSince(connection: string, since: Date): Promise<{ queue: string; at: number; count: number }[]> {
    if (!(await this.tableThere())) return [];
    const [queue, failedAt, named] = [this.columns(['queue']), this.columns(['failed_at']), this.columns(['connection'])];
    const { rows } = await this.db.query(
      `select ${queue} as q, ${failedAt} as f, count(*) as n from ${this.tableName} where ${named} = ? and ${failedAt} >= ? group by ${queue}, ${failedAt}`,
      [connection, laravelTimestamp(since)],
    );
    return rows.map((row) => ({ queue: String(row.q), at: failedAtSeconds(row.f), count: Number(row.n) }));
  }
}

/** The displayName a payload's first characters give (Laravel writes it second, after uuid), else its job; '?' when neither is there. */
function classOfHead(head: string): string {
  const found = /"displayName":("(?:[^"\\]|\\.)*")/.exec(head) ?? /"job":("(?:[^"\\]|\\.)*")/.exec(head);
  try {
    return found ? (JSON.parse(found[1]!) as string) : '?';
  } catch {
    return '?';
  }
}

/** failed_at ("Y-m-d H:i:s", UTC as Laravel writes it, or a driver's Date) as UNIX seconds. */
function failedAtSeconds(value: unknown): number {
  if (value instanceof Date) return Math.floor(value.getTime() / 1000);
  return Math.floor(Date.parse(`${String(value).replace(' ', 'T')}Z`) / 1000);
}

/** A failure as a list read it: whole, or with its payload cut to its two ends (`cut`). */
export type ListedFailure = FailedJob & {
  cut?: { bytes: number; tail: string };
  /** A cut read's: the exception's whole length in characters (`exception` holds its first EXCEPTION_READ). */
  exceptionLength?: number;
};

/** The most of an exception a list reads: its message and its trace's frames, as a rule. */
const EXCEPTION_READ = 64 * 1024;

function listedFailure(row: Record<string, unknown>): ListedFailure {
  const tail = row.payload_tail;
  return {
    ...failedRow(row),
    ...(tail !== null && tail !== undefined ? { cut: { bytes: Number(row.payload_bytes), tail: String(tail) } } : {}),
    ...(row.exception_length !== undefined ? { exceptionLength: Number(row.exception_length) } : {}),
  };
}

function failedRow(row: Record<string, unknown>): FailedJob {
  return {
    id: Number(row.id),
    uuid: String(row.uuid),
    connection: String(row.connection),
    queue: String(row.queue),
    payload: String(row.payload),
    exception: String(row.exception),
    failed_at: row.failed_at instanceof Date ? laravelTimestamp(row.failed_at) : String(row.failed_at),
  };
}
