<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/** One import at a time: a second dispatch while one is queued or running is dropped. */
class ImportFeed implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

    public $uniqueFor = 60;

    public function __construct(public string $feed)
    {
    }

    public function handle(): void
    {
        $this->recordWhatItGot(['feed' => $this->feed]);
    }
}
