<?php

namespace App\Jobs;

use App\Models\Product;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/** A model that may be null, read through `?->`: null gives null, not a warning. */
class NullableProduct implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public ?Product $product)
    {
    }

    public function uniqueId()
    {
        return $this->product?->id;
    }

    public function backoff()
    {
        return $this->product?->getKey();
    }

    public function retryUntil()
    {
        return now()->addMinutes(5);
    }

    public function tags()
    {
        return ['product:' . $this->product?->getKey()];
    }

    public function displayName()
    {
        return 'Nullable ' . $this->product?->id;
    }

    public function handle(): void
    {
    }
}
