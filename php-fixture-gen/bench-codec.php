<?php
/**
 * PHP's native unserialize()/serialize() timed on the inputs the Node benchmark uses, in the
 * same run. Reads base64 lines on standard input; argv[1] is the seconds to spend on each side,
 * argv[2] the file of classes the inputs are made of: `corpus` (corpus-classes.php, the default)
 * or `jobs` (bootstrap.php: Laravel 8.83 and the demo jobs), so PHP builds real objects.
 * Prints JSON: {"unserialize": {"ops": n, "seconds": s}, "serialize": {...}, "bytes": total}.
 */
declare(strict_types=1);

require_once __DIR__ . (($argv[2] ?? 'corpus') === 'jobs' ? '/bootstrap.php' : '/corpus-classes.php');
error_reporting(E_ALL & ~E_DEPRECATED & ~E_WARNING & ~E_NOTICE);

$seconds = (float) ($argv[1] ?? 1.0);
$inputs = [];
while (($line = fgets(STDIN)) !== false) {
    if (trim($line) !== '') $inputs[] = base64_decode(trim($line), true);
}
$values = array_map(fn ($s) => unserialize($s), $inputs);

/**
 * Runs $work over all inputs until $seconds pass; returns [operations, elapsed]. It first warms
 * up for WARMUP seconds (0.5 by default), as the Node side does (bench/timing.ts).
 */
function timed(callable $work, array $items, float $seconds): array
{
    $warmup = (float) (getenv('WARMUP') ?: 0.5);
    $start = hrtime(true);
    do {
        foreach ($items as $item) $work($item);
    } while ((hrtime(true) - $start) / 1e9 < $warmup);
    $ops = 0;
    $start = hrtime(true);
    do {
        foreach ($items as $item) $work($item);
        $ops += count($items);
        $elapsed = (hrtime(true) - $start) / 1e9;
    } while ($elapsed < $seconds);
    return ['ops' => $ops, 'seconds' => $elapsed];
}

echo json_encode([
    'unserialize' => timed(fn ($s) => unserialize($s), $inputs, $seconds),
    'serialize' => timed(fn ($v) => serialize($v), $values, $seconds),
    'bytes' => array_sum(array_map('strlen', $inputs)),
]), "\n";
