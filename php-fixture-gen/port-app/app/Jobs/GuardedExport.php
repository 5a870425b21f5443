<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\Middleware\RateLimited;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Queue\SerializesModels;

/** A job guarded by Laravel's own job middleware, for `lqb port`'s notes on each. */
class GuardedExport implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public int $exportId)
    {
    }

    public function middleware(): array
    {
        return [
            (new WithoutOverlapping($this->exportId))->releaseAfter(10)->expireAfter(180),
            new RateLimited('exports'),
        ];
    }

    public function handle(): void
    {
    }
}
