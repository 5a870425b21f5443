<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/** Return types PHP converts the body's value to (this file is not strict): "007" is the int 7. */
class TypedReturns implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public $value)
    {
    }

    public function uniqueId(): int
    {
        return $this->value;
    }

    public function backoff(): ?float
    {
        return $this->value;
    }

    public function retryUntil(): \DateTimeInterface
    {
        return now()->addMinutes(5);
    }

    public function tags(): array
    {
        return [$this->value];
    }

    public function displayName(): string
    {
        return $this->value;
    }

    public function handle(): void
    {
    }
}
