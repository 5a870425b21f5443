<?php
/**
 * Laravel 8.83's own Illuminate\Queue\Worker, built as laravel-worker.php builds it (queueWorker), looping
 * runNextJob() until N jobs are done: the worker's own loop without queue:work's console lines,
 * for bench/lqb-vs-laravel.ts.
 *
 *   php bench-run-next-job.php N       (0: boot only, for the caller to time)
 *
 * Prints one JSON line: {"jobs":N,"seconds":S,"cpuSeconds":C}, timed from the first
 * runNextJob() to the last (boot left out; the caller times the whole process as well).
 * Environment: as worker-app.php (REDIS_PREFIX, QUEUE_NAME, LQB_FAILED_DB, LQB_RECORD_FILE).
 */
declare(strict_types=1);

require __DIR__ . '/worker-app.php';

use Illuminate\Queue\Events\JobFailed;
use Illuminate\Queue\Events\JobProcessed;
use Illuminate\Queue\WorkerOptions;

$jobs = (int) ($argv[1] ?? -1);
if ($jobs < 0) {
    fwrite(STDERR, "usage: php bench-run-next-job.php N\n");
    exit(2);
}
$app = App\Bridge\boot();
$app['queue.failer'];
$worker = App\Bridge\queueWorker($app);
// As queue:work does: the cache for the restart signal and maxExceptions.
$worker->setCache($app['cache.store']);
$done = 0;
$app['events']->listen(JobProcessed::class, function () use (&$done) {
    $done++;
});
$app['events']->listen(JobFailed::class, function () use (&$done) {
    $done++;
});
// queue:work's defaults but --sleep=0 --timeout=0 (as bench/worker.ts gives Laravel's worker).
$options = new WorkerOptions('default', 0, 128, 0, 0, 1);
$queue = getenv('QUEUE_NAME') ?: 'default';
$cpu = static function (): float {
    $usage = getrusage();

    return $usage['ru_utime.tv_sec'] + $usage['ru_utime.tv_usec'] / 1e6 + $usage['ru_stime.tv_sec'] + $usage['ru_stime.tv_usec'] / 1e6;
};
$cpuStart = $cpu();
$start = microtime(true);
// A queue that runs dry before N (jobs lost) ends the loop rather than spin for ever.
for ($empty = 0; $done < $jobs && $empty < 1000;) {
    $before = $done;
    $worker->runNextJob('redis', $queue, $options);
    $empty = $done === $before ? $empty + 1 : 0;
}
$seconds = microtime(true) - $start;
echo json_encode(['jobs' => $done, 'seconds' => $seconds, 'cpuSeconds' => $cpu() - $cpuStart]), "\n";
exit($done === $jobs ? 0 : 1);
