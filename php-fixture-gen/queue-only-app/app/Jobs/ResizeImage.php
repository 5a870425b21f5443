<?php

namespace App\Jobs;

use App\Models\Photo;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/** A job as a Capsule app writes it: no Dispatchable (that is illuminate/foundation's). */
class ResizeImage implements ShouldQueue
{
    use InteractsWithQueue, Queueable, SerializesModels;

    public $tries = 3;

    public function __construct(public Photo $photo, protected int $width = 640)
    {
    }

    public function handle(): void
    {
    }
}
