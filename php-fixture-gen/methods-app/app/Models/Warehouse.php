<?php

namespace App\Models;

use Illuminate\Database\Eloquent\Model;

/** A model keyed by a string column of its own. */
class Warehouse extends Model
{
    protected $primaryKey = 'code';
    protected $keyType = 'string';
    public $incrementing = false;
}
