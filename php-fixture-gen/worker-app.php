<?php
/**
 * The PHP side of the cross-language queue tests: a small Laravel 8.83 "application" for
 * laravel-worker.php and laravel-dispatch.php, plus the job, event and listener classes both
 * sides exchange. Every queue, bus, event, cache, database and console class here is Debian's real
 * Laravel (php-illuminate-* / php-laravel-framework); the only classes written here are ones an
 * application writes itself (its jobs, its listener, an exception handler, a container with
 * isDownForMaintenance()).
 *
 * Classes (namespaces kept apart from jobs.php and laravel-app-classes.php):
 *   App\Jobs\Bridge\RecordJob         (int n, string label, float ratio, array items, ?bool flag)
 *   App\Jobs\Bridge\FlakyJob          (int n, int failTimes): throws while attempts <= failTimes
 *   App\Jobs\Bridge\FlakyBackoffJob   FlakyJob with $tries = 3, $backoff = [1, 2]
 *   App\Jobs\Bridge\SlowJob           (int n, float seconds): records "start", waits, records "done"
 *   App\Jobs\Bridge\FailingJob        (int n, string message): always throws; failed() records
 *   App\Events\Bridge\ThingHappened   (int id, string name)
 *   App\Listeners\Bridge\RecordListener  queued listener of ThingHappened
 * and, through shapes-app/vendor/autoload.php, the sample app's App\Jobs\*, whose handle() records
 * what it received the same way. With APP_KEY (and APP_CIPHER) set, an encrypter is bound.
 *
 * Each run appends one JSON line to the file named by LQB_RECORD_FILE (to standard error when it
 * is unset):
 *   {"side":"php","class":..,"props":{<name>: value, ..., "types": {<name>: get_debug_type}},
 *    "attempts":..,"jobId":..,"uuid":..,"queue":..,"pid":..}
 * plus "phase" ("start"/"done") for SlowJob, "event" (the event class) for RecordListener, and for
 * FailingJob::failed(): {"side","class","props","failed":true,"message","exception","pid"}; with
 * LQB_RECORD_PAYLOAD set, each run's record also has "payload": $job->payload(), as the job sees it.
 *
 * Environment: REDIS_HOST (127.0.0.1), REDIS_PORT (6379), REDIS_PREFIX (''), REDIS_DB (0),
 * REDIS_CACHE_DB (unset: one connection for the queue and the cache, values and locks), QUEUE_NAME
 * (default), LQB_FAILED_DB (/tmp/lqb-failed.sqlite), LQB_CACHE_PREFIX (laravel_cache),
 * LQB_RECORD_FILE, LQB_RECORD_PAYLOAD; LQB_QUEUE_DB, LQB_JOBS_TABLE and QUEUE_CONNECTION for the
 * `database` queue connection (see boot()).
 */
declare(strict_types=1);

namespace {
    require_once __DIR__ . '/bootstrap.php';
    // Debian's php-laravel-framework: every component's autoloader, Illuminate\Foundation (the
    // Dispatchable traits) and the framework helpers (app(), dispatch(), event()).
    require_once 'Illuminate/autoload.php';
    // The sample app's classes (App\Jobs\ShipOrder, …), which `lqb shapes` reads and Node dispatches.
    require_once __DIR__ . '/shapes-app/vendor/autoload.php';
}

namespace App\Bridge {

    use Illuminate\Container\Container;
    use Illuminate\Contracts\Debug\ExceptionHandler;
    use Throwable;

    /**
     * The application container. Laravel's WorkCommand asks its application whether it is down
     * for maintenance (Illuminate\Foundation\Application answers from storage/framework/down);
     * this app never is.
     */
    class Application extends Container
    {
        public function isDownForMaintenance(): bool
        {
            return false;
        }
    }

    /** The app's exception handler: one line per reported exception on standard error. */
    class StderrExceptionHandler implements ExceptionHandler
    {
        public function report(Throwable $e)
        {
            fwrite(STDERR, sprintf("[%s] %s: %s (%s:%d)\n", date('Y-m-d H:i:s'), get_class($e), $e->getMessage(), $e->getFile(), $e->getLine()));
            if (getenv('LQB_TRACE')) {
                fwrite(STDERR, $e->getTraceAsString() . "\n");
            }
        }

