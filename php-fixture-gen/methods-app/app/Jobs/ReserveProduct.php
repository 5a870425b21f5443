<?php

namespace App\Jobs;

use App\Models\Product;
use App\Models\Warehouse;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/** Uniqueness as Laravel's documentation teaches it: the product's id. */
class ReserveProduct implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public Product $product, public Warehouse $warehouse, public string $sku, protected int $count)
    {
    }

    public function uniqueId()
    {
        return $this->product->id;
    }

    public function backoff()
    {
        return [1, 5, 10];
    }

    public function retryUntil()
    {
        return now()->addMinutes(5);
    }

    public function tags()
    {
        return ['product:' . $this->product->getKey(), 'warehouse:' . $this->warehouse->code, "sku:" . $this->sku];
    }

    public function displayName()
    {
        return 'Reserve ' . $this->sku . ' x' . $this->count;
    }

    public function handle(): void
    {
    }
}
