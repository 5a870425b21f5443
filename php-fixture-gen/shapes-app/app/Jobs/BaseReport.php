<?php

namespace App\Jobs;

/** A parent whose private property its children cannot see: mangled with this class's name. */
abstract class BaseReport
{
    private string $tenant = 'acme';
    protected int $version = 1;

    protected function tenant(): string
    {
        return $this->tenant;
    }
}
