<?php
/**
 * Has real Laravel (Debian's 8.83) push N jobs through its RedisQueue onto a scratch queue and
 * prints the payloads exactly as Laravel stored them, one per line, then removes the queue.
 * The jobs vary in size and content the way an application's do. Usage: php laravel-commands.php [N]
 */
declare(strict_types=1);

require __DIR__ . '/bootstrap.php';

$count = (int) ($argv[1] ?? 100);
mt_srand(8083);
$queue = laravel_queue();
$name = 'lqb-bench-' . bin2hex(random_bytes(4));
$connection = $queue->connection();
for ($i = 0; $i < $count; $i++) {
    $tags = array_map(fn ($t) => "tag-$t-" . str_repeat('x', mt_rand(0, 12)), range(1, mt_rand(0, 6)));
    $job = new App\Jobs\SendWelcomeEmail(mt_rand(1, PHP_INT_MAX >> 8), "user$i@example.com", $tags, mt_rand(0, 1) ? mt_rand() / mt_getrandmax() : null);
    if ($i % 3 === 0) $job->onQueue('emails');
    $connection->pushOn($name, $job);
}
$redis = $queue->getContainer()['redis']->connection();
foreach ($redis->lrange("queues:$name", 0, -1) as $payload) echo $payload, "\n";
$redis->del("queues:$name", "queues:$name:notify");
