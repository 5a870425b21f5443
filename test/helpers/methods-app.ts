/**
 * php-fixture-gen/methods-app's ReserveProduct as Laravel 8.83 itself sees it: what its Queue
 * writes into the envelope (getJobBackoff, getJobExpiration, getDisplayName) and the lock key
 * PendingDispatch takes, computed by Debian's PHP on the real job at a fixed now.
 */
import { join } from 'node:path';
import { php, root } from './php.js';

export const METHODS_APP = join(root, 'php-fixture-gen/methods-app');

/** The values given to dispatch() for ReserveProduct(product 42, warehouse W-1, 'A1', 2). */
export const RESERVE = {
  product: { class: 'App\\Models\\Product', id: 42 },
  warehouse: { class: 'App\\Models\\Warehouse', id: 'W-1' },
  sku: 'A1',
  count: 2,
};

export function laravelWritesReserve(now: number): { backoff: string; retryUntil: number; displayName: string; lockKey: string } {
  const code = `
    require ${JSON.stringify(join(METHODS_APP, 'vendor/autoload.php'))};
    Illuminate\\Support\\Carbon::setTestNow(Illuminate\\Support\\Carbon::createFromTimestamp(${now}));
    $model = function ($class, $key) { $m = new $class(); $m->setAttribute($m->getKeyName(), $key); $m->exists = true; return $m; };
    $job = new App\\Jobs\\ReserveProduct($model(App\\Models\\Product::class, 42), $model(App\\Models\\Warehouse::class, 'W-1'), 'A1', 2);
    $queue = (new ReflectionClass(Illuminate\\Queue\\RedisQueue::class))->newInstanceWithoutConstructor();
    $call = function ($name) use ($queue, $job) { $m = new ReflectionMethod(Illuminate\\Queue\\Queue::class, $name); $m->setAccessible(true); return $m->invoke($queue, $job); };
    echo json_encode(['backoff' => $call('getJobBackoff'), 'retryUntil' => $call('getJobExpiration'), 'displayName' => $call('getDisplayName'), 'lockKey' => 'laravel_unique_job:' . get_class($job) . $job->uniqueId()]);
  `;
  return JSON.parse(php(code).toString('utf8'));
}
