/**
 * The failed-jobs table as the dashboard reads it: a page at a time, counts per queue, and the
 * failures of the last hour by minute (failed_at is the one history Laravel keeps). A store on the
 * same table as `lqb failed`; it never creates the table (a dashboard only looks): no table
 * reads as no failed jobs. Retry, forget and flush go through the provider itself, as the CLI's.
 */
import { DatabaseUuidFailedJobProvider, laravelTimestamp, type FailedJob } from '../worker/index.js';

export class FailedJobsView extends DatabaseUuidFailedJobProvider {
  #hasTable: boolean | undefined;

  /** Whether the table is there; once it is, it is not asked again. */
  private async tableThere(): Promise<boolean> {
    if (this.#hasTable) return true;
    this.#hasTable = await this.hasTable();
    return this.#hasTable;
  }

  /** Newest first, `limit` from `offset`, of one queue or all. */
  async page(offset: number, limit: number, queue?: string): Promise<{ total: number; jobs: FailedJob[] }> {
    if (!(await this.tableThere())) return { total: 0, jobs: [] };
    const where = queue === undefined ? '' : ` where ${this.columns(['queue'])} = ?`;
    const args = queue === undefined ? [] : [queue];
    const [{ rows: counted }, { rows }] = await Promise.all([
      this.db.query(`select count(*) as n from ${this.tableName}${where}`, args),
      this.db.query(
        `select * from ${this.tableName}${where} order by ${this.columns(['id'])} desc limit ${Math.floor(limit)} offset ${Math.floor(offset)}`,
        args,
      ),
    ]);
    return { total: Number(counted[0]?.n ?? 0), jobs: rows.map(failedRow) };
  }

  /** How many failed jobs each queue of a connection has. */
  async countsByQueue(connection: string): Promise<Map<string, number>> {
    if (!(await this.tableThere())) return new Map();
    const [queue, named] = [this.columns(['queue']), this.columns(['connection'])];
    const { rows } = await this.db.query(
      `select ${queue} as q, count(*) as n from ${this.tableName} where ${named} = ? group by ${queue}`,
      [connection],
    );
    return new Map(rows.map((row) => [String(row.q), Number(row.n)]));
  }

  /** failed_at of a connection's failures since `since` (with their queue), for the last hour's chart. */
  async failedSince(connection: string, since: Date): Promise<{ queue: string; at: number }[]> {
    if (!(await this.tableThere())) return [];
    const [queue, failedAt, named] = [this.columns(['queue']), this.columns(['failed_at']), this.columns(['connection'])];
    const { rows } = await this.db.query(
      `select ${queue} as q, ${failedAt} as f from ${this.tableName} where ${named} = ? and ${failedAt} >= ?`,
      [connection, laravelTimestamp(since)],
    );
    return rows.map((row) => ({ queue: String(row.q), at: failedAtSeconds(row.f) }));
  }
}

/** failed_at ("Y-m-d H:i:s", UTC as Laravel writes it, or a driver's Date) as UNIX seconds. */
function failedAtSeconds(value: unknown): number {
  if (value instanceof Date) return Math.floor(value.getTime() / 1000);
  return Math.floor(Date.parse(`${String(value).replace(' ', 'T')}Z`) / 1000);
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