        public function shouldReport(Throwable $e)
        {
            return true;
        }

        public function render($request, Throwable $e)
        {
            throw $e;
        }

        public function renderForConsole($output, Throwable $e)
        {
            $output->writeln('<error>' . get_class($e) . ': ' . $e->getMessage() . '</error>');
        }
    }

    final class Recorder
    {
        /** Appends one JSON line to LQB_RECORD_FILE (standard error when unset); with LQB_RECORD_TIME set, "t" = microtime(true) at the run. */
        public static function write(array $record): void
        {
            if (getenv('LQB_RECORD_TIME')) {
                $record['t'] = microtime(true);
            }
            $line = json_encode($record, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR) . "\n";
            $file = getenv('LQB_RECORD_FILE');
            if ($file === false || $file === '') {
                fwrite(STDERR, $line);
                return;
            }
            if (file_put_contents($file, $line, FILE_APPEND | LOCK_EX) === false) {
                throw new \RuntimeException("cannot append to LQB_RECORD_FILE {$file}");
            }
        }

        /** ["payload" => $job->payload()] when LQB_RECORD_PAYLOAD is set, else nothing. */
        public static function payload(?\Illuminate\Contracts\Queue\Job $job): array
        {
            return $job && getenv('LQB_RECORD_PAYLOAD') ? ['payload' => $job->payload()] : [];
        }

        /** The "props" member: each value, then "types" => get_debug_type of each. */
        public static function props(array $props): array
        {
            $types = [];
            foreach ($props as $name => $value) {
                $types[$name] = get_debug_type($value);
            }
            return $props + ['types' => $types];
        }
    }

    /**
     * Illuminate\Queue\Worker as QueueServiceProvider::registerWorker builds it: the app's queue,
     * events and exception handler, its maintenance check, and its reset of scoped instances and
     * facades after each job.
     */
    function queueWorker(Application $app): \Illuminate\Queue\Worker
    {
        return new \Illuminate\Queue\Worker(
            $app['queue'],
            $app['events'],
            $app[ExceptionHandler::class],
            fn () => $app->isDownForMaintenance(),
            function () use ($app) {
                $app->forgetScopedInstances();

                return \Illuminate\Support\Facades\Facade::clearResolvedInstances();
            }
        );
    }

