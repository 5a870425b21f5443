<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/** Properties of its own and of its parent, one of them private to the parent. */
class MonthlyReport extends BaseReport implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

    public function __construct(protected int $month, private array $recipients = [])
    {
    }

    public function handle(): void
    {
        $this->recordWhatItGot(['month' => $this->month, 'recipients' => $this->recipients, 'tenant' => $this->tenant(), 'version' => $this->version]);
    }
}
