<?php
/**
 * Laravel's own queue worker on the bridge's Redis: `artisan queue:work` without an artisan.
 *
 * Runs Laravel 8.83's real Illuminate\Queue\Console\WorkCommand (so its flags, their defaults, its
 * output and its failed-job logging are Laravel's) over a real Illuminate\Queue\Worker built as
 * QueueServiceProvider builds it: the QueueManager of worker-app.php's app, the events Dispatcher,
 * the app's ExceptionHandler, an isDownForMaintenance closure (always false) and a reset-scope
 * closure; WorkCommand gives the worker the Redis-backed cache repository (restart signal,
 * maxExceptions counters).
 *
 *   php laravel-worker.php [CONNECTION] [--queue=a,b] [--once] [--stop-when-empty] [--tries=1]
 *       [--backoff=0] [--delay=0] [--timeout=60] [--sleep=3] [--rest=0] [--max-jobs=0]
 *       [--max-time=0] [--memory=128] [--force] [--name=default]
 *       [--retry-after=90|null] [--block-for=S|null]
 *
 * Everything but the last two is queue:work's own option (8.83). --retry-after and --block-for
 * configure the redis connection (retry_after 90 and block_for null by default, as in
 * config/queue.php); "null" is accepted for both. CONNECTION defaults to "redis"; "database" is
 * Laravel's database queue on LQB_QUEUE_DB (worker-app.php), whose retry_after --retry-after sets too.
 *
 * Standard output is WorkCommand's, one line per JobProcessing / JobProcessed / JobFailed event:
 *   [YYYY-mm-dd HH:MM:SS][<payload id>] Processing: <job name>
 *   [YYYY-mm-dd HH:MM:SS][<payload id>] Processed:  <job name>
 *   [YYYY-mm-dd HH:MM:SS][<payload id>] Failed:     <job name>
 * Failed jobs go to Laravel's DatabaseUuidFailedJobProvider (LQB_FAILED_DB). Reported exceptions
 * are one line each on standard error. SIGTERM stops the worker after the current job (pcntl).
 * The exit status is the worker's (0, or 12 when --memory is exceeded); 2 for a usage error.
 *
 * Environment: REDIS_HOST, REDIS_PORT, REDIS_PREFIX, QUEUE_NAME, LQB_FAILED_DB, LQB_CACHE_PREFIX,
 * LQB_RECORD_FILE, LQB_TRACE (see worker-app.php).
 */
declare(strict_types=1);

require __DIR__ . '/worker-app.php';

use Illuminate\Queue\Console\WorkCommand;
use Symfony\Component\Console\Input\ArgvInput;
use Symfony\Component\Console\Output\ConsoleOutput;

/** Takes --retry-after / --block-for (as --x=V or --x V) out of the arguments. */
function lqb_take_connection_options(array $args): array
{
    $found = [];
    $rest = [];
    for ($i = 0; $i < count($args); $i++) {
        if (preg_match('/^--(retry-after|block-for)(?:=(.*))?$/', $args[$i], $m)) {
            $value = $m[2] ?? ($args[++$i] ?? '');
            if (strtolower($value) === 'null') {
                $found[$m[1]] = null;
            } elseif (preg_match('/^\d+$/', $value)) {
                $found[$m[1]] = (int) $value;
            } else {
                fwrite(STDERR, "--{$m[1]} needs a whole number of seconds or null, got '{$value}'\n");
                exit(2);
            }
            continue;
        }
        $rest[] = $args[$i];
    }
    return [$found, $rest];
}

[$connectionOptions, $args] = lqb_take_connection_options(array_slice($argv, 1));
$bootOptions = [];
if (array_key_exists('retry-after', $connectionOptions)) {
    $bootOptions['retry_after'] = $connectionOptions['retry-after'];
}
if (array_key_exists('block-for', $connectionOptions)) {
    $bootOptions['block_for'] = $connectionOptions['block-for'];
}
$app = App\Bridge\boot($bootOptions);

// Fail early on an unusable failed-jobs database rather than at the first failed job.
$app['queue.failer'];

$worker = App\Bridge\queueWorker($app);

$command = new WorkCommand($worker, $app['cache.store']);
$command->setLaravel($app);

$output = new ConsoleOutput();
try {
    $status = $command->run(new ArgvInput(array_merge([$argv[0]], $args)), $output);
} catch (Symfony\Component\Console\Exception\ExceptionInterface $e) {
    fwrite(STDERR, $e->getMessage() . "\n");
    exit(2);
}
exit($status);
