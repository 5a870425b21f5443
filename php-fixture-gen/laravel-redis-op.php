<?php
/**
 * One operation of Laravel 8.83's own RedisQueue, for tests that compare its effect on Redis
 * with ours. Env: REDIS_HOST, REDIS_PORT, REDIS_PREFIX (key prefix), QUEUE_NAME, RETRY_AFTER (90).
 *   push            payload on stdin → pushRaw
 *   later SECONDS   payload on stdin → laterRaw(SECONDS)
 *   pop             prints JSON [payload, reserved] or [null, null]
 *   release SECONDS reserved payload on stdin → deleteAndRelease
 *   delete          reserved payload on stdin → deleteReserved
 *   migrate         migrates :delayed then :reserved, as pop does first
 *   size            prints the size
 *   clear           prints how many were cleared
 */
declare(strict_types=1);

require __DIR__ . '/bootstrap.php';

use Illuminate\Queue\Jobs\RedisJob;

$op = $argv[1] ?? '';
$name = getenv('QUEUE_NAME') ?: 'default';
$manager = laravel_queue();
/** @var \Illuminate\Queue\RedisQueue $queue */
$queue = $manager->connection();
$retryAfter = getenv('RETRY_AFTER');
if ($retryAfter !== false) {
    (function ($value) { $this->retryAfter = $value === 'null' ? null : (int) $value; })->call($queue, $retryAfter);
}
$input = fn () => rtrim(stream_get_contents(STDIN), "\n");
$prefixed = 'queues:' . $name;

switch ($op) {
    case 'push':
        $queue->pushRaw($input(), $name);
        break;
    case 'later':
        (fn ($delay, $payload) => $this->laterRaw($delay, $payload, $name))->call($queue, (int) $argv[2], $input());
        break;
    case 'pop':
        $job = $queue->pop($name);
        echo json_encode($job instanceof RedisJob ? [$job->getRawBody(), $job->getReservedJob()] : [null, null]), "\n";
        break;
    case 'release':
        $reserved = $input();
        $queue->deleteAndRelease($name, new RedisJob($manager->getContainer(), $queue, $reserved, $reserved, 'redis', $name), (int) $argv[2]);
        break;
    case 'delete':
        $reserved = $input();
        $queue->deleteReserved($name, new RedisJob($manager->getContainer(), $queue, $reserved, $reserved, 'redis', $name));
        break;
    case 'migrate':
        (fn () => $this->migrate($prefixed))->call($queue);
        break;
    case 'size':
        echo $queue->size($name), "\n";
        break;
    case 'clear':
        echo $queue->clear($name), "\n";
        break;
    default:
        fwrite(STDERR, "unknown operation $op\n");
        exit(2);
}
