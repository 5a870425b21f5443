<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/** A make:job class with every kind of property, and its retry rules declared. */
class ShipOrder implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

    public $tries = 4;
    public $backoff = [1, 2];
    public $timeout = 30;
    public $maxExceptions = 3;

    public int $orderId;
    protected string $secret;
    private ?array $notes = null;
    public float $weight = 1.5;
    protected bool $express = false;
    public ?string $coupon;
    public $untyped = 'plain';

    public function __construct(int $orderId, string $secret)
    {
        $this->orderId = $orderId;
        $this->secret = $secret;
    }

    public function handle(): void
    {
        $this->recordWhatItGot([
            'orderId' => $this->orderId,
            'secret' => $this->secret,
            'notes' => $this->notes,
            'weight' => $this->weight,
            'express' => $this->express,
            'coupon' => $this->coupon ?? 'uninitialized',
            'untyped' => $this->untyped,
        ]);
    }

    public function backoff(): array
    {
        return [1, 2];
    }

    public function failed(\Throwable $e): void
    {
    }
}
