<?php

namespace App\Jobs;

/** A plain class a job holds: serialized natively inside the job. */
class ReportOptions
{
    public bool $landscape = false;
    public array $sections = ['summary'];
    protected int|string $paper = 'A4';
}
