<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/** Every literal spelling and form the translation takes, around one property. */
class Literals implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public $value)
    {
    }

    public function uniqueId()
    {
        return 'x' . 2.50 . -1 . 1e20 . true . null . false . -0.0 . ("a" . ('b')) . $this->value;
    }

    public function backoff()
    {
        return array(0x1F, 1_000, 0b11, 017, 0o17, (int) $this->value);
    }

    public function retryUntil()
    {
        return now()->addDay()->subHours(2)->addWeek()->addMinute();
    }

    public function tags()
    {
        return [__CLASS__, get_class($this), 'it\'s \\ here', (bool) $this->value, (float) $this->value, $this->value, null, 1.5];
    }

    public function displayName()
    {
        return get_class($this) . '/' . (string) (float) $this->value;
    }

    public function handle(): void
    {
    }
}
