<?php

namespace App\Mail;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Mail\Mailable;

/** Left over from a full Laravel app: its parent is not installed here. */
class PhotoReady extends Mailable implements ShouldQueue
{
    use Queueable;
}
