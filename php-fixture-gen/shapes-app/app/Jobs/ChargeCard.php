<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeEncrypted;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/** Its command must never sit in Redis in clear text. */
class ChargeCard implements ShouldQueue, ShouldBeEncrypted
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

    public $tries = 2;

    public function __construct(protected string $cardToken, public int $amount)
    {
    }

    public function handle(): void
    {
        $this->recordWhatItGot(['cardToken' => $this->cardToken, 'amount' => $this->amount]);
    }
}
