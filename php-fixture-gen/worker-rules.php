<?php
/**
 * What Laravel 8.83's own Worker computes for a reserved job: its backoff (calculateBackoff)
 * and its timeout (timeoutForJob), on a real Illuminate\Queue\Jobs\RedisJob made from the
 * payload, with real WorkerOptions. Reads a JSON list of {"payload": {...}, "backoff": "0,5",
 * "timeout": 60} on standard input; prints one {"backoff": N, "timeout": N} per case.
 */
declare(strict_types=1);

require_once 'Illuminate/autoload.php';

use Illuminate\Container\Container;
use Illuminate\Queue\Jobs\RedisJob;
use Illuminate\Queue\Worker;
use Illuminate\Queue\WorkerOptions;

$cases = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
$worker = (new ReflectionClass(Worker::class))->newInstanceWithoutConstructor();
$call = fn (string $method, ...$args) => (new ReflectionMethod(Worker::class, $method))->invoke($worker, ...$args);
$out = [];
foreach ($cases as $case) {
    $raw = json_encode($case['payload']);
    $reserved = json_decode($raw, true);
    $reserved['attempts']++;
    // The queue is only used to delete or release, which these calls never do.
    $job = new RedisJob(new Container(), (new ReflectionClass(\Illuminate\Queue\RedisQueue::class))->newInstanceWithoutConstructor(), $raw, json_encode($reserved), 'redis', 'default');
    $options = new WorkerOptions('default', $case['backoff'], 128, $case['timeout']);
    $out[] = ['backoff' => $call('calculateBackoff', $job, $options), 'timeout' => $call('timeoutForJob', $job, $options)];
}
echo json_encode($out), "\n";
