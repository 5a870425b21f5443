<?php
/**
 * `lqb shapes`' PHP half: loads a Laravel application's classes and prints their shapes (the JSON
 * of src/shapes/shape.ts's ShapesFile) on standard output, as PHP's own reflection reads them.
 *
 *   php reflect.php --app=DIR [--class=A,B]         DIR/vendor/autoload.php, the classes under DIR/app/
 *   php reflect.php --bootstrap=FILE [--class=A,B]  FILE required, every ShouldQueue class it declares
 *
 * Needs PHP 8.0+ (as Laravel 8 on PHP 8, and every Laravel since). On failure: one line on standard error, exit status 1 (2 for bad arguments). A PHP fatal error
 * while loading the app names the file and PHP's message.
 *
 * What is kept: jobs (ShouldQueue), queued listeners (ShouldQueue, not Dispatchable, with a public
 * handle…/__invoke method whose first parameter is a class: the event), queued notifications
 * (extend Notification) and mailables (extend Mailable); then what those reference: the events a
 * listener handles (`event`), Eloquent models named by property types (`model`), and the app's
 * own classes named by property types (`class`), recursively. A class that cannot be loaded (its
 * parent, interface or trait is not installed) is listed under `unreadable` with PHP's reason.
 */
declare(strict_types=1);

ini_set('display_errors', '0');
// The translation of uniqueId(), backoff(), retryUntil(), tags() and displayName() (lqbExpressions).
require __DIR__ . '/methods.php';
ini_set('log_errors', '0');
error_reporting(E_ALL);

const SHOULD_QUEUE = 'Illuminate\Contracts\Queue\ShouldQueue';
const SERIALIZES_MODELS = 'Illuminate\Queue\SerializesModels';
const DISPATCHABLE = 'Illuminate\Foundation\Bus\Dispatchable';
const NOTIFICATION = 'Illuminate\Notifications\Notification';
const MAILABLE = 'Illuminate\Mail\Mailable';
const MODEL = 'Illuminate\Database\Eloquent\Model';
const ELOQUENT_COLLECTION = 'Illuminate\Database\Eloquent\Collection';
const DECLARED = ['tries', 'timeout', 'backoff', 'maxExceptions', 'failOnTimeout', 'uniqueFor', 'uniqueId', 'deleteWhenMissingModels', 'connection', 'queue'];
const METHODS = ['backoff', 'retryUntil', 'uniqueId', 'uniqueVia', 'middleware', 'failed', 'tags', 'displayName'];

/** The file being loaded, so a fatal error can name it even when PHP blames another. */
$GLOBALS['lqbLoading'] = null;

function fail(string $message, int $status = 1): void
{
    fwrite(STDERR, str_replace(["\r", "\n"], ' ', $message) . "\n");
    exit($status);
}

register_shutdown_function(function (): void {
    $error = error_get_last();
    if ($error === null || !($error['type'] & (E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR))) {
        return;
    }
    $loading = $GLOBALS['lqbLoading'];
    $where = $error['file'] . ':' . $error['line'];
    $prefix = $loading !== null && $loading !== $error['file'] ? "PHP fatal error loading {$loading} ({$where})" : "PHP fatal error in {$where}";
    fwrite(STDERR, str_replace(["\r", "\n"], ' ', "{$prefix}: {$error['message']}") . "\n");
    // PHP's own exit status after a fatal error is 255: say 1, as every other failure.
    exit(1);
});

/** Runs $load with $file named as the one loading; a thrown error (ParseError, …) names it. */
function loading(string $file, callable $load): mixed
{
    $GLOBALS['lqbLoading'] = $file;
    try {
        return $load();
    } catch (Throwable $e) {
        fail("PHP error loading " . thrownWhere($e, $file) . ': ' . get_class($e) . ': ' . $e->getMessage());
    } finally {
        $GLOBALS['lqbLoading'] = null;
    }
}

