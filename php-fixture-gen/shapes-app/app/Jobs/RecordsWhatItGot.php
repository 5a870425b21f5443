<?php

namespace App\Jobs;

/**
 * Writes the job's properties (values and PHP types) as a run record, through the test
 * recorder when the cross-language worker has loaded it. Declares no properties.
 */
trait RecordsWhatItGot
{
    protected function recordWhatItGot(array $props): void
    {
        if (!class_exists(\App\Bridge\Recorder::class, false)) {
            return;
        }
        \App\Bridge\Recorder::write([
            'side' => 'php',
            'class' => static::class,
            'props' => \App\Bridge\Recorder::props($props),
            'attempts' => $this->attempts(),
            'uuid' => $this->job ? $this->job->uuid() : null,
            'queue' => $this->job ? $this->job->getQueue() : null,
            'maxTries' => $this->job ? $this->job->maxTries() : null,
            'backoff' => $this->job ? ($this->job->payload()['backoff'] ?? null) : null,
            'timeout' => $this->job ? $this->job->timeout() : null,
            'pid' => getmypid(),
        ]);
    }
}
