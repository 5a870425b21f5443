<?php
/**
 * The application's bookkeeping in worker-app.php's Laravel 8.83 app: what CallQueuedHandler
 * keeps around a job (unique locks, batches, a chain's catch callbacks), with Debian's real
 * Illuminate\Cache, Illuminate\Bus and Illuminate\Database classes. Loaded by worker-app.php;
 * bind() is called at the end of its boot().
 *
 * Bindings:
 *   cache.store     with LQB_CACHE_STORE=database: a Cache\Repository over DatabaseStore on the
 *                   SQLite file LQB_LOCK_DB (tables `cache` and `cache_locks`, as Laravel's
 *                   cache migration stub makes them, created when missing), prefix
 *                   LQB_CACHE_PREFIX. Otherwise worker-app.php's RedisStore stays.
 *   Illuminate\Bus\BatchRepository  with LQB_BATCH_DB (a SQLite file, or a mysql:// or
 *                   postgres:// URL): DatabaseBatchRepository over it, table LQB_BATCH_TABLE
 *                   (job_batches), made from Laravel's batches migration stub when missing.
 *
 * Classes (App\Jobs\Bookkeeping):
 *   UniqueJob             ShouldBeUnique (int n, string label, ?string uniqueId)
 *   UntilProcessingJob    ShouldBeUniqueUntilProcessing, the same
 *   UniqueByMethodJob     UniqueJob whose uniqueId() method says "method-N"
 *   UniqueByOpaqueMethodJob  UniqueJob whose uniqueId() is md5("opaque-N"), which lqb shapes leaves untranslated
 *   BatchJob              Batchable (int n, string label)
 *   ChainJob              (int n, string label): a chain's link
 * Each handle() records a run as worker-app.php's jobs do, plus "lockHeld" (whether its unique
 * lock is in the cache store while it runs) for the unique ones; label "fail" throws
 * RuntimeException, "release" releases the job for 30 s.
 */
declare(strict_types=1);

namespace App\Bridge\Bookkeeping {

    use Illuminate\Container\Container;

    function bind(Container $app): void
    {
        if (getenv('LQB_CACHE_STORE') === 'database') {
            $path = getenv('LQB_LOCK_DB') ?: '/tmp/lqb-locks.sqlite';
            add_connection($app, 'locks', $path);
            ensure_table($app, 'locks', 'cache', function ($t) {
                $t->string('key')->primary();
                $t->mediumText('value');
                $t->integer('expiration');
            });
            ensure_table($app, 'locks', 'cache_locks', function ($t) {
                $t->string('key')->primary();
                $t->string('owner');
                $t->integer('expiration');
            });
            $app->singleton('cache.store', fn ($app) => new \Illuminate\Cache\Repository(
                new \Illuminate\Cache\DatabaseStore($app['db']->connection('locks'), 'cache', $app['config']['cache.prefix'], 'cache_locks')
            ));
        }
        if ($batchDb = getenv('LQB_BATCH_DB')) {
            $table = getenv('LQB_BATCH_TABLE') ?: 'job_batches';
            add_connection($app, 'batches', $batchDb);
            $app->singleton(\Illuminate\Bus\BatchRepository::class, function ($app) use ($table) {
                ensure_table($app, 'batches', $table, function ($t) {
                    $t->string('id')->primary();
                    $t->string('name');
                    $t->integer('total_jobs');
                    $t->integer('pending_jobs');
                    $t->integer('failed_jobs');
                    $t->text('failed_job_ids');
                    $t->mediumText('options')->nullable();
                    $t->integer('cancelled_at')->nullable();
                    $t->integer('created_at');
                    $t->integer('finished_at')->nullable();
                });
                return new \Illuminate\Bus\DatabaseBatchRepository(
                    new \Illuminate\Bus\BatchFactory($app['queue']),
                    $app['db']->connection('batches'),
                    $table
                );
            });
        }
    }

    /** A connection named $name: a SQLite file (made when missing), or a mysql://, mariadb:// or postgres:// URL. */
    function add_connection(Container $app, string $name, string $where): void
    {
        $connections = $app['config']['database.connections'] ?? [];
        if (preg_match('#^(mysql|mariadb|postgres|postgresql|pgsql)://#', $where, $m)) {
            $driver = in_array($m[1], ['mysql', 'mariadb'], true) ? 'mysql' : 'pgsql';
            $connections[$name] = ['driver' => $driver, 'url' => preg_replace('#^[a-z]+://#', $driver . '://', $where), 'prefix' => '', 'charset' => $driver === 'mysql' ? 'utf8mb4' : 'utf8', 'collation' => $driver === 'mysql' ? 'utf8mb4_unicode_ci' : null];
        } else {
            if (!file_exists($where)) {
                @touch($where);
            }
            $connections[$name] = ['driver' => 'sqlite', 'database' => $where, 'prefix' => '', 'foreign_key_constraints' => false];
        }
        $app['config']['database.connections'] = $connections;
    }

