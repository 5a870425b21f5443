<?php
/**
 * Laravel's producer timed, for bench/peers.ts: the RecordJob (items as bench/record-job.ts's, a
 * payload of about 1.5 KB) pushed through Debian's Laravel 8.83 on Redis, either
 *   dispatch   dispatch($job) one after another, as an app does (PendingDispatch -> Bus
 *              Dispatcher -> RedisQueue::push: one round trip each), or
 *   bulk       Queue::bulk($jobs) a thousand at a time (8.83's bulk is push() in a loop).
 *
 *   php bench-dispatch.php dispatch|bulk N [WARMUP]
 *
 * Boots the app, pushes WARMUP jobs untimed (classes loaded, the connection open), prints
 * "ready", waits for a line on standard input (the caller reads Redis's CPU then), pushes N
 * timed, and prints one JSON line {"jobs":N,"seconds":S,"cpuSeconds":C} (CPU: this process's user
 * + system time over the N, getrusage). Environment: as worker-app.php (REDIS_HOST, REDIS_PORT,
 * REDIS_PREFIX, QUEUE_NAME: the queue, the connection's default).
 */
declare(strict_types=1);

require __DIR__ . '/worker-app.php';

use App\Jobs\Bridge\RecordJob;

$mode = $argv[1] ?? '';
$count = (int) ($argv[2] ?? -1);
$warmup = (int) ($argv[3] ?? 0);
if (!in_array($mode, ['dispatch', 'bulk'], true) || $count < 0 || $warmup < 0) {
    fwrite(STDERR, "usage: php bench-dispatch.php dispatch|bulk N [WARMUP]\n");
    exit(2);
}
$app = App\Bridge\boot();
$connection = $app['queue']->connection('redis');
$items = ['pad' => array_fill(0, 20, 'padding-to-a-kilobyte')];

/** Pushes jobs $from .. $from + $n - 1 the way $mode says. */
$push = function (int $from, int $n) use ($mode, $connection, $items): void {
    if ($mode === 'dispatch') {
        for ($i = $from; $i < $from + $n; $i++) {
            dispatch(new RecordJob($i, 'bench', 0.5, $items));
        }
        return;
    }
    for ($at = $from; $at < $from + $n; $at += 1000) {
        $jobs = [];
        for ($i = $at; $i < min($at + 1000, $from + $n); $i++) {
            $jobs[] = new RecordJob($i, 'bench', 0.5, $items);
        }
        $connection->bulk($jobs);
    }
};
$cpu = static function (): float {
    $usage = getrusage();

    return $usage['ru_utime.tv_sec'] + $usage['ru_utime.tv_usec'] / 1e6 + $usage['ru_stime.tv_sec'] + $usage['ru_stime.tv_usec'] / 1e6;
};

$push(0, $warmup);
echo "ready\n";
fgets(STDIN);
$cpuStart = $cpu();
$start = hrtime(true);
$push($warmup, $count);
$seconds = (hrtime(true) - $start) / 1e9;
echo json_encode(['jobs' => $count, 'seconds' => $seconds, 'cpuSeconds' => $cpu() - $cpuStart]), "\n";