    /**
     * Boots the app. Options: retry_after (int|null, default 90), block_for (int|null, default
     * null), connection (the queue connection's name, default 'redis').
     *
     * Container bindings, as Laravel's own service providers make them:
     *   config (Illuminate\Config\Repository), redis (RedisManager, phpredis), queue (QueueManager
     *   from the Queue Capsule, connection `redis` = queue.default), events (EventServiceProvider:
     *   Dispatcher with the queue resolver), Bus\Dispatcher (BusServiceProvider), db (Database
     *   Capsule, sqlite connection `failed` = LQB_FAILED_DB), queue.failer
     *   (DatabaseUuidFailedJobProvider, table failed_jobs), cache.store (Cache\Repository over
     *   RedisStore on the same Redis connection, prefix LQB_CACHE_PREFIX; with REDIS_CACHE_DB the
     *   stock skeleton's store from CacheManager: values on `cache`, locks on `default`), ExceptionHandler.
     */
    function boot(array $options = []): Application
    {
        $name = $options['connection'] ?? 'redis';
        $app = new Application();
        Container::setInstance($app);
        $app->instance('app', $app);
        $app->instance(Container::class, $app);
        $app->alias('app', \Illuminate\Contracts\Container\Container::class);
        \Illuminate\Support\Facades\Facade::setFacadeApplication($app);

        $app->instance('config', new \Illuminate\Config\Repository([
            'queue' => [
                'default' => $name,
                'connections' => [],
                'failed' => ['driver' => 'database-uuids', 'database' => 'failed', 'table' => getenv('LQB_FAILED_TABLE') ?: 'failed_jobs'],
            ],
            'cache' => ['prefix' => getenv('LQB_CACHE_PREFIX') !== false ? (string) getenv('LQB_CACHE_PREFIX') : 'laravel_cache'],
        ]));

        $redisConfig = laravel_redis_config();
        $app->singleton('redis', fn () => new \Illuminate\Redis\RedisManager($app, 'phpredis', $redisConfig));

        (new \Illuminate\Events\EventServiceProvider($app))->register();
        $app->alias('events', \Illuminate\Events\Dispatcher::class);
        $app->alias('events', \Illuminate\Contracts\Events\Dispatcher::class);
        (new \Illuminate\Bus\BusServiceProvider($app))->register();

        $queue = new \Illuminate\Queue\Capsule\Manager($app);
        $queue->addConnection([
            'driver' => 'redis',
            'connection' => 'default',
            'queue' => getenv('QUEUE_NAME') ?: 'default',
            'retry_after' => array_key_exists('retry_after', $options) ? $options['retry_after'] : 90,
            'block_for' => $options['block_for'] ?? null,
        ], $name);
        $app['config']['queue.default'] = $name;
        // LQB_QUEUE_DB (a SQLite file or a server URL): also Laravel's `database` queue connection
        // on it, over the table LQB_JOBS_TABLE (jobs), with the same retry_after; with
        // QUEUE_CONNECTION=database it is the default connection (what dispatch() pushes to).
        if ($queueDb = getenv('LQB_QUEUE_DB')) {
            \App\Bridge\Bookkeeping\add_connection($app, 'queue', $queueDb);
            $queue->addConnection([
                'driver' => 'database',
                'connection' => 'queue',
                'table' => getenv('LQB_JOBS_TABLE') ?: 'jobs',
                'queue' => getenv('QUEUE_NAME') ?: 'default',
                'retry_after' => array_key_exists('retry_after', $options) ? $options['retry_after'] : 90,
            ], 'database');
            if (getenv('QUEUE_CONNECTION') === 'database') {
                $app['config']['queue.default'] = 'database';
            }
        }
        $app->instance('queue', $queue->getQueueManager());
        $app->alias('queue', \Illuminate\Queue\QueueManager::class);
        $app->alias('queue', \Illuminate\Contracts\Queue\Factory::class);
        $app->alias('queue', \Illuminate\Contracts\Queue\Monitor::class);
        $app->singleton('queue.connection', fn ($app) => $app['queue']->connection());
        $app->alias('queue.connection', \Illuminate\Contracts\Queue\Queue::class);

        // LQB_FAILED_DB: a SQLite file, or a URL (mysql://, mariadb://, postgres://) that Laravel's
        // own ConfigurationUrlParser reads, as DB_URL does in an app. LQB_FAILED_TABLE names the table.
        $failedDb = getenv('LQB_FAILED_DB') ?: '/tmp/lqb-failed.sqlite';
        $db = new \Illuminate\Database\Capsule\Manager($app);
        if (preg_match('#^(mysql|mariadb|postgres|postgresql|pgsql)://#', $failedDb, $m)) {
            $driver = in_array($m[1], ['mysql', 'mariadb'], true) ? 'mysql' : 'pgsql';
            $url = preg_replace('#^[a-z]+://#', $driver . '://', $failedDb);
            $db->addConnection(['driver' => $driver, 'url' => $url, 'prefix' => '', 'charset' => $driver === 'mysql' ? 'utf8mb4' : 'utf8', 'collation' => $driver === 'mysql' ? 'utf8mb4_unicode_ci' : null], 'failed');
            $failedDb = ':memory:'; // nothing to create on disk
        } else {
            $db->addConnection(['driver' => 'sqlite', 'database' => $failedDb, 'prefix' => '', 'foreign_key_constraints' => false], 'failed');
        }
        $app->instance('db', $db->getDatabaseManager());
        $app->singleton('queue.failer', function ($app) use ($failedDb) {
            $config = $app['config']['queue.failed'];
            ensure_failed_jobs_table($app['db'], $config['database'], $config['table'], $failedDb);
            return new \Illuminate\Queue\Failed\DatabaseUuidFailedJobProvider($app['db'], $config['database'], $config['table']);
        });

        if (getenv('REDIS_CACHE_DB') !== false) {
            // The stock skeleton's config/cache.php: the redis store keeps values on the `cache`
            // connection and takes locks on `default`; Laravel's CacheManager builds it.
            $app['config']['cache.default'] = 'redis';
            $app['config']['cache.stores'] = ['redis' => ['driver' => 'redis', 'connection' => 'cache', 'lock_connection' => 'default']];
            $app->singleton('cache', fn ($app) => new \Illuminate\Cache\CacheManager($app));
            $app->singleton('cache.store', fn ($app) => $app['cache']->driver());
        } else {
            $app->singleton('cache.store', fn ($app) => new \Illuminate\Cache\Repository(
                new \Illuminate\Cache\RedisStore($app['redis'], $app['config']['cache.prefix'], 'default')
            ));
        }
        $app->alias('cache.store', \Illuminate\Cache\Repository::class);
        $app->alias('cache.store', \Illuminate\Contracts\Cache\Repository::class);

        $app->singleton(ExceptionHandler::class, StderrExceptionHandler::class);

        // APP_KEY (and APP_CIPHER): Laravel's own EncryptionServiceProvider, as a stock app registers
        // it: the encrypter CallQueuedHandler uses to read a ShouldBeEncrypted job's command, and
        // the key that signs (and checks) every serialized closure, a batch's callbacks and
        // CallQueuedClosure's among them.
        if ($key = getenv('APP_KEY')) {
            $app['config']['app.key'] = $key;
            $app['config']['app.cipher'] = getenv('APP_CIPHER') ?: 'AES-256-CBC';
            (new \Illuminate\Encryption\EncryptionServiceProvider($app))->register();
            $app->alias('encrypter', \Illuminate\Encryption\Encrypter::class);
            $app->alias('encrypter', \Illuminate\Contracts\Encryption\Encrypter::class);
        }

        // The cache store for unique locks and the batch repository (bookkeeping-app.php).
        \App\Bridge\Bookkeeping\bind($app);

        return $app;
    }

