/**
 * The worker's cache on Laravel's `database` cache store (CACHE_STORE=database, the default of a
 * Laravel 11+ app), against Laravel 8.83's own DatabaseStore and Worker run by PHP on the same
 * table, on SQLite, MariaDB and PostgreSQL: the restart signal, maxExceptions counts and
 * queue:pause's switches are the rows Laravel writes, and each side reads what the other wrote.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseQueueCache } from '../../src/worker/DatabaseQueueCache.js';
import { databaseConfig } from '../../src/database/index.js';
import { root } from '../helpers/php.js';

const dir = mkdtempSync(join(tmpdir(), 'lqb-db-cache-'));
const sqliteFile = join(dir, 'cache.sqlite');
writeFileSync(sqliteFile, '');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DATABASES = [
  { name: 'SQLite', url: `sqlite://${sqliteFile}`, php: { driver: 'sqlite', database: sqliteFile, prefix: '' } },
  {
    name: 'MariaDB',
    url: process.env.LQB_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
    php: {
      driver: 'mysql',
      host: '127.0.0.1',
      port: 3306,
      database: 'test',
      username: 'root',
      password: '',
      charset: 'utf8mb4',
      collation: 'utf8mb4_unicode_ci',
      prefix: '',
    },
  },
  {
    name: 'PostgreSQL',
    url: process.env.LQB_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    php: {
      driver: 'pgsql',
      host: '127.0.0.1',
      port: 5432,
      database: 'test',
      username: 'postgres',
      password: '',
      charset: 'utf8',
      prefix: '',
      schema: 'public',
    },
  },
] as const;

type Op =
  | { op: 'create' | 'drop' }
  | { op: 'get' | 'increment' | 'forget' | 'row'; key: string }
  | { op: 'forever'; key: string; value: unknown }
  | { op: 'put'; key: string; value: unknown; seconds: number }
  | { op: 'countException'; uuid: string };

describe.each(DATABASES)('the worker cache on the database store, $name', (database) => {
  const table = `lqb_cache_${randomBytes(4).toString('hex')}`;
  const prefix = 'laravel_cache';
  /** Laravel 8.83's DatabaseStore (and Worker, for countException), one PHP run for all the ops. */
  const laravel = (...ops: Op[]): unknown[] =>
    JSON.parse(
      execFileSync('php', [`${root}php-fixture-gen/cache-store.php`], {
        input: JSON.stringify({ connection: database.php, table, prefix, ops }),
        encoding: 'utf8',
      }),
    ) as unknown[];
  const node = () => new DatabaseQueueCache(databaseConfig(database.url), table, prefix);

  afterAll(() => void laravel({ op: 'drop' }));

  it('writes the restart signal as the row Laravel writes, and each side reads the other’s', async () => {
    laravel({ op: 'create' });
    const cache = node();
    try {
      await cache.signalRestart(1_700_000_123);
      const [phpReads, nodeRow] = laravel({ op: 'get', key: 'illuminate:queue:restart' }, { op: 'row', key: 'illuminate:queue:restart' });
      expect(phpReads, 'Laravel’s Cache::get of the restart signal Node wrote').toBe(1_700_000_123);
      laravel({ op: 'forever', key: 'lqb-probe', value: 1_700_000_123 });
      const [phpRow] = laravel({ op: 'row', key: 'lqb-probe' }) as { value: string; expiration: number; now: number }[];
      const written = nodeRow as { value: string; expiration: number; now: number };
      expect(written.value, 'the restart row’s value, against the row Laravel’s forever() writes').toBe(phpRow!.value);
      expect(
        Math.abs(written.expiration - phpRow!.expiration),
        'the restart row’s expiration, against Laravel’s forever()',
      ).toBeLessThanOrEqual(5);

      laravel({ op: 'forever', key: 'illuminate:queue:restart', value: 1_700_000_456 });
      expect(await cache.lastRestart(), 'Node’s read of the restart signal Laravel wrote').toBe(1_700_000_456);
    } finally {
      await cache.close();
    }
  });

  it('counts a job’s exceptions with Laravel’s worker on one count, and forgets it where Laravel looks', async () => {
    const cache = node();
    const uuid = `u-${randomBytes(4).toString('hex')}`;
    try {
      const counts = [
        await cache.countException(uuid),
        ...(laravel({ op: 'countException', uuid }) as number[]),
        await cache.countException(uuid),
        ...(laravel({ op: 'countException', uuid }) as number[]),
      ];
      expect(counts, 'the exception count after Node, Laravel’s Worker, Node, Laravel’s Worker').toEqual([1, 2, 3, 4]);
      const [row] = laravel({ op: 'row', key: `job-exceptions:${uuid}` }) as { value: string; expiration: number; now: number }[];
      expect(row!.value, 'the count as the row holds it').toBe('i:4;');
      expect(row!.expiration - row!.now, 'the count’s lifetime: a day from its first put').toBeGreaterThan(86_400 - 10);
      await cache.forgetExceptions(uuid);
      expect(laravel({ op: 'get', key: `job-exceptions:${uuid}` })[0], 'Laravel’s read after Node forgot the count').toBeNull();
    } finally {
      await cache.close();
    }
  });

  it('pauses and resumes queues as queue:pause does, read by both sides', async () => {
    const cache = node();
    try {
      laravel({ op: 'forever', key: 'illuminate:queue:paused:database:emails', value: true });
      expect(
        [...(await cache.pausedQueues('database', ['emails', 'reports']))],
        'queues Node sees paused after Laravel paused emails',
      ).toEqual(['emails']);
      await cache.pause('database', 'reports', 60);
      const [reportsPaused, reportsRow] = laravel(
        { op: 'get', key: 'illuminate:queue:paused:database:reports' },
        { op: 'row', key: 'illuminate:queue:paused:database:reports' },
      ) as [unknown, { value: string; expiration: number; now: number }];
      expect(reportsPaused, 'Laravel’s read of the pause Node wrote for 60 s').toBe(true);
      expect(reportsRow.value, 'the pause as the row holds it').toBe('b:1;');
      expect(Math.abs(reportsRow.expiration - reportsRow.now - 60), 'the pause’s expiry').toBeLessThanOrEqual(5);

      await cache.resume('database', 'reports');
      laravel({ op: 'forget', key: 'illuminate:queue:paused:database:emails' });
      expect([...(await cache.pausedQueues('database', ['emails', 'reports']))], 'queues paused after both resumed').toEqual([]);
      expect(laravel({ op: 'get', key: 'illuminate:queue:paused:database:reports' })[0], 'Laravel’s read after Node resumed').toBeNull();

      await cache.pauseAll(true);
      expect([...(await cache.pausedQueues('database', ['emails', 'reports']))], 'queues paused by the switch for all').toEqual([
        'emails',
        'reports',
      ]);
      await cache.pauseAll(false);
      expect(
        laravel({ op: 'get', key: 'illuminate:queues:paused' })[0],
        'Laravel’s read of the switch for all after Node resumed all',
      ).toBeNull();
    } finally {
      await cache.close();
    }
  });

  it('takes an expired row for no value and deletes it, as DatabaseStore::get does', async () => {
    let clock = 1_000;
    const cache = new DatabaseQueueCache(databaseConfig(database.url), table, prefix, () => clock);
    try {
      await cache.put('lqb-expiring', 5, 10);
      expect(await cache.get('lqb-expiring'), 'the value before its expiry').toBe(5);
      clock += 10;
      expect(await cache.get('lqb-expiring'), 'the value at its expiry').toBeUndefined();
      expect(laravel({ op: 'row', key: 'lqb-expiring' })[0], 'the expired row after the read').toBeNull();
    } finally {
      await cache.close();
    }
  });
});
