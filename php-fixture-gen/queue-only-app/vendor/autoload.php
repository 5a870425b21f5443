<?php
/**
 * The autoloader of an app that uses illuminate/queue outside Laravel (a Capsule setup, Lumen
 * without mail): Debian's illuminate/queue and illuminate/bus (with what they require: contracts,
 * support, database, …) but not illuminate/notifications, illuminate/mail or illuminate/foundation;
 * and PSR-4 App\ => app/.
 */
declare(strict_types=1);

require_once 'Illuminate/Queue/autoload.php';
require_once 'Illuminate/Bus/autoload.php';

spl_autoload_register(function (string $class): void {
    if (strncmp($class, 'App\\', 4) !== 0) {
        return;
    }
    $file = __DIR__ . '/../app/' . str_replace('\\', '/', substr($class, 4)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