    /**
     * Creates the SQLite file and Laravel 8's failed_jobs table (the schema of
     * Illuminate/Queue/Console/stubs/failed_jobs.stub) when they are missing. Safe when several
     * processes race: the DDL runs in one transaction and "already exists" is accepted.
     */
    function ensure_failed_jobs_table(\Illuminate\Database\DatabaseManager $db, string $connection, string $table, string $path): void
    {
        if ($path !== ':memory:' && !file_exists($path)) {
            @touch($path);
        }
        $conn = $db->connection($connection);
        $schema = $conn->getSchemaBuilder();
        if ($schema->hasTable($table)) {
            return;
        }
        $create = fn () => $schema->create($table, function (\Illuminate\Database\Schema\Blueprint $t) {
            $t->id();
            $t->string('uuid')->unique();
            $t->text('connection');
            $t->text('queue');
            $t->longText('payload');
            $t->longText('exception');
            $t->timestamp('failed_at')->useCurrent();
        });
        try {
            // MySQL/MariaDB commit DDL on their own (a transaction around it then fails to commit).
            $conn->getDriverName() === 'mysql' ? $create() : $conn->transaction($create);
        } catch (\Illuminate\Database\QueryException $e) {
            if (!$schema->hasTable($table)) {
                throw $e;
            }
        }
    }
}

namespace App\Jobs\Bridge {

    use App\Bridge\Recorder;
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Foundation\Bus\Dispatchable;
    use Illuminate\Queue\InteractsWithQueue;
    use Illuminate\Queue\SerializesModels;
    use RuntimeException;
    use Throwable;

    /** Writes run records. No properties, so it changes nothing in the serialized job. */
    trait RecordsRuns
    {
        protected function recordRun(array $props, array $extra = []): int
        {
            $attempts = $this->attempts();
            Recorder::write([
                'side' => 'php',
                'class' => static::class,
                'props' => Recorder::props($props),
                'attempts' => $attempts,
                'jobId' => $this->job ? $this->job->getJobId() : null,
                'uuid' => $this->job ? $this->job->uuid() : null,
                'queue' => $this->job ? $this->job->getQueue() : null,
                'pid' => getmypid(),
            ] + Recorder::payload($this->job) + $extra);
            return $attempts;
        }
    }

    class RecordJob implements ShouldQueue
    {
        use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRuns;

        /** Null unless laravel-dispatch.php sets them; null means the worker's option applies. */
        public $tries;
        public $timeout;
        public $backoff;
        public $maxExceptions;

        public function __construct(public int $n, public string $label, public float $ratio, public array $items, public ?bool $flag = null)
        {
        }

        public function handle(): void
        {
            $this->recordRun(['n' => $this->n, 'label' => $this->label, 'ratio' => $this->ratio, 'items' => $this->items, 'flag' => $this->flag]);
            if ($this->label === 'delete-itself') $this->delete();
        }
    }

