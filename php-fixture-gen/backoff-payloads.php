<?php
/**
 * The payloads Laravel 8.83's RedisQueue makes for jobs whose $backoff holds floats, negatives,
 * one int, a string and an empty array, as a JSON list of strings. Nothing is pushed: the
 * payload is made by the queue's own createPayload, reached through reflection.
 */
declare(strict_types=1);

require __DIR__ . '/bootstrap.php';

class BackoffJob implements Illuminate\Contracts\Queue\ShouldQueue
{
    use Illuminate\Bus\Queueable;

    public $backoff;

    public function __construct($backoff)
    {
        $this->backoff = $backoff;
    }
}

$queue = laravel_queue()->connection();
$create = new ReflectionMethod($queue, 'createPayload');
$create->setAccessible(true);
$payloads = [];
foreach ([[1.5, 2], 5, '10,20', [], [-1, 0], [2.25]] as $backoff) {
    $payloads[] = $create->invoke($queue, new BackoffJob($backoff), 'default');
}
echo json_encode($payloads);