function thrownWhere(Throwable $e, string $file): string
{
    return $e->getFile() === $file ? "{$file}:{$e->getLine()}" : "{$file} ({$e->getFile()}:{$e->getLine()})";
}

/** PHP's message and where it was thrown: `Class "Illuminate\Mail\Mailable" not found (…/Mail/Ready.php:10)`. */
function thrownReason(Throwable $e): string
{
    return "{$e->getMessage()} ({$e->getFile()}:{$e->getLine()})";
}

/**
 * The classes that could not be read, each with why: an app that runs illuminate/queue without
 * illuminate/notifications or illuminate/mail (Capsule, Lumen) may still hold a class extending
 * Notification or Mailable. Named in the shapes file (`unreadable`); the rest is read.
 */
$GLOBALS['lqbUnreadable'] = [];

function unreadable(string $class, string $reason): void
{
    if (!isset($GLOBALS['lqbUnreadable'][$class])) {
        $GLOBALS['lqbUnreadable'][$class] = str_replace(["\r", "\n"], ' ', $reason);
    }
}

/**
 * Loads $class from $file as loading() does, but a class that cannot be loaded for a reason other
 * than its own syntax (a parent, interface or trait that is not installed) is named as unreadable.
 */
function loadingClass(string $class, string $file, callable $load): mixed
{
    $GLOBALS['lqbLoading'] = $file;
    try {
        return $load();
    } catch (ParseError $e) {
        fail("PHP error loading " . thrownWhere($e, $file) . ': ' . get_class($e) . ': ' . $e->getMessage());
    } catch (Throwable $e) {
        unreadable($class, thrownReason($e));
        return false;
    } finally {
        $GLOBALS['lqbLoading'] = null;
    }
}

// --- arguments --------------------------------------------------------------------------------

$options = ['app' => null, 'bootstrap' => null, 'class' => null];
foreach (array_slice($argv, 1) as $arg) {
    if (!preg_match('/^--(app|bootstrap|class)=(.*)$/s', $arg, $m)) {
        fail("unknown argument {$arg}", 2);
    }
    $options[$m[1]] = $m[2];
}
if (($options['app'] === null) === ($options['bootstrap'] === null)) {
    fail('give one of --app=DIR or --bootstrap=FILE.php', 2);
}
$only = $options['class'] === null ? null : array_values(array_filter(array_map(fn ($c) => ltrim(trim($c), '\\'), explode(',', $options['class'])), 'strlen'));

// --- loading the app --------------------------------------------------------------------------

$candidates = [];
$laravel = null;
if ($options['app'] !== null) {
    $app = rtrim($options['app'], '/');
    if (!is_dir($app)) {
        fail("--app={$options['app']}: no such directory");
    }
    $autoload = "{$app}/vendor/autoload.php";
    if (!is_file($autoload)) {
        fail("--app={$options['app']}: no vendor/autoload.php in it (run composer install there)");
    }
    loading($autoload, fn () => require $autoload);
    $laravel = installedLaravel("{$app}/vendor/composer/installed.json");
    $appDir = "{$app}/app";
    if (is_dir($appDir)) {
        $files = [];
        foreach (new RecursiveIteratorIterator(new RecursiveDirectoryIterator($appDir, FilesystemIterator::SKIP_DOTS)) as $file) {
            if ($file->isFile() && str_ends_with($file->getFilename(), '.php')) {
                $files[] = $file->getPathname();
            }
        }
        sort($files);
        foreach ($files as $file) {
            foreach (classesIn($file) as $class) {
                // The autoloader first (PSR-4 App\ => app/); the file itself when it maps elsewhere.
                $found = loadingClass($class, $file, fn () => class_exists($class) || interface_exists($class, false) || trait_exists($class, false));
                if (!$found && !isset($GLOBALS['lqbUnreadable'][$class])) {
                    loadingClass($class, $file, function () use ($file) {
                        require_once $file;
                    });
                }
                if (class_exists($class, false)) {
                    $candidates[] = $class;
                }
            }
        }
    }
} else {
    $bootstrap = $options['bootstrap'];
    if (!is_file($bootstrap)) {
        fail("--bootstrap={$bootstrap}: no such file");
    }
    $before = array_flip(get_declared_classes());
    loading(realpath($bootstrap), fn () => require realpath($bootstrap));
    foreach (get_declared_classes() as $class) {
        // Every ShouldQueue class it declares or autoloads, the framework's own aside.
        if (!isset($before[$class]) && !str_starts_with($class, 'Illuminate\\')) {
            $candidates[] = $class;
        }
    }
}
if ($laravel === null && class_exists('Illuminate\Foundation\Application')) {
    $laravel = Illuminate\Foundation\Application::VERSION;
}

