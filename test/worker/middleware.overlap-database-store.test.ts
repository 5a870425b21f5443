/**
 * withoutOverlapping() on a worker whose cache store is the database store (`cacheStore:
 * 'database'`): the lock is Cache::lock()'s row in `cache_locks`, where Laravel 8.83's own
 * WithoutOverlapping (DatabaseStore::lock, run here by PHP on the same SQLite file) takes and
 * looks for it, not a Redis key PHP never sees.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, withoutOverlapping } from '../../src/index.js';
import { php } from '../helpers/php.js';
import { REDIS_URL, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const dir = mkdtempSync(join(tmpdir(), 'lqb-overlap-db-'));
const lockDb = join(dir, 'locks.sqlite');
// An empty file is an empty SQLite database; Laravel's connector wants the file there.
writeFileSync(lockDb, '');
const prefix = uniquePrefix('overlap-db');
const NAME = 'laravel-queue-overlap:App\\Jobs\\ShipOrder:7';

afterAll(async () => {
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

/** Laravel's DatabaseStore (prefix laravel_cache, table cache_locks) on the SQLite file: `get` takes the lock, `free` force-releases it. */
function laravelLock(action: 'get' | 'free'): boolean {
  const code = `
    require 'Illuminate/autoload.php';
    $capsule = new Illuminate\\Database\\Capsule\\Manager;
    $capsule->addConnection(['driver' => 'sqlite', 'database' => ${JSON.stringify(lockDb)}, 'prefix' => '']);
    $db = $capsule->getConnection();
    if (!$db->getSchemaBuilder()->hasTable('cache_locks')) {
      $db->getSchemaBuilder()->create('cache_locks', function ($t) { $t->string('key')->primary(); $t->string('owner'); $t->integer('expiration'); });
    }
    // The store's value table beside it, as Laravel's cache migration makes both: the worker's cache (restart, pauses) is read there.
    if (!$db->getSchemaBuilder()->hasTable('cache')) {
      $db->getSchemaBuilder()->create('cache', function ($t) { $t->string('key')->unique(); $t->mediumText('value'); $t->integer('expiration'); });
    }
    $lock = (new Illuminate\\Cache\\DatabaseStore($db, 'cache', 'laravel_cache', 'cache_locks'))->lock(${JSON.stringify(NAME)}, 0);
    echo json_encode(${JSON.stringify(action)} === 'get' ? $lock->get() : ($lock->forceRelease() ?? true));
  `;
  return JSON.parse(php(code).toString('utf8')) as boolean;
}

describe('withoutOverlapping() with the database cache store', () => {
  it('keeps out while PHP holds the cache_locks row, and holds the row itself while its handler runs', async () => {
    laravelLock('free');
    const queue = await connect({ redis: REDIS_URL, prefix, cacheStore: 'database', lockDb, failedDb: join(dir, 'failed.sqlite') });
    try {
      const seen: boolean[] = [];
      const handlers = {
        'App\\Jobs\\ShipOrder': withoutOverlapping(
          (job) => (job.command as { orderId: number }).orderId,
          { releaseAfter: 0 },
          async () => void seen.push(laravelLock('get')),
        ),
      };
      const events: unknown[] = [];
      const run = () => queue.worker(handlers, { queues: ['overlap'], once: true, sleep: 0, log: (e) => void events.push(e) }).run();
      await queue.dispatch('App\\Jobs\\ShipOrder', { orderId: 7 }, { queue: 'overlap', tries: 3 });

      expect(laravelLock('get'), 'Laravel took the lock first').toBe(true);
      await run();
      expect(seen, 'the handler ran while Laravel’s WithoutOverlapping held the lock').toEqual([]);
      expect(await queue.size('overlap'), 'the job was not released back to wait for the lock').toBe(1);

      laravelLock('free');
      await run();
      expect(seen, `while the handler ran, Laravel’s Cache::lock()->get() of the same name ${JSON.stringify(events)}`).toEqual([false]);
      expect(laravelLock('get'), 'the lock after the handler: free, Laravel takes it').toBe(true);
    } finally {
      laravelLock('free');
      await queue.close();
    }
  });
});
