<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * Its backoff and expiry are PHP methods, whose results Laravel's dispatch writes into the payload,
 * with arithmetic `lqb shapes` does not translate.
 */
class RetryLater implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public int $n)
    {
    }

    public function handle(): void
    {
    }

    public function backoff(): array
    {
        return [5, 5 * 2];
    }

    public function retryUntil(): \DateTimeInterface
    {
        return now()->addMinutes(5 * 2);
    }
}
