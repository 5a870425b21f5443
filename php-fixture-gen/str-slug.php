<?php
/**
 * Reads a JSON list of strings on standard input; writes the JSON list of what Laravel's
 * Str::slug($name, SEPARATOR) gives for each (SEPARATOR is the first argument, '_' by default),
 * as Laravel's default config makes the Redis and cache prefixes from APP_NAME.
 */
declare(strict_types=1);

require_once 'Illuminate/Support/autoload.php';

use Illuminate\Support\Str;

$separator = $argv[1] ?? '_';
$names = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
echo json_encode(array_map(fn (string $name) => Str::slug($name, $separator), $names), JSON_THROW_ON_ERROR), "\n";
