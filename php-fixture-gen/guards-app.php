<?php
/**
 * Jobs guarded by Laravel's own job middleware, for the cross-language middleware tests
 * (loaded by worker-app.php, after its classes):
 *   App\Jobs\Bridge\OverlapJob  (int n, string key, float seconds, ?int releaseAfter):
 *       middleware() = WithoutOverlapping(key)->releaseAfter(releaseAfter) (dontRelease() when null);
 *       records phase "start" and "done" with "t" (milliseconds), waiting `seconds` between.
 *   App\Jobs\Bridge\LimitedJob  (int n, string key): middleware() = RateLimited('bridge-limit');
 *       records one run with "t".
 *   App\Jobs\Bridge\WindowJob      (int n): retryUntil() = now + LQB_RETRY_WINDOW seconds (1 by
 *       default), the method queue:retry calls again; records one run.
 *   App\Jobs\Bridge\WindowPropJob  (int n, int retryUntil): a `$retryUntil` property, which
 *       queue:retry leaves as it was; records one run.
 * The limiter `bridge-limit` is what an app's RouteServiceProvider would define:
 *   RateLimiter::for('bridge-limit', fn ($job) => Limit::perMinute(LQB_RATE_LIMIT ?: 3)->by($job->key))
 * on the RateLimiter singleton over the app's cache store, as CacheServiceProvider binds it.
 */
declare(strict_types=1);

namespace App\Bridge {

    use Illuminate\Cache\RateLimiter;
    use Illuminate\Cache\RateLimiting\Limit;
    use Illuminate\Container\Container;

    final class Limiters
    {
        /** Binds the RateLimiter singleton and defines `bridge-limit`, once per process. */
        public static function define(): void
        {
            $app = Container::getInstance();
            if ($app->resolved(RateLimiter::class) || $app->bound(RateLimiter::class)) {
                return;
            }
            $app->singleton(RateLimiter::class, fn ($app) => new RateLimiter($app->make('cache.store')));
            $max = (int) (getenv('LQB_RATE_LIMIT') ?: 3);
            $app->make(RateLimiter::class)->for('bridge-limit', fn ($job) => Limit::perMinute($max)->by($job->key));
        }
    }
}

namespace App\Jobs\Bridge {

    use App\Bridge\Limiters;
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Foundation\Bus\Dispatchable;
    use Illuminate\Queue\InteractsWithQueue;
    use Illuminate\Queue\Middleware\RateLimited;
    use Illuminate\Queue\Middleware\WithoutOverlapping;
    use Illuminate\Queue\SerializesModels;

    class OverlapJob implements ShouldQueue
    {
        use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRuns;

        public $tries;

        public function __construct(public int $n, public string $key = 'shared', public float $seconds = 0.5, public ?int $releaseAfter = 1)
        {
        }

        public function middleware(): array
        {
            $guard = new WithoutOverlapping($this->key);
            return [$this->releaseAfter === null ? $guard->dontRelease() : $guard->releaseAfter($this->releaseAfter)];
        }

        public function handle(): void
        {
            $props = ['n' => $this->n, 'key' => $this->key];
            $this->recordRun($props, ['phase' => 'start', 't' => microtime(true) * 1000]);
            $deadline = microtime(true) + $this->seconds;
            while (($left = $deadline - microtime(true)) > 0) {
                usleep((int) min($left * 1e6, 20000));
            }
            $this->recordRun($props, ['phase' => 'done', 't' => microtime(true) * 1000]);
        }
    }

    class WindowJob implements ShouldQueue
    {
        use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRuns;

        public function __construct(public int $n)
        {
        }

        public function retryUntil(): \DateTimeInterface
        {
            return new \DateTimeImmutable('@' . (time() + (int) (getenv('LQB_RETRY_WINDOW') ?: 1)));
        }

        public function handle(): void
        {
            $this->recordRun(['n' => $this->n]);
        }
    }

    class WindowPropJob implements ShouldQueue
    {
        use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRuns;

        public function __construct(public int $n, public int $retryUntil)
        {
        }

        public function handle(): void
        {
            $this->recordRun(['n' => $this->n]);
        }
    }

    class LimitedJob implements ShouldQueue
    {
        use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRuns;

        public $tries;

        public function __construct(public int $n, public string $key = 'shared')
        {
        }

        public function middleware(): array
        {
            Limiters::define();
            return [new RateLimited('bridge-limit')];
        }

        public function handle(): void
        {
            $this->recordRun(['n' => $this->n, 'key' => $this->key], ['t' => microtime(true) * 1000]);
        }
    }
}