    /** Fails (RuntimeException "flaky N attempt A") while attempts <= failTimes. No $tries: --tries applies. */
    class FlakyJob implements ShouldQueue
    {
        use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRuns;

        public function __construct(public int $n, public int $failTimes = 1)
        {
        }

        public function handle(): void
        {
            $attempts = $this->recordRun(['n' => $this->n, 'failTimes' => $this->failTimes]);
            if ($attempts <= $this->failTimes) {
                throw new RuntimeException("flaky {$this->n} attempt {$attempts}");
            }
        }
    }

    class FlakyBackoffJob extends FlakyJob
    {
        public $tries = 3;
        public $backoff = [1, 2];
    }

    /**
     * Records phase "start", waits `seconds` (to the deadline: a signal interrupting the sleep
     * does not shorten it), records phase "done". No $timeout: --timeout applies.
     */
    class SlowJob implements ShouldQueue
    {
        use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRuns;

        /** Null (or false) unless laravel-dispatch.php sets them; null means the worker's option applies. */
        public $tries;
        public $timeout;
        public $maxExceptions;
        public $failOnTimeout = false;

        public function __construct(public int $n, public float $seconds = 1.0)
        {
        }

        public function handle(): void
        {
            $props = ['n' => $this->n, 'seconds' => $this->seconds];
            $this->recordRun($props, ['phase' => 'start']);
            $deadline = microtime(true) + $this->seconds;
            while (($left = $deadline - microtime(true)) > 0) {
                usleep((int) min($left * 1e6, 100000));
            }
            $this->recordRun($props, ['phase' => 'done']);
        }
    }

    /** Always throws RuntimeException("MESSAGE N attempt A"); failed() records the failure. */
    class FailingJob implements ShouldQueue
    {
        use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRuns;

        /** Null unless laravel-dispatch.php sets them; null means the worker's option applies. */
        public $tries;
        public $maxExceptions;

        public function __construct(public int $n, public string $message = 'failing')
        {
        }

        public function handle(): void
        {
            $attempts = $this->recordRun(['n' => $this->n, 'message' => $this->message]);
            throw new RuntimeException("{$this->message} {$this->n} attempt {$attempts}");
        }

        /** Laravel calls this on a fresh copy of the job (no $this->job). */
        public function failed(Throwable $e): void
        {
            Recorder::write([
                'side' => 'php',
                'class' => static::class,
                'props' => Recorder::props(['n' => $this->n, 'message' => $this->message]),
                'failed' => true,
                'message' => $e->getMessage(),
                'exception' => get_class($e),
                'pid' => getmypid(),
            ]);
        }
    }
}

namespace App\Events\Bridge {

    use Illuminate\Foundation\Events\Dispatchable;
    use Illuminate\Queue\SerializesModels;

    class ThingHappened
    {
        use Dispatchable, SerializesModels;

        public function __construct(public int $id, public string $name)
        {
        }
    }
}

namespace App\Listeners\Bridge {

    use App\Bridge\Recorder;
    use App\Events\Bridge\ThingHappened;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;

    class RecordListener implements ShouldQueue
    {
        use InteractsWithQueue;

        /** The queue laravel-dispatch.php sends it to (null: the connection's default). */
        public static ?string $onQueue = null;

        public function viaQueue(): ?string
        {
            return static::$onQueue;
        }

        public function handle(ThingHappened $event): void
        {
            Recorder::write([
                'side' => 'php',
                'class' => static::class,
                'event' => get_class($event),
                'props' => Recorder::props(['id' => $event->id, 'name' => $event->name]),
                'attempts' => $this->attempts(),
                'jobId' => $this->job ? $this->job->getJobId() : null,
                'uuid' => $this->job ? $this->job->uuid() : null,
                'queue' => $this->job ? $this->job->getQueue() : null,
                'pid' => getmypid(),
            ] + Recorder::payload($this->job));
        }
    }
}

namespace {
    // Jobs guarded by WithoutOverlapping and RateLimited (they use RecordsRuns, declared above).
    require_once __DIR__ . '/guards-app.php';
    // Unique jobs, batches and chains' catch callbacks: their classes and bindings.
    require_once __DIR__ . '/bookkeeping-app.php';
}
