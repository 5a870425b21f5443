<?php

declare(strict_types=1);

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/** Return types in a strict_types file: only the type itself comes back (an int for a float). */
class StrictReturns implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public $value)
    {
    }

    public function uniqueId(): string
    {
        return $this->value;
    }

    public function backoff(): ?int
    {
        return $this->value;
    }

    public function retryUntil(): ?float
    {
        return $this->value;
    }

    public function tags(): array
    {
        return [$this->value];
    }

    public function displayName(): ?bool
    {
        return $this->value;
    }

    public function handle(): void
    {
    }
}
