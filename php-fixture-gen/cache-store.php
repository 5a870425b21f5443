<?php
/**
 * Laravel 8.83's own DatabaseStore (Illuminate\Cache\DatabaseStore behind a Cache\Repository),
 * driven from the tests: one JSON request on standard input, one JSON answer on standard output.
 *
 * Request: {"connection": {Capsule connection config}, "table": "cache", "prefix": "laravel_cache",
 *           "ops": [{"op": "create"} | {"op": "create-locks", "table": "cache_locks"} | {"op": "drop"} | {"op": "get", "key": K}
 *                   | {"op": "forever", "key": K, "value": V} | {"op": "put", "key": K, "value": V, "seconds": S}
 *                   | {"op": "increment", "key": K} | {"op": "forget", "key": K} | {"op": "row", "key": K}
 *                   | {"op": "countException", "uuid": U}]}
 * Answer: one result per op. `row` gives the raw row (value and expiration) as the table holds it.
 * `countException` runs Laravel 8.83's own Worker::markJobAsFailedIfWillExceedMaxExceptions on a
 * DatabaseJob whose payload has that uuid and maxExceptions 1000 (so it never fails the job), and
 * answers the count the cache then holds.
 */
declare(strict_types=1);

require_once 'Illuminate/Cache/autoload.php';
require_once 'Illuminate/Database/autoload.php';
require_once 'Illuminate/Queue/autoload.php';
require_once 'Illuminate/Events/autoload.php';

use Illuminate\Cache\DatabaseStore;
use Illuminate\Cache\Repository;
use Illuminate\Database\Capsule\Manager as Capsule;
use Illuminate\Container\Container;
use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Events\Dispatcher;
use Illuminate\Queue\DatabaseQueue;
use Illuminate\Queue\Jobs\DatabaseJob;
use Illuminate\Queue\Jobs\DatabaseJobRecord;
use Illuminate\Queue\QueueManager;
use Illuminate\Queue\Worker;

$request = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
$capsule = new Capsule();
$capsule->addConnection($request['connection']);
$db = $capsule->getConnection();
$table = $request['table'];
$cache = new Repository(new DatabaseStore($db, $table, $request['prefix']));

/** Laravel's Worker counting one exception of a job with this uuid, then the count its cache holds. */
function count_exception($db, Repository $cache, string $uuid, string $prefix, string $table): int
{
    $container = new Container();
    $exceptions = new class implements ExceptionHandler {
        public function report(Throwable $e) {}
        public function shouldReport(Throwable $e) { return false; }
        public function render($request, Throwable $e) {}
        public function renderForConsole($output, Throwable $e) {}
    };
    $worker = new Worker(new QueueManager($container), new Dispatcher($container), $exceptions, fn () => false);
    $worker->setCache($cache);
    $payload = json_encode(['uuid' => $uuid, 'displayName' => 'App\\Jobs\\Flaky', 'job' => 'Illuminate\\Queue\\CallQueuedHandler@call', 'maxTries' => null, 'maxExceptions' => 1000, 'data' => []]);
    $record = new DatabaseJobRecord((object) ['id' => 1, 'queue' => 'default', 'payload' => $payload, 'attempts' => 1, 'reserved_at' => time(), 'available_at' => time(), 'created_at' => time()]);
    $job = new DatabaseJob($container, new DatabaseQueue($db, 'jobs'), $record, 'database', 'default');
    $method = new ReflectionMethod(Worker::class, 'markJobAsFailedIfWillExceedMaxExceptions');
    $method->setAccessible(true);
    $method->invoke($worker, 'database', $job, new RuntimeException('boom'));
    return (int) $cache->get('job-exceptions:' . $uuid);
}

$answers = [];
foreach ($request['ops'] as $op) {
    switch ($op['op']) {
        case 'create':
            // As Laravel's cache migration stub makes the table.
            $db->getSchemaBuilder()->dropIfExists($table);
            $db->getSchemaBuilder()->create($table, function ($t) {
                $t->string('key')->unique();
                $t->mediumText('value');
                $t->integer('expiration');
            });
            $answers[] = true;
            break;
        case 'create-locks':
            // The lock table Laravel's cache migration stub makes beside it (`cache_locks`).
            $db->getSchemaBuilder()->dropIfExists($op['table']);
            $db->getSchemaBuilder()->create($op['table'], function ($t) {
                $t->string('key')->primary();
                $t->string('owner');
                $t->integer('expiration');
            });
            $answers[] = true;
            break;
        case 'drop':
            $db->getSchemaBuilder()->dropIfExists($table);
            $answers[] = true;
            break;
        case 'get':
            $answers[] = $cache->get($op['key']);
            break;
        case 'forever':
            $answers[] = $cache->forever($op['key'], $op['value']);
            break;
        case 'put':
            $answers[] = $cache->put($op['key'], $op['value'], $op['seconds']);
            break;
        case 'increment':
            $answers[] = $cache->increment($op['key']);
            break;
        case 'forget':
            $answers[] = $cache->forget($op['key']);
            break;
        case 'row':
            $row = $db->table($table)->where('key', $request['prefix'] . $op['key'])->first();
            $answers[] = $row === null ? null : ['value' => $row->value, 'expiration' => (int) $row->expiration, 'now' => time()];
            break;
        case 'countException':
            $answers[] = count_exception($db, $cache, $op['uuid'], $request['prefix'], $table);
            break;
        default:
            throw new InvalidArgumentException("unknown op {$op['op']}");
    }
}
echo json_encode($answers, JSON_THROW_ON_ERROR);
