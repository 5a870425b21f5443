<?php
/**
 * Loads the .env file named by the first argument as a Laravel 8 app boots
 * (LoadEnvironmentVariables: Dotenv::create(Env::getRepository(), dir, file)->load(), the
 * process's environment as it is), and writes one JSON line: the variables it set, in order,
 * or {"error": true} when phpdotenv refuses the file (its message holds the values: not printed).
 */
declare(strict_types=1);

require_once 'Illuminate/Support/autoload.php';
require_once 'Dotenv/autoload.php';

use Dotenv\Dotenv;
use Dotenv\Exception\InvalidFileException;
use Illuminate\Support\Env;

try {
    $loaded = Dotenv::create(Env::getRepository(), dirname($argv[1]), basename($argv[1]))->load();
    echo json_encode((object) $loaded, JSON_THROW_ON_ERROR | JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES), "\n";
} catch (InvalidFileException $e) {
    echo json_encode(['error' => true]), "\n";
}
