<?php

namespace App\Notifications;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Notifications\Notification;

/** Left over from a full Laravel app: its parent is not installed here. */
class PhotoResized extends Notification implements ShouldQueue
{
    use Queueable;
}
