/**
 * Laravel's DatabaseStore locks: rows of `cache_locks (key, owner, expiration)`, the key under
 * the cache prefix with no separator. A release that meets an outage of the server waits for it
 * (see throughOutage): the job it follows ran, and a unique lock left held would refuse its
 * class's next dispatch, maybe for ever.
 */
import { throughOutage, type Database, type DatabaseConfig } from '../../database/index.js';
import { TableStore } from '../tables.js';
import type { UniqueLockStore } from './LockStore.js';

export class DatabaseLockStore extends TableStore implements UniqueLockStore {
  constructor(
    db: Database | DatabaseConfig,
    /** Laravel's `cache.stores.database.lock_table`. */
    table = 'cache_locks',
    /** Laravel's `cache.prefix`; DatabaseStore puts nothing after it. */
    private readonly prefix = 'laravel_cache',
    readonly storeName = 'database',
  ) {
    super(db, table);
  }

  async forceRelease(key: string): Promise<void> {
    await this.db.query(`delete from ${this.tableName} where ${this.columns(['key'])} = ?`, [this.prefix + key]);
  }

  async forceReleaseAll(keys: string[]): Promise<void> {
    if (keys.length > 0)
      await throughOutage(
        () => this.deleteKeys(keys),
        () => false,
      );
  }

  private async deleteKeys(keys: string[]): Promise<void> {
    await this.db.query(
      `delete from ${this.tableName} where ${this.columns(['key'])} in (${keys.map(() => '?').join(', ')})`,
      keys.map((key) => this.prefix + key),
    );
  }

  async release(key: string, owner: string): Promise<boolean> {
    return throughOutage(
      () => this.releaseOwned(key, owner),
      () => false,
    );
  }

  private async releaseOwned(key: string, owner: string): Promise<boolean> {
    return (
      (
        await this.db.query(`delete from ${this.tableName} where ${this.columns(['key'])} = ? and ${this.columns(['owner'])} = ?`, [
          this.prefix + key,
          owner,
        ])
      ).affected > 0
    );
  }

  async owner(key: string): Promise<string | null> {
    const [row] = (
      await this.db.query<{ owner?: unknown; expiration?: unknown }>(
        `select * from ${this.tableName} where ${this.columns(['key'])} = ? limit 1`,
        [this.prefix + key],
      )
    ).rows;
    if (!row || Number(row.expiration) <= Math.floor(Date.now() / 1000)) return null;
    return String(row.owner);
  }

  /**
   * DatabaseLock::acquire: insert the row; when the key is there, take it over only if it is
   * this owner's or has expired. A lock with no expiry is kept a day, as Laravel keeps it.
   */
  async acquire(key: string, owner: string, seconds: number): Promise<boolean> {
    const now = Math.floor(Date.now() / 1000);
    const expiration = seconds > 0 ? now + seconds : now + 86_400;
    const name = this.prefix + key;
    const [keyColumn, ownerColumn, expirationColumn] = [this.columns(['key']), this.columns(['owner']), this.columns(['expiration'])];
    try {
      await this.db.query(`insert into ${this.tableName} (${keyColumn}, ${ownerColumn}, ${expirationColumn}) values (?, ?, ?)`, [
        name,
        owner,
        expiration,
      ]);
      return true;
    } catch {
      const updated = await this.db.query(
        `update ${this.tableName} set ${ownerColumn} = ?, ${expirationColumn} = ? where ${keyColumn} = ? and (${ownerColumn} = ? or ${expirationColumn} <= ?)`,
        [owner, expiration, name, owner, now],
      );
      return updated.affected >= 1;
    }
  }
}
