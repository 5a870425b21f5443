<?php
/**
 * Real Laravel (8.83) dispatches the jobs whose bookkeeping CallQueuedHandler keeps, and reads
 * that bookkeeping back (see bookkeeping-app.php for the classes and the stores).
 *
 *   php laravel-bookkeeping.php KIND [JSON]
 *
 *   unique      {"n":1,"label":"ok","uniqueId":"u1","until":false,"uniqueFor":null}: dispatch()
 *               of a UniqueJob (UntilProcessingJob with "until", UniqueByMethodJob with "byMethod",
 *               UniqueByOpaqueMethodJob with "opaque"), through PendingDispatch, which
 *               takes the lock and drops a duplicate. Prints {"queued": <bool>, "uuid": ..}.
 *   lock        {"uniqueId":"u1","until":false}: {"owner": <the lock's owner, or null>} (the class as for unique)
 *   batch       {"labels":["ok","fail","ok"],"allowFailures":false,"callbacks":true}:
 *               Bus::batch of BatchJobs (n = 1..), with then/catch/finally callbacks that
 *               record {"side":"php","callback":"then"|"catch"|"finally","batch":id,
 *               "pending":..,"failed":..} when "callbacks". Prints {"batch": id}.
 *   batch-row   {"id":"…"}: the job_batches row, as the repository's connection reads it,
 *               cancelled_at/finished_at as booleans (set or not) besides their values.
 *   batch-find  {"id":"…"}: the batch as the app's code reads it, Bus::findBatch($id): Laravel's
 *               own processedJobs(), progress(), cancelled(), finished(), allowsFailures(),
 *               failedJobIds, times as UNIX seconds. Prints {"found": false} when there is none.
 *   chain       {"labels":["fail","ok"],"catch":true}: Bus::chain of ChainJobs with a catch
 *               callback recording {"side":"php","callback":"chain-catch","message":..}.
 *
 * Environment: worker-app.php's, and LQB_CACHE_STORE, LQB_LOCK_DB, LQB_BATCH_DB, LQB_BATCH_TABLE.
 */
declare(strict_types=1);

require __DIR__ . '/worker-app.php';

use App\Bridge\Recorder;
use App\Jobs\Bookkeeping\BatchJob;
use App\Jobs\Bookkeeping\ChainJob;
use App\Jobs\Bookkeeping\UniqueByMethodJob;
use App\Jobs\Bookkeeping\UniqueByOpaqueMethodJob;
use App\Jobs\Bookkeeping\UniqueJob;
use App\Jobs\Bookkeeping\UntilProcessingJob;
use Illuminate\Bus\Batch;
use Illuminate\Queue\Events\JobQueued;
use Illuminate\Support\Facades\Bus;

$kind = $argv[1] ?? '';
$options = isset($argv[2]) && $argv[2] !== '' ? json_decode($argv[2], true, 512, JSON_THROW_ON_ERROR) : [];
$app = App\Bridge\boot();
$print = fn (array $line) => fwrite(STDOUT, json_encode($line, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE) . "\n");
$queued = [];
$app['events']->listen(JobQueued::class, function (JobQueued $event) use (&$queued) {
    $queued[] = $event->id;
});
$queue = getenv('QUEUE_NAME') ?: 'default';

/** The unique job class the options name: "until", "byMethod", "opaque", else UniqueJob. */
function unique_class(array $options): string
{
    return match (true) {
        !empty($options['until']) => UntilProcessingJob::class,
        !empty($options['byMethod']) => UniqueByMethodJob::class,
        !empty($options['opaque']) => UniqueByOpaqueMethodJob::class,
        default => UniqueJob::class,
    };
}