/** laravel/framework's version from Composer's installed.json (Composer 1: a list; 2: {packages}). */
function installedLaravel(string $file): ?string
{
    if (!is_file($file)) {
        return null;
    }
    $installed = json_decode((string) file_get_contents($file), true);
    $packages = is_array($installed) ? ($installed['packages'] ?? $installed) : [];
    foreach ($packages as $package) {
        if (is_array($package) && ($package['name'] ?? null) === 'laravel/framework' && is_string($package['version'] ?? null)) {
            return ltrim($package['version'], 'v');
        }
    }
    return null;
}

/** The classes a PHP file declares, named by its namespace and class tokens. */
function classesIn(string $file): array
{
    $tokens = PhpToken::tokenize((string) file_get_contents($file));
    $namespace = '';
    $classes = [];
    $count = count($tokens);
    for ($i = 0; $i < $count; $i++) {
        $token = $tokens[$i];
        if ($token->is(T_NAMESPACE)) {
            $namespace = '';
            for ($i++; $i < $count && !$tokens[$i]->is([';', '{']); $i++) {
                if ($tokens[$i]->is([T_NAME_QUALIFIED, T_STRING])) {
                    $namespace .= $tokens[$i]->text;
                }
            }
        } elseif ($token->is([T_CLASS, T_INTERFACE, T_TRAIT]) || (defined('T_ENUM') && $token->is(T_ENUM))) {
            // Not `Foo::class`, not `new class`.
            $before = $i - 1;
            while ($before >= 0 && $tokens[$before]->isIgnorable()) {
                $before--;
            }
            if ($before >= 0 && $tokens[$before]->is([T_DOUBLE_COLON, T_NEW])) {
                continue;
            }
            $next = $i + 1;
            while ($next < $count && $tokens[$next]->isIgnorable()) {
                $next++;
            }
            if ($next < $count && $tokens[$next]->is(T_STRING)) {
                $classes[] = ltrim($namespace . '\\' . $tokens[$next]->text, '\\');
            }
        }
    }
    return $classes;
}

// --- what each class is -----------------------------------------------------------------------

/** Every trait a class uses: its own, its parents', and their traits' traits. */
function allTraits(ReflectionClass $class): array
{
    $traits = [];
    for ($c = $class; $c !== false; $c = $c->getParentClass()) {
        $queue = $c->getTraitNames();
        while ($queue) {
            $trait = array_shift($queue);
            if (!in_array($trait, $traits, true)) {
                $traits[] = $trait;
                $queue = array_merge($queue, (new ReflectionClass($trait))->getTraitNames());
            }
        }
    }
    return $traits;
}

/** The methods that handle an event: public handle, handle… or __invoke, first parameter a class. */
function handlers(ReflectionClass $class): array
{
    $handles = [];
    foreach ($class->getMethods(ReflectionMethod::IS_PUBLIC) as $method) {
        $name = $method->getName();
        if ($method->isStatic() || !($name === '__invoke' || str_starts_with($name, 'handle'))) {
            continue;
        }
        $first = $method->getParameters()[0] ?? null;
        $type = $first?->getType();
        $event = $type instanceof ReflectionNamedType && !$type->isBuiltin() ? ltrim($type->getName(), '\\') : null;
        $handles[] = ['method' => $name, 'event' => $event];
    }
    return $handles;
}

