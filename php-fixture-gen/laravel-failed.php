<?php
/**
 * Laravel 8.83's own failed-job commands on worker-app.php's app: `artisan queue:failed`,
 * `queue:flush` and `queue:retry` without an artisan, so the bridge's `lqb failed` and `lqb retry` can be
 * compared with what Laravel prints and pushes.
 *
 *   php laravel-failed.php failed
 *   php laravel-failed.php flush
 *   php laravel-failed.php retry [ID…|all] [--queue=Q] [--range=A-B…]
 *
 * The failed_jobs table is LQB_FAILED_DB's (DatabaseUuidFailedJobProvider); retried jobs go to
 * the redis connection under REDIS_PREFIX. Standard output is the command's own.
 */
declare(strict_types=1);

require __DIR__ . '/worker-app.php';

use Illuminate\Queue\Console\FlushFailedCommand;
use Illuminate\Queue\Console\ListFailedCommand;
use Illuminate\Queue\Console\RetryCommand;
use Symfony\Component\Console\Input\ArgvInput;
use Symfony\Component\Console\Output\ConsoleOutput;

$commands = ['failed' => ListFailedCommand::class, 'flush' => FlushFailedCommand::class, 'retry' => RetryCommand::class];
$class = $commands[$argv[1] ?? ''] ?? null;
if ($class === null) {
    fwrite(STDERR, "usage: php laravel-failed.php failed|flush|retry [arguments]\n");
    exit(2);
}
$app = App\Bridge\boot();
$command = new $class();
$command->setLaravel($app);
exit($command->run(new ArgvInput(array_merge([$argv[0]], array_slice($argv, 2))), new ConsoleOutput()));
