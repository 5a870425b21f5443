<?php
/**
 * Laravel's Queue::push timed: pushes N RecordJob jobs (about 1 KB each) through Debian's
 * Laravel 8.83 RedisQueue and prints {"jobs": N, "seconds": s}. Env as worker-app.php.
 */
declare(strict_types=1);

require __DIR__ . '/worker-app.php';

$count = (int) ($argv[1] ?? 1000);
$app = App\Bridge\boot();
$queue = $app['queue']->connection('redis');
$name = getenv('QUEUE_NAME') ?: 'default';
$items = array_fill(0, 40, 'padding-to-a-kilobyte');
$start = hrtime(true);
for ($i = 0; $i < $count; $i++) {
    $queue->push(new App\Jobs\Bridge\RecordJob($i, 'bench', 0.5, $items), '', $name);
}
echo json_encode(['jobs' => $count, 'seconds' => (hrtime(true) - $start) / 1e9]), "\n";