function kindOf(ReflectionClass $class): ?string
{
    if (!$class->isInstantiable() && !$class->isAbstract()) {
        return null;
    }
    if ($class->isAbstract() || $class->isInterface() || $class->isTrait() || !isA($class->getName(), SHOULD_QUEUE)) {
        return null;
    }
    // isA, not isSubclassOf: that throws when the app has no illuminate/notifications or /mail.
    if (isA($class->getName(), NOTIFICATION)) {
        return 'notification';
    }
    if (isA($class->getName(), MAILABLE)) {
        return 'mailable';
    }
    if (!in_array(DISPATCHABLE, allTraits($class), true)) {
        foreach (handlers($class) as $handle) {
            if ($handle['event'] !== null) {
                return 'listener';
            }
        }
    }
    return 'job';
}

/** Class names a type names (a union's members too), builtins aside. */
function typeClasses(?ReflectionType $type): array
{
    if ($type === null) {
        return [];
    }
    if ($type instanceof ReflectionNamedType) {
        return $type->isBuiltin() || in_array($type->getName(), ['self', 'static', 'parent'], true) ? [] : [ltrim($type->getName(), '\\')];
    }
    $names = [];
    foreach ($type->getTypes() as $member) {
        $names = array_merge($names, typeClasses($member));
    }
    return $names;
}

function isA(string $class, string $parent): bool
{
    return (class_exists($class) || interface_exists($class)) && ($class === $parent || is_subclass_of($class, $parent));
}

function modelConnection(string $model): ?string
{
    $class = new ReflectionClass($model);
    if (!$class->hasProperty('connection')) {
        return null;
    }
    $default = $class->getProperty('connection')->getDefaultValue();
    return is_string($default) ? $default : null;
}

/** serialize() of a value, refused when it is not UTF-8 (JSON cannot carry it). */
function serialized(mixed $value, string $what): string
{
    $text = serialize($value);
    // preg's /u rather than mbstring, which not every PHP has.
    if (preg_match('//u', $text) !== 1) {
        fail("{$what}: its default holds bytes that are not UTF-8, which a shapes file (JSON) cannot carry");
    }
    return $text;
}

/**
 * The properties in the order serialize() writes them. Under SerializesModels (8.x) that is its
 * __serialize's: reflection's getProperties() order, which never lists a parent's private
 * property (listed last here, `serialized: false`). Natively it is the object's property table:
 * the root ancestor's slots first, each class adding its own (traits' after its declared ones),
 * a redeclared property keeping its parent's slot.
 */
