<?php
/**
 * Has real Laravel push one job through its RedisQueue, then prints the payload exactly as
 * Laravel stored it in Redis (and takes it back out, so the queue is left as it was).
 * Usage: php laravel-payload.php [userId] [email]
 */
declare(strict_types=1);

require __DIR__ . '/bootstrap.php';

$queue = laravel_queue();
$name = 'lqb-demo-' . bin2hex(random_bytes(4));
$job = new App\Jobs\SendWelcomeEmail((int) ($argv[1] ?? 42), $argv[2] ?? 'ada@example.com', ['welcome', 'ünïcödé'], 0.5);
$queue->connection()->pushOn($name, $job);

$redis = $queue->getContainer()['redis']->connection();
$payload = $redis->lpop("queues:$name");
$redis->del("queues:$name", "queues:$name:notify");
echo $payload, "\n";
