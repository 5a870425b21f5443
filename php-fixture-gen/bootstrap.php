<?php
/**
 * Boots Debian's real Laravel 8.83 queue components outside a full app: a container, the
 * Redis manager (phpredis) and a Queue Capsule with one `redis` connection. Everything the
 * scripts beside this file do goes through Laravel's own classes from here.
 *
 * Environment: REDIS_HOST (127.0.0.1), REDIS_PORT (6379), REDIS_PREFIX (none), REDIS_DB (0),
 * REDIS_CACHE_DB (see laravel_redis_config), QUEUE_NAME (default).
 */
declare(strict_types=1);

require_once 'Illuminate/Queue/autoload.php';
require_once 'Illuminate/Redis/autoload.php';
require_once 'Illuminate/Events/autoload.php';
require_once 'Illuminate/Bus/autoload.php';
require_once __DIR__ . '/jobs.php';

use Illuminate\Container\Container;
use Illuminate\Queue\Capsule\Manager as Queue;
use Illuminate\Redis\RedisManager;

/**
 * Laravel's `database.redis` config from the environment: REDIS_HOST, REDIS_PORT, REDIS_PASSWORD,
 * REDIS_DB for `default`, REDIS_PREFIX, and REDIS_CLUSTER=host:port,… to make `default` a Redis Cluster
 * (phpredis's RedisCluster), as Laravel's config does with `clusters` and options.cluster = 'redis'.
 * With REDIS_CACHE_DB, also the stock skeleton's second connection `cache` on that database.
 */
function laravel_redis_config(): array
{
    $config = ['client' => 'phpredis', 'options' => ['prefix' => getenv('REDIS_PREFIX') ?: '']];
    if ($nodes = getenv('REDIS_CLUSTER')) {
        $config['options']['cluster'] = 'redis';
        $config['clusters'] = ['default' => array_map(function ($node) {
            [$host, $port] = explode(':', trim($node));
            return ['host' => $host, 'port' => (int) $port];
        }, explode(',', $nodes))];
        return $config;
    }
    $config['default'] = [
        'host' => getenv('REDIS_HOST') ?: '127.0.0.1',
        'port' => (int) (getenv('REDIS_PORT') ?: 6379),
        'password' => getenv('REDIS_PASSWORD') ?: null,
        'database' => (int) (getenv('REDIS_DB') ?: 0),
    ];
    if (getenv('REDIS_CACHE_DB') !== false) {
        $config['cache'] = ['database' => (int) getenv('REDIS_CACHE_DB')] + $config['default'];
    }
    return $config;
}

function laravel_queue(): Queue
{
    $container = new Container();
    Container::setInstance($container);
    $redisConfig = laravel_redis_config();
    $container->singleton('redis', fn () => new RedisManager($container, 'phpredis', $redisConfig));
    $queue = new Queue($container);
    $queue->addConnection([
        'driver' => 'redis',
        'connection' => 'default',
        'queue' => getenv('QUEUE_NAME') ?: 'default',
        'retry_after' => 90,
    ]);
    $queue->setAsGlobal();
    return $queue;
}