function properties(ReflectionClass $class, bool $serializesModels): array
{
    $shape = function (ReflectionProperty $p, bool $serialized) use ($class): array {
        $type = $p->getType();
        $entry = [
            'name' => $p->getName(),
            'visibility' => $p->isPrivate() ? 'private' : ($p->isProtected() ? 'protected' : 'public'),
            'class' => $p->getDeclaringClass()->getName(),
            'type' => $type === null ? null : (string) $type,
            'nullable' => $type === null || $type->allowsNull(),
            'serialized' => $serialized,
        ];
        if ($p->isPromoted()) {
            $entry['promoted'] = true;
        }
        if ($p->hasDefaultValue() && !$p->isPromoted()) {
            $entry['default'] = serialized($p->getDefaultValue(), "{$class->getName()}::\${$p->getName()}");
        }
        foreach (typeClasses($type) as $named) {
            if (isA($named, MODEL) && !isset($entry['model'])) {
                $entry['model'] = ['class' => $named, 'connection' => (new ReflectionClass($named))->isInstantiable() ? modelConnection($named) : null];
            } elseif (isA($named, ELOQUENT_COLLECTION) && !isset($entry['collection'])) {
                $entry['collection'] = $named;
            }
        }
        return $entry;
    };
    $nonStatic = fn (ReflectionClass $c) => array_values(array_filter($c->getProperties(), fn (ReflectionProperty $p) => !$p->isStatic()));
    if ($serializesModels) {
        $list = array_map(fn ($p) => $shape($p, true), $nonStatic($class));
        for ($parent = $class->getParentClass(); $parent !== false; $parent = $parent->getParentClass()) {
            foreach ($nonStatic($parent) as $p) {
                if ($p->isPrivate() && $p->getDeclaringClass()->getName() === $parent->getName()) {
                    $list[] = $shape($p, false);
                }
            }
        }
        return $list;
    }
    $chain = [];
    for ($c = $class; $c !== false; $c = $c->getParentClass()) {
        array_unshift($chain, $c);
    }
    $slots = [];
    foreach ($chain as $c) {
        foreach ($nonStatic($c) as $p) {
            if ($p->getDeclaringClass()->getName() !== $c->getName()) {
                continue;
            }
            // A public or protected name already in a parent's slot keeps that slot.
            $key = $p->isPrivate() ? "\0{$c->getName()}\0{$p->getName()}" : $p->getName();
            $slots[$key] = $p;
        }
    }
    return array_values(array_map(fn ($p) => $shape($p, true), $slots));
}

/** A method the class defines itself (or inherits from a class or trait that is not Laravel's). */
function ownMethod(ReflectionClass $class, string $name): bool
{
    if (!$class->hasMethod($name)) {
        return false;
    }
    $method = $class->getMethod($name);
    $declaring = $method->getDeclaringClass();
    if (str_starts_with($declaring->getName(), 'Illuminate\\')) {
        return false;
    }
    if ($method->getFileName() !== $declaring->getFileName()) {
        // From a trait: Laravel's own traits do not count.
        foreach (allTraits($declaring) as $trait) {
            $t = new ReflectionClass($trait);
            if ($t->getFileName() === $method->getFileName()) {
                return !str_starts_with($trait, 'Illuminate\\');
            }
        }
    }
    return true;
}

function shape(ReflectionClass $class, string $kind): array
{
    $traits = allTraits($class);
    $serializesModels = in_array(SERIALIZES_MODELS, $traits, true) && $class->hasMethod('__serialize');
    $properties = properties($class, $serializesModels);
    $declared = [];
    // Only non-null defaults: Queueable's `connection` and `queue` are null until a class sets them.
    foreach (DECLARED as $name) {
        if ($class->hasProperty($name)) {
            $p = $class->getProperty($name);
            if (!$p->isStatic() && $p->hasDefaultValue() && $p->getDefaultValue() !== null) {
                $declared[$name] = $p->getDefaultValue();
            }
        }
    }
    $shape = [
        'name' => $class->getName(),
        'kind' => $kind,
        'parent' => $class->getParentClass() === false ? null : $class->getParentClass()->getName(),
        'interfaces' => $class->getInterfaceNames(),
        'traits' => $traits,
        'serializer' => $serializesModels ? 'SerializesModels' : 'native',
        'properties' => $properties,
        'declared' => (object) $declared,
        'methods' => array_values(array_filter(METHODS, fn ($m) => ownMethod($class, $m))),
    ];
    $expressions = lqbExpressions($class, 'ownMethod');
    if ($expressions !== []) {
        $shape['expressions'] = $expressions;
    }
    $constructor = $class->getConstructor();
    if ($constructor !== null && $kind !== 'model') {
        // The constructor's parameters: one without a default that sets a typed property makes
        // that property required of a producer; a default fills its property.
        $shape['constructorParams'] = array_map(function (ReflectionParameter $p) use ($class) {
            $entry = ['name' => $p->getName()];
            if ($p->isDefaultValueAvailable() && !$p->isDefaultValueConstant()) {
                $entry['default'] = serialized($p->getDefaultValue(), $class->getName() . '::__construct($' . $p->getName() . ')');
            }
            return $entry;
        }, $constructor->getParameters());
    }
    if ($kind === 'model') {
        $shape['connection'] = $class->isInstantiable() ? modelConnection($class->getName()) : null;
    }
    if ($kind === 'listener') {
        $shape['handles'] = array_values(array_filter(handlers($class), fn ($h) => $h['event'] !== null));
    }
    return $shape;
}

