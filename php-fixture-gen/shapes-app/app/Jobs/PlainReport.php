<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;

/**
 * Serialized natively (no SerializesModels): every property in the object's own table order,
 * the parent's private one included, mangled with the parent's name.
 */
class PlainReport extends BaseReport implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, Queueable;

    public $failOnTimeout = true;
    public $uniqueFor = 600;
    public $deleteWhenMissingModels = true;
    protected int $version = 2;
    private string $format = 'pdf';
    public ?int $pages;
    public ReportOptions $options;

    public function __construct(int $pages)
    {
        $this->pages = $pages;
        $this->options = new ReportOptions();
    }

    public function handle(): void
    {
    }

    public function uniqueId(): string
    {
        // A function call: `lqb shapes` leaves it untranslated.
        return sprintf('%d', $this->pages);
    }
}
