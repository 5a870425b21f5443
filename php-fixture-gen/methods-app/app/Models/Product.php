<?php

namespace App\Models;

use Illuminate\Database\Eloquent\Model;

/** A model keyed by `id`, an int. */
class Product extends Model
{
}