// --- the set of classes -------------------------------------------------------------------------

if ($only !== null) {
    // Of the app's files that could not be loaded, only the classes asked for count.
    $GLOBALS['lqbUnreadable'] = array_intersect_key($GLOBALS['lqbUnreadable'], array_flip($only));
    foreach ($only as $name) {
        if (!classLoads($name) && !isset($GLOBALS['lqbUnreadable'][$name])) {
            fail("--class: no class {$name} in the app");
        }
    }
    $candidates = array_values(array_filter($only, fn ($name) => !isset($GLOBALS['lqbUnreadable'][$name])));
}

/** class_exists(), but a class whose file throws (a parent not installed) is named as unreadable. */
function classLoads(string $name): bool
{
    try {
        return class_exists($name);
    } catch (ParseError $e) {
        fail("PHP error loading {$e->getFile()}:{$e->getLine()}: ParseError: {$e->getMessage()}");
    } catch (Throwable $e) {
        unreadable($name, thrownReason($e));
        return false;
    }
}

$shapes = [];
$pending = [];
foreach (array_unique($candidates) as $name) {
    $class = new ReflectionClass($name);
    $kind = kindOf($class);
    if ($kind !== null) {
        $pending[] = [$class, $kind];
    } elseif ($only !== null) {
        // Named on purpose: kept as what it is (an event, a model, a class).
        $pending[] = [$class, isA($name, MODEL) ? 'model' : 'class'];
    }
}
while ($pending) {
    [$class, $kind] = array_shift($pending);
    $name = $class->getName();
    if (isset($shapes[$name])) {
        continue;
    }
    try {
        $shape = $shapes[$name] = shape($class, $kind);
    } catch (Throwable $e) {
        // A default or a trait naming what is not installed: this class only.
        unreadable($name, thrownReason($e));
        continue;
    }
    // What it references: a listener's events, the models and app classes its properties name.
    foreach ($shape['handles'] ?? [] as $handle) {
        if ($handle['event'] !== null && classLoads($handle['event'])) {
            $pending[] = [new ReflectionClass($handle['event']), 'event'];
        }
    }
    if ($kind === 'model') {
        continue;
    }
    foreach ($class->getProperties() as $p) {
        foreach (typeClasses($p->getType()) as $named) {
            if (!classLoads($named)) {
                continue;
            }
            $ref = new ReflectionClass($named);
            if (isA($named, MODEL)) {
                $pending[] = [$ref, 'model'];
            } elseif (!$ref->isInternal() && !$ref->implementsInterface(DateTimeInterface::class) && !isA($named, ELOQUENT_COLLECTION)
                && !str_starts_with($named, 'Illuminate\\') && !str_starts_with($named, 'Carbon\\')) {
                $pending[] = [$ref, 'class'];
            }
        }
    }
}
ksort($shapes, SORT_STRING);

$file = ['version' => 1, 'laravel' => $laravel, 'php' => PHP_VERSION, 'classes' => (object) $shapes];
if ($GLOBALS['lqbUnreadable']) {
    ksort($GLOBALS['lqbUnreadable'], SORT_STRING);
    $file['unreadable'] = array_map(fn ($class, $reason) => ['class' => $class, 'reason' => $reason], array_keys($GLOBALS['lqbUnreadable']), $GLOBALS['lqbUnreadable']);
}
$json = json_encode(
    $file,
    JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR,
);
echo $json, "\n";
