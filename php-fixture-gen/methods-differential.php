<?php
/**
 * The PHP side of the differential test of translated methods (test/shapes/expression.test.ts):
 * many instances of methods-app's jobs, each with random property values, serialize()d, and what
 * Laravel 8.83 makes of each method's result, computed by PHP itself on the live object:
 *
 *   uniqueId     the lock key's id, as PendingDispatch appends it: `'…'.$job->uniqueId()`
 *   backoff      Queue::getJobBackoff($job), the envelope's comma-joined string
 *   retryUntil   Queue::getJobExpiration($job), a timestamp
 *   displayName  Queue::getDisplayName($job)
 *   tags         $job->tags() (Horizon's Tags::for calls it)
 *
 *   php methods-differential.php COUNT SEED NOW
 *
 * NOW (UNIX seconds) is Carbon's test now. Prints one JSON line per instance:
 * {"class":…,"serialized":…,"results":{method: {"value": …} | {"error": …}}}.
 */
declare(strict_types=1);

require __DIR__ . '/methods-app/vendor/autoload.php';

use App\Jobs\Literals;
use App\Jobs\NullableProduct;
use App\Jobs\ReserveProduct;
use App\Jobs\StrictReturns;
use App\Jobs\SyncPrice;
use App\Jobs\TypedReturns;
use App\Models\Product;
use App\Models\Warehouse;
use Illuminate\Support\Carbon;

[, $count, $seed, $now] = $argv + [null, '50', '1', (string) time()];
mt_srand((int) $seed);
Carbon::setTestNow(Carbon::createFromTimestamp((int) $now));
// A warning (Array to string conversion, …) is an error here: Node must not give a value for it.
set_error_handler(function (int $severity, string $message): bool {
    throw new ErrorException($message, 0, $severity);
});

function pick(array $values): mixed
{
    return $values[mt_rand(0, count($values) - 1)];
}

function randomString(): string
{
    if (mt_rand(0, 1) === 0) {
        return pick(['', '0', '12', ' 12', '12 ', "\n5", '1e3', '1.5', '-7', '+3', 'abc', '12abc', 'ünï', '007', '0x1A', '99999999999999999999', '-1e20', '1e400', '.5', '5.', '1e', ' ', '0.0']);
    }
    $alphabet = ['a', 'Z', '0', '9', '-', ' ', '.', 'é', '✓', ':', 'e', '+'];
    $text = '';
    for ($i = mt_rand(0, 8); $i > 0; $i--) {
        $text .= pick($alphabet);
    }
    return $text;
}

function randomInt(): int
{
    return pick([0, 1, -1, PHP_INT_MAX, PHP_INT_MIN, mt_rand(-1000, 1000), mt_rand(), -mt_rand(), mt_rand() * mt_rand()]);
}

function randomFloat(): float
{
    $random = (mt_rand() / mt_getrandmax()) * (10 ** mt_rand(-8, 22)) * pick([1, -1]);
    return pick([0.0, -0.0, 0.1 + 0.2, 1 / 3, 1e14, 1e15, 1e-5, 0.0001, 123456.789, 2.5, -1.5, INF, -INF, NAN, $random, $random, $random, (float) mt_rand()]);
}

function randomScalar(): mixed
{
    return match (mt_rand(0, 4)) {
        0 => randomString(),
        1 => randomInt(),
        2 => randomFloat(),
        3 => (bool) mt_rand(0, 1),
        default => null,
    };
}

function model(string $class, int|string $key): object
{
    $model = new $class();
    $model->setAttribute($model->getKeyName(), $key);
    $model->exists = true;
    return $model;
}

function instance(string $class): object
{
    return match ($class) {
        ReserveProduct::class => new ReserveProduct(model(Product::class, pick([mt_rand(1, 1000000), randomInt()])), model(Warehouse::class, randomString()), randomString(), randomInt()),
        Literals::class => new Literals(randomScalar()),
        TypedReturns::class => new TypedReturns(randomScalar()),
        StrictReturns::class => new StrictReturns(randomScalar()),
        NullableProduct::class => new NullableProduct(mt_rand(0, 2) === 0 ? null : model(Product::class, mt_rand(1, 1000000))),
        SyncPrice::class => new SyncPrice(randomString(), randomInt(), mt_rand(0, 5) === 0 ? null : randomFloat(), (bool) mt_rand(0, 1), randomScalar(), randomString()),
    };
}

/** A protected Queue method of Laravel's, called on a RedisQueue made without its constructor. */
function queueMethod(string $name, object $job): mixed
{
    static $queue;
    $queue ??= (new ReflectionClass(Illuminate\Queue\RedisQueue::class))->newInstanceWithoutConstructor();
    $method = new ReflectionMethod(Illuminate\Queue\Queue::class, $name);
    $method->setAccessible(true);
    return $method->invoke($queue, $job);
}

$methods = [
    'uniqueId' => fn (object $job) => '' . $job->uniqueId(),
    'backoff' => fn (object $job) => queueMethod('getJobBackoff', $job),
    'retryUntil' => fn (object $job) => queueMethod('getJobExpiration', $job),
    'displayName' => fn (object $job) => queueMethod('getDisplayName', $job),
    'tags' => fn (object $job) => $job->tags(),
];

for ($i = 0; $i < (int) $count; $i++) {
    foreach ([ReserveProduct::class, SyncPrice::class, Literals::class, TypedReturns::class, StrictReturns::class, NullableProduct::class] as $class) {
        $job = instance($class);
        $results = [];
        foreach ($methods as $name => $call) {
            try {
                $value = $call($job);
                // serialize() keeps an int an int and a float a float, which JSON would not.
                $results[$name] = ['value' => serialize($value)];
            } catch (Throwable $e) {
                $results[$name] = ['error' => $e->getMessage()];
            }
        }
        echo json_encode(['class' => $class, 'serialized' => serialize($job), 'results' => $results], JSON_THROW_ON_ERROR | JSON_INVALID_UTF8_SUBSTITUTE), "\n";
    }
}
