<?php

namespace App\Events;

use Illuminate\Queue\SerializesModels;

class OrderShipped
{
    use SerializesModels;

    public function __construct(public int $orderId, public string $carrier = 'post')
    {
    }
}
