<?php
/**
 * The app's autoloader, as Composer's would be: Debian's Laravel 8.83 for Illuminate\*, and
 * PSR-4 App\ => app/.
 */
declare(strict_types=1);

require_once 'Illuminate/autoload.php';

spl_autoload_register(function (string $class): void {
    if (strncmp($class, 'App\\', 4) !== 0) {
        return;
    }
    $file = __DIR__ . '/../app/' . str_replace('\\', '/', substr($class, 4)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
