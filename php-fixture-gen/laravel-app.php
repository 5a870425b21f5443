<?php
/**
 * A small Laravel 8.83 "application" around bootstrap.php's queue: the same container gets the
 * services a real app's providers would register, each from Laravel's own service providers or
 * classes (Debian's packages), never stand-ins:
 *
 *  - queue:          bootstrap.php's Queue Capsule (RedisQueue over phpredis), bound as `queue`
 *  - events:         Illuminate\Events\EventServiceProvider (Dispatcher with a queue resolver)
 *  - bus:            Illuminate\Bus\BusServiceProvider (Dispatcher that queues ShouldQueue commands)
 *  - notifications:  Illuminate\Notifications\NotificationServiceProvider (ChannelManager)
 *  - db / Eloquent:  Illuminate\Database\Capsule\Manager on sqlite :memory:, connection `sqlite`
 *  - encrypter:      Illuminate\Encryption\EncryptionServiceProvider, on demand (laravel_use_app_key)
 *
 * Illuminate\Foundation is not one of the component packages: it comes with Debian's
 * php-laravel-framework. Laravel's CallQueuedClosure uses its Dispatchable trait (so closures can
 * only be queued when it is installed) and Bus::chain() returns its PendingChain. When the package
 * is there, its autoloader (Illuminate/autoload.php, which also defines the framework helpers
 * app(), dispatch(), ...) is loaded too; laravel_has_foundation() tells whether it was.
 */
declare(strict_types=1);

require_once __DIR__ . '/bootstrap.php';
require_once 'Illuminate/Support/autoload.php';
require_once 'Illuminate/Database/autoload.php';
require_once 'Illuminate/Encryption/autoload.php';
require_once 'Illuminate/Notifications/autoload.php';
require_once 'Illuminate/Mail/autoload.php';
if (stream_resolve_include_path('Illuminate/autoload.php') !== false) {
    require_once 'Illuminate/autoload.php';
}
require_once __DIR__ . '/laravel-app-classes.php';

use Illuminate\Container\Container;
use Illuminate\Database\Capsule\Manager as DB;
use Illuminate\Queue\Capsule\Manager as Queue;

/** True when Illuminate\Foundation (Debian's php-laravel-framework) can be loaded. */
function laravel_has_foundation(): bool
{
    return trait_exists(\Illuminate\Foundation\Bus\Dispatchable::class);
}

/**
 * The Laravel version of Debian's packages, from dpkg ("8.83.26+dfsg-2" -> "8.83.26"); checked
 * against Illuminate\Foundation\Application::VERSION when Foundation is installed.
 */
function laravel_version(): string
{
    $raw = trim((string) shell_exec("dpkg-query -W -f='\${Version}' php-illuminate-queue 2>/dev/null"));
    if (!preg_match('/^(\d+\.\d+\.\d+)/', $raw, $m)) {
        throw new RuntimeException("cannot read php-illuminate-queue's version from dpkg (got '$raw')");
    }
    if (class_exists(\Illuminate\Foundation\Application::class) && \Illuminate\Foundation\Application::VERSION !== $m[1]) {
        throw new RuntimeException('dpkg says ' . $m[1] . ', Illuminate\Foundation\Application::VERSION says ' . \Illuminate\Foundation\Application::VERSION);
    }
    return $m[1];
}

/**
 * Boots the app. Returns ['container', 'queue' (Capsule), 'db' (Capsule)].
 * The Redis key prefix comes from REDIS_PREFIX (as in bootstrap.php).
 */
function laravel_app(): array
{
    $queue = laravel_queue();
    $container = $queue->getContainer();

    // What Application::registerCoreContainerAliases() does for these services.
    $container->instance('queue', $queue->getQueueManager());
    foreach ([\Illuminate\Queue\QueueManager::class, \Illuminate\Contracts\Queue\Factory::class, \Illuminate\Contracts\Queue\Monitor::class] as $alias) {
        $container->alias('queue', $alias);
    }
    (new \Illuminate\Events\EventServiceProvider($container))->register();
    foreach ([\Illuminate\Events\Dispatcher::class, \Illuminate\Contracts\Events\Dispatcher::class] as $alias) {
        $container->alias('events', $alias);
    }
    (new \Illuminate\Bus\BusServiceProvider($container))->register();
    (new \Illuminate\Notifications\NotificationServiceProvider($container))->register();

    $db = new DB($container);
    $db->addConnection(['driver' => 'sqlite', 'database' => ':memory:', 'prefix' => '', 'foreign_key_constraints' => true], 'sqlite');
    $container['config']['database.default'] = 'sqlite';
    $db->setEventDispatcher($container['events']);
    $db->setAsGlobal();
    $db->bootEloquent();
    $container->instance('db', $db->getDatabaseManager());

    return ['container' => $container, 'queue' => $queue, 'db' => $db];
}

/**
 * Sets config app.key / app.cipher and (re)registers Laravel's EncryptionServiceProvider, as an
 * app with that APP_KEY would: binds `encrypter` (aliased to the Encrypter contract, which is
 * what the queue checks before encrypting ShouldBeEncrypted jobs) and sets the secret key
 * Laravel\SerializableClosure signs closures with.
 */
function laravel_use_app_key(Container $container, string $appKey, string $cipher): void
{
    $container['config']['app'] = ['key' => $appKey, 'cipher' => $cipher];
    (new \Illuminate\Encryption\EncryptionServiceProvider($container))->register();
    foreach ([\Illuminate\Encryption\Encrypter::class, \Illuminate\Contracts\Encryption\Encrypter::class, \Illuminate\Contracts\Encryption\StringEncrypter::class] as $alias) {
        $container->alias('encrypter', $alias);
    }
    $container->forgetInstance('encrypter');
}

/** Creates the tables of laravel-app-classes.php's models. */
function laravel_migrate(DB $db): void
{
    $schema = $db->schema();
    $schema->create('users', function ($t) {
        $t->increments('id');
        $t->string('name');
        $t->string('email');
    });
    $schema->create('posts', function ($t) {
        $t->increments('id');
        $t->unsignedInteger('user_id');
        $t->string('title');
    });
    $schema->create('comments', function ($t) {
        $t->increments('id');
        $t->unsignedInteger('post_id');
        $t->string('body');
    });
    $schema->create('orders', function ($t) {
        $t->string('id')->primary();
        $t->unsignedInteger('user_id');
        $t->string('status');
        $t->unsignedInteger('total_cents');
    });
}
