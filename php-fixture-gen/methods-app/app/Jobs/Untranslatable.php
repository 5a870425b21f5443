<?php

namespace App\Jobs;

use App\Models\Product;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/** Bodies that are more than a pure expression over the properties: left untranslated. */
class Untranslatable implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public Product $product, public string $sku)
    {
    }

    public function uniqueId()
    {
        return md5($this->sku);
    }

    public function backoff()
    {
        if ($this->sku === '') {
            return 1;
        }
        return 5;
    }

    public function retryUntil()
    {
        return now()->addMinutes($this->product->id);
    }

    public function tags()
    {
        return ['name:' . $this->product->name];
    }

    public function displayName()
    {
        return $this->sku . $this->helper();
    }

    private function helper(): string
    {
        return 'x';
    }

    public function handle(): void
    {
    }
}