switch ($kind) {
    case 'unique':
        $class = unique_class($options);
        $job = new $class((int) ($options['n'] ?? 1), (string) ($options['label'] ?? 'ok'), $options['uniqueId'] ?? null);
        if (isset($options['uniqueFor'])) {
            $job->uniqueFor = (int) $options['uniqueFor'];
        }
        dispatch($job->onQueue($queue));
        $print(['queued' => count($queued) === 1]);
        break;

    case 'lock':
        $class = unique_class($options);
        $print(['owner' => App\Bridge\Bookkeeping\lock_owner('laravel_unique_job:' . $class . ($options['uniqueId'] ?? ''))]);
        break;

    case 'shapes':
        // What `lqb shapes` says of these classes that the worker reads: the Laravel version,
        // interfaces, methods, declared uniqueId, and the methods translated as lqb shapes
        // translates them (src/shapes/methods.php); read by PHP's reflection here.
        require_once __DIR__ . '/../src/shapes/methods.php';
        $classes = [];
        foreach ([UniqueJob::class, UntilProcessingJob::class, UniqueByMethodJob::class, UniqueByOpaqueMethodJob::class, BatchJob::class, ChainJob::class] as $class) {
            $reflection = new ReflectionClass($class);
            $methods = array_values(array_filter(['uniqueId', 'uniqueVia', 'displayName', 'failed', 'middleware', 'backoff', 'retryUntil', 'tags'], fn ($m) => $reflection->hasMethod($m) && !str_starts_with($reflection->getMethod($m)->getDeclaringClass()->getName(), 'Illuminate\\')));
            $classes[$class] = ['name' => $class, 'kind' => 'job', 'parent' => get_parent_class($class) ?: null, 'interfaces' => array_values(class_implements($class)), 'traits' => array_values(class_uses_recursive($class)), 'serializer' => 'SerializesModels', 'properties' => [], 'declared' => (object) [], 'methods' => $methods];
            $expressions = lqbExpressions($reflection, fn (ReflectionClass $c, string $m) => in_array($m, $methods, true));
            if ($expressions !== []) {
                $classes[$class]['expressions'] = $expressions;
            }
        }
        $print(['version' => 1, 'laravel' => Illuminate\Foundation\Application::VERSION, 'php' => PHP_VERSION, 'classes' => $classes]);
        break;

    case 'batch':
        $jobs = [];
        foreach ((array) ($options['labels'] ?? ['ok']) as $i => $label) {
            $jobs[] = new BatchJob($i + 1, (string) $label);
        }
        $pending = Bus::batch($jobs)->onQueue($queue)->name('bookkeeping');
        if (!empty($options['allowFailures'])) {
            $pending->allowFailures();
        }
        if (!empty($options['callbacks'])) {
            // One closure each: a closure made by another on one line does not serialize.
            $pending->then(function (Batch $batch) {
                App\Bridge\Bookkeeping\record_callback('then', $batch);
            })->catch(function (Batch $batch) {
                App\Bridge\Bookkeeping\record_callback('catch', $batch);
            })->finally(function (Batch $batch) {
                App\Bridge\Bookkeeping\record_callback('finally', $batch);
            });
        }
        $batch = $pending->dispatch();
        $print(['batch' => $batch->id]);
        break;

    case 'batch-row':
        $table = getenv('LQB_BATCH_TABLE') ?: 'job_batches';
        $app->make(Illuminate\Bus\BatchRepository::class); // makes the table when missing
        $row = (array) $app['db']->connection('batches')->table($table)->where('id', (string) $options['id'])->first();
        $print($row + ['cancelled' => !empty($row['cancelled_at']), 'finished' => !empty($row['finished_at'])]);
        break;

    case 'batch-find':
        $batch = Bus::findBatch((string) $options['id']);
        $seconds = fn (?DateTimeInterface $at) => $at?->getTimestamp();
        $print($batch === null ? ['found' => false] : [
            'found' => true,
            'id' => $batch->id,
            'name' => $batch->name,
            'totalJobs' => $batch->totalJobs,
            'pendingJobs' => $batch->pendingJobs,
            'processedJobs' => $batch->processedJobs(),
            'failedJobs' => $batch->failedJobs,
            'failedJobIds' => $batch->failedJobIds,
            'progress' => $batch->progress(),
            'allowFailures' => $batch->allowsFailures(),
            'cancelled' => $batch->cancelled(),
            'finished' => $batch->finished(),
            'createdAt' => $seconds($batch->createdAt),
            'cancelledAt' => $seconds($batch->cancelledAt),
            'finishedAt' => $seconds($batch->finishedAt),
        ]);
        break;

    case 'chain':
        $links = [];
        foreach ((array) ($options['labels'] ?? ['ok']) as $i => $label) {
            $links[] = new ChainJob($i + 1, (string) $label);
        }
        $chain = Bus::chain($links)->onQueue($queue);
        if (!empty($options['catch'])) {
            $chain->catch(function (Throwable $e) {
                App\Bridge\Recorder::write(['side' => 'php', 'callback' => 'chain-catch', 'message' => $e->getMessage(), 'pid' => getmypid()]);
            });
        }
        $chain->dispatch();
        $print(['queued' => count($queued)]);
        break;

    default:
        fwrite(STDERR, "usage: php laravel-bookkeeping.php unique|lock|batch|batch-row|batch-find|chain [JSON]\n");
        exit(2);
}
