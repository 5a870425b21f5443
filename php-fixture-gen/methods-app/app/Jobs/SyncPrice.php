<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/** Scalars of every kind concatenated, cast, and a backoff read off a property. */
class SyncPrice implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public $tries = 3;

    public function __construct(
        public string $sku,
        protected int $count,
        private ?float $price,
        public bool $express,
        public $untyped,
        public string $code,
    ) {
    }

    public function uniqueId(): string
    {
        return $this->sku . '-' . $this->count . '-' . $this->price . '-' . $this->express . '-' . $this->untyped;
    }

    public function backoff(): int
    {
        return (int) $this->code;
    }

    public function retryUntil()
    {
        return now()->addSeconds(90)->subMinute()->addHours(2);
    }

    public function tags(): array
    {
        return [static::class, (string) $this->price, (string) (int) $this->express, (string) (float) $this->code];
    }

    public function displayName(): string
    {
        return self::class . '@' . (bool) $this->untyped;
    }

    public function handle(): void
    {
    }
}
