<?php
/**
 * Real Laravel (8.83) dispatches jobs guarded by job middleware, and shows what the middleware
 * keeps in the cache, for the middleware tests.
 *
 *   php guards-dispatch.php KIND [JSON]
 *
 *   overlap  {"n":1,"count":N,"key":"shared","seconds":0.5,"releaseAfter":1|null,"tries":T,"queue":Q}
 *            dispatches OverlapJobs (guards-app.php); one line per job: {"id","uuid","queue","class"}
 *            ("through": true adds ->through([new WithoutOverlapping(key)]), carried in the payload)
 *   limited  {"n":1,"count":N,"key":"shared","tries":T,"queue":Q}: LimitedJobs, the same way
 *   window   {"n":1,"count":N}: WindowJobs (a retryUntil() method)
 *   window-prop {"n":1,"count":N,"retryUntil":T}: WindowPropJobs (a $retryUntil property)
 *   probe-overlap {"key":"shared","expireAfter":S}: runs WithoutOverlapping(key)->expireAfter(S)
 *            on an OverlapJob, and inside it prints every Redis key under REDIS_PREFIX with its
 *            value and TTL: {"ran":true,"keys":{<key without REDIS_PREFIX>:{"value","ttl"}}}
 *   probe-limited {"key":"shared","hits":H}: runs RateLimited('bridge-limit') H times on a
 *            LimitedJob, then prints {"ran":<runs>,"keys":{…}} the same way
 *
 * Environment: as laravel-dispatch.php (REDIS_*, QUEUE_NAME, LQB_CACHE_PREFIX, LQB_RATE_LIMIT).
 */
declare(strict_types=1);

require __DIR__ . '/worker-app.php';

use App\Bridge\Limiters;
use App\Jobs\Bridge\LimitedJob;
use App\Jobs\Bridge\OverlapJob;
use Illuminate\Queue\Events\JobQueued;
use Illuminate\Queue\Middleware\RateLimited;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Queue\Queue;

$kind = $argv[1] ?? '';
$options = isset($argv[2]) && $argv[2] !== '' ? json_decode($argv[2], true, 512, JSON_THROW_ON_ERROR) : [];
$print = fn (array $line) => fwrite(STDOUT, json_encode($line, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE) . "\n");

$app = App\Bridge\boot();
$pending = null;
Queue::createPayloadUsing(function ($connection, $queue, array $payload) use (&$pending) {
    $pending = ['uuid' => $payload['uuid'] ?? null, 'class' => $payload['displayName'] ?? null];
    return [];
});
$app['events']->listen(JobQueued::class, function (JobQueued $event) use (&$pending, $print) {
    $print(['id' => $event->id, 'uuid' => $pending['uuid'], 'queue' => preg_replace('/^queues:/', '', (string) $event->job->queue), 'class' => $pending['class']]);
});

/** Every key under REDIS_PREFIX (named without it), with its value and TTL. */
$keys = function () use ($app): array {
    $redis = $app['redis']->connection('default')->client();
    $prefix = getenv('REDIS_PREFIX') ?: '';
    $found = [];
    $redis->setOption(\Redis::OPT_PREFIX, '');
    foreach ($redis->keys($prefix . '*') as $key) {
        $found[substr($key, strlen($prefix))] = ['value' => $redis->get($key), 'ttl' => $redis->ttl($key)];
    }
    $redis->setOption(\Redis::OPT_PREFIX, $prefix);
    ksort($found);
    return $found;
};

$n = (int) ($options['n'] ?? 1);
$count = (int) ($options['count'] ?? 1);
$key = (string) ($options['key'] ?? 'shared');
$send = function (object $job) use ($options) {
    if (isset($options['tries'])) $job->tries = (int) $options['tries'];
    if (isset($options['queue'])) $job->onQueue((string) $options['queue']);
    if (!empty($options['through'])) $job->through([new WithoutOverlapping((string) ($options['key'] ?? 'shared'))]);
    dispatch($job);
};

switch ($kind) {
    case 'overlap':
        $release = array_key_exists('releaseAfter', $options) ? $options['releaseAfter'] : 1;
        for ($i = 0; $i < $count; $i++) {
            $send(new OverlapJob($n + $i, $key, (float) ($options['seconds'] ?? 0.5), $release === null ? null : (int) $release));
        }
        break;
    case 'limited':
        for ($i = 0; $i < $count; $i++) {
            $send(new LimitedJob($n + $i, $key));
        }
        break;
    case 'window':
        for ($i = 0; $i < $count; $i++) {
            $send(new App\Jobs\Bridge\WindowJob($n + $i));
        }
        break;
    case 'window-prop':
        for ($i = 0; $i < $count; $i++) {
            $send(new App\Jobs\Bridge\WindowPropJob($n + $i, (int) ($options['retryUntil'] ?? time() + 1)));
        }
        break;
    case 'probe-overlap':
        $guard = (new WithoutOverlapping($key))->expireAfter((int) ($options['expireAfter'] ?? 0));
        $seen = null;
        $ran = false;
        $guard->handle(new OverlapJob(1, $key), function () use (&$seen, &$ran, $keys) {
            $ran = true;
            $seen = $keys();
        });
        $print(['ran' => $ran, 'keys' => $seen ?? $keys(), 'after' => $keys()]);
        break;
    case 'probe-limited':
        Limiters::define();
        $ran = 0;
        for ($i = 0; $i < (int) ($options['hits'] ?? 1); $i++) {
            (new RateLimited('bridge-limit'))->handle(new LimitedJob(1, $key), function () use (&$ran) {
                $ran++;
            });
        }
        $print(['ran' => $ran, 'keys' => $keys()]);
        break;
    default:
        fwrite(STDERR, "usage: php guards-dispatch.php overlap|limited|probe-overlap|probe-limited [JSON]\n");
        exit(2);
}
