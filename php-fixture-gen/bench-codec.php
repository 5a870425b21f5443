<?php
/**
 * PHP's native unserialize()/serialize() timed on the inputs the Node benchmark uses, one window
 * at a time, so that bench/codec.ts can put each PHP window right beside a Node one.
 *
 *   php bench-codec.php FILE [corpus|jobs]
 *
 * FILE holds the inputs as base64 lines; the second argument names the classes they are made of:
 * `corpus` (corpus-classes.php, the default) or `jobs` (bootstrap.php: Laravel 8.83 and the demo
 * jobs), so PHP builds real objects. It warms both operations up for WARMUP seconds (0.5 by
 * default, as the Node side does) and prints `ready`; then for each line `unserialize S` or
 * `serialize S` on standard input it runs that operation over all inputs, again and again, for S
 * seconds, and prints {"ops": n, "seconds": s}. It ends when standard input does.
 */
declare(strict_types=1);

require_once __DIR__ . (($argv[2] ?? 'corpus') === 'jobs' ? '/bootstrap.php' : '/corpus-classes.php');
error_reporting(E_ALL & ~E_DEPRECATED & ~E_WARNING & ~E_NOTICE);

$inputs = [];
foreach (file($argv[1], FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) as $line) {
    $inputs[] = base64_decode(trim($line), true);
}
$values = array_map(fn ($s) => unserialize($s), $inputs);
$work = [
    'unserialize' => [fn ($s) => unserialize($s), $inputs],
    'serialize' => [fn ($v) => serialize($v), $values],
];

/** Runs $work over all items until $seconds pass (at least once); returns [operations, elapsed]. */
function timed(callable $work, array $items, float $seconds): array
{
    $ops = 0;
    $start = hrtime(true);
    do {
        foreach ($items as $item) $work($item);
        $ops += count($items);
        $elapsed = (hrtime(true) - $start) / 1e9;
    } while ($elapsed < $seconds);
    return ['ops' => $ops, 'seconds' => $elapsed];
}

$warmup = (float) (getenv('WARMUP') ?: 0.5);
foreach ($work as [$each, $items]) timed($each, $items, $warmup);
echo "ready\n";
while (($line = fgets(STDIN)) !== false) {
    [$operation, $seconds] = explode(' ', trim($line));
    [$each, $items] = $work[$operation];
    echo json_encode(timed($each, $items, (float) $seconds)), "\n";
}
