<?php
/**
 * Job classes shaped like an application's, used by the fixture and demo scripts. They are
 * ordinary Laravel jobs: Laravel's own traits give them their queue properties.
 */
declare(strict_types=1);

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\InteractsWithQueue;

class SendWelcomeEmail implements ShouldQueue
{
    use InteractsWithQueue, Queueable;

    public $tries = 3;

    public function __construct(public int $userId = 0, public string $email = '', protected array $tags = [], private ?float $score = null)
    {
    }

    public function handle(): void
    {
        fwrite(STDOUT, json_encode(['ran' => static::class, 'userId' => $this->userId, 'email' => $this->email]) . "\n");
    }
}
