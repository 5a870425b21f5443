<?php
/**
 * PHP's side of bench/payload.ts: json_decode + unserialize(data.command), what a PHP worker
 * does to read a job, timed on the same payload lines in the same run. argv[1]: seconds;
 * argv[2]: `jobs` to load Laravel 8.83 and the demo job classes first (so PHP builds real objects).
 * Prints JSON: {"ops": n, "seconds": s, "bytes": total}.
 */
declare(strict_types=1);

if (($argv[2] ?? '') === 'jobs') require_once __DIR__ . '/bootstrap.php';
error_reporting(E_ALL & ~E_DEPRECATED & ~E_WARNING & ~E_NOTICE);

$seconds = (float) ($argv[1] ?? 1.0);
$payloads = array_values(array_filter(array_map('trim', explode("\n", stream_get_contents(STDIN)))));
$read = function (string $raw) {
    $payload = json_decode($raw, true);
    return unserialize($payload['data']['command']);
};
// Warm up for WARMUP seconds (0.5 by default), as the Node side does (bench/timing.ts).
$warmup = (float) (getenv('WARMUP') ?: 0.5);
$start = hrtime(true);
do {
    foreach ($payloads as $raw) $read($raw);
} while ((hrtime(true) - $start) / 1e9 < $warmup);
$ops = 0;
$start = hrtime(true);
do {
    foreach ($payloads as $raw) $read($raw);
    $ops += count($payloads);
    $elapsed = (hrtime(true) - $start) / 1e9;
} while ($elapsed < $seconds);
echo json_encode(['ops' => $ops, 'seconds' => $elapsed, 'bytes' => array_sum(array_map('strlen', $payloads))]), "\n";