    function ensure_table(Container $app, string $connection, string $table, \Closure $columns): void
    {
        $schema = $app['db']->connection($connection)->getSchemaBuilder();
        if ($schema->hasTable($table)) {
            return;
        }
        try {
            $schema->create($table, $columns);
        } catch (\Illuminate\Database\QueryException $e) {
            if (!$schema->hasTable($table)) {
                throw $e;
            }
        }
    }

    /** A batch callback's run: {"side":"php","callback":..,"batch":..,"pending":..,"failed":..}. */
    function record_callback(string $callback, \Illuminate\Bus\Batch $batch): void
    {
        \App\Bridge\Recorder::write(['side' => 'php', 'callback' => $callback, 'batch' => $batch->id, 'pending' => $batch->pendingJobs, 'failed' => $batch->failedJobs, 'pid' => getmypid()]);
    }

    /** Whether the unique lock named $key is held in the default cache store, and by whom. */
    function lock_owner(string $key): ?string
    {
        $store = Container::getInstance()->make('cache.store')->getStore();
        if ($store instanceof \Illuminate\Cache\DatabaseStore) {
            $row = $store->getConnection()->table('cache_locks')->where('key', $store->getPrefix() . $key)->first();
            return $row && $row->expiration > time() ? (string) $row->owner : null;
        }
        $owner = $store->lockConnection()->get($store->getPrefix() . $key);
        return $owner === false || $owner === null ? null : (string) $owner;
    }
}

namespace App\Jobs\Bookkeeping {

    use App\Jobs\Bridge\RecordsRuns;
    use Illuminate\Bus\Batchable;
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldBeUnique;
    use Illuminate\Contracts\Queue\ShouldBeUniqueUntilProcessing;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Foundation\Bus\Dispatchable;
    use Illuminate\Queue\InteractsWithQueue;
    use Illuminate\Queue\SerializesModels;
    use RuntimeException;

    /** What each of these jobs does with its label: "fail" throws, "release" releases for 30 s. */
    trait ActsOnLabel
    {
        protected function act(string $label): void
        {
            if ($label === 'fail') {
                throw new RuntimeException("{$label} {$this->n}");
            }
            if ($label === 'release') {
                $this->release(30);
            }
        }
    }

    class UniqueJob implements ShouldQueue, ShouldBeUnique
    {
        use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRuns, ActsOnLabel;

        /** Read by Laravel as `$job->uniqueId ?? ''` (the class has no uniqueId() method). */
        public $uniqueId;

        public function __construct(public int $n, public string $label = 'ok', ?string $uniqueId = null)
        {
            $this->uniqueId = $uniqueId;
        }

        public function handle(): void
        {
            $owner = \App\Bridge\Bookkeeping\lock_owner('laravel_unique_job:' . static::class . $this->uniqueId);
            $this->recordRun(['n' => $this->n, 'label' => $this->label, 'uniqueId' => $this->uniqueId], ['lockHeld' => $owner !== null]);
            $this->act($this->label);
        }
    }

    class UntilProcessingJob extends UniqueJob implements ShouldBeUniqueUntilProcessing
    {
    }

    /** A uniqueId() method: PHP that Node cannot run, so Node cannot name its lock. */
    class UniqueByMethodJob extends UniqueJob
    {
        public function uniqueId(): string
        {
            return 'method-' . $this->n;
        }
    }

    /** A uniqueId() `lqb shapes` cannot translate (a function call): only PHP, or a handler's uniqueId function, knows it. */
    class UniqueByOpaqueMethodJob extends UniqueJob
    {
        public function uniqueId(): string
        {
            return md5('opaque-' . $this->n);
        }
    }

    class BatchJob implements ShouldQueue
    {
        use Batchable, Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRuns, ActsOnLabel;

        public function __construct(public int $n, public string $label = 'ok')
        {
        }

        public function handle(): void
        {
            $this->recordRun(['n' => $this->n, 'label' => $this->label, 'batchId' => $this->batchId]);
            $this->act($this->label);
        }
    }

    class ChainJob implements ShouldQueue
    {
        use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRuns, ActsOnLabel;

        public function __construct(public int $n, public string $label = 'ok')
        {
        }

        public function handle(): void
        {
            $this->recordRun(['n' => $this->n, 'label' => $this->label]);
            $this->act($this->label);
        }
    }
}
