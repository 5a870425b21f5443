/**
 * A database URL, as Laravel's DB_URL reads: `sqlite:///path/to/db.sqlite` (or a bare path),
 * `mysql://user:pass@host:3306/db`, `mariadb://…`, `postgres://user@host:5432/db`.
 */

/** The three SQL dialects Laravel's default connections speak. */
export type Dialect = 'sqlite' | 'mysql' | 'pgsql';

/** Where a database is: a SQLite file, or a server's URL for its driver. */
export type DatabaseConfig =
  { dialect: 'sqlite'; filename: string } | { dialect: 'mysql'; url: string } | { dialect: 'pgsql'; url: string };

/** The config for a database URL; a scheme no driver here takes is refused, naming it. */
export function databaseConfig(url: string): DatabaseConfig {
  const scheme = /^([a-z0-9+]+):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined || scheme === 'sqlite' || scheme === 'file') {
    return { dialect: 'sqlite', filename: scheme ? decodeURIComponent(url.replace(/^[a-z]+:\/\//i, '')) : url };
  }
  if (scheme === 'mysql' || scheme === 'mariadb') return { dialect: 'mysql', url: url.replace(/^mariadb:/i, 'mysql:') };
  if (scheme === 'postgres' || scheme === 'postgresql' || scheme === 'pgsql')
    return { dialect: 'pgsql', url: url.replace(/^(pgsql|postgresql):/i, 'postgres:') };
  throw new Error(`unsupported database URL scheme "${scheme}" (use sqlite, mysql, mariadb or postgres)`);
}
