<?php
/**
 * A job with a property of each declared type, for the table of JSON values against declared
 * types (test/shapes/command.test.ts): `lqb shapes --bootstrap` reads it, Node dispatches into
 * it, and PHP unserializes the command to say what each property holds.
 *
 *   php typed-props.php            (as a --bootstrap file: declares the classes)
 *   php typed-props.php --read     standard input: lines of {"command": serialized, "property": name};
 *                                  standard output: one line each, `TYPE JSON` of the property as
 *                                  PHP holds it after unserialize(), or `ERROR message`
 */
declare(strict_types=1);

namespace App\Jobs;

require_once 'Illuminate/Contracts/autoload.php';

class TypedOptions
{
    public int $level = 0;
    public ?string $label = null;
}

class TakesEveryType implements \Illuminate\Contracts\Queue\ShouldQueue
{
    public int $int;
    public float $float;
    public string $string;
    public bool $bool;
    public array $array;
    public ?int $nullableInt;
    public ?float $nullableFloat;
    public mixed $mixed;
    public $untyped;
    public int|float $intOrFloat;
    public int|string $intOrString;
    public object $object;
    public TypedOptions $options;

    /** Nothing is required: each row of the table sets one property. */
    public function __construct()
    {
    }
}

if (PHP_SAPI === 'cli' && realpath($argv[0] ?? '') === __FILE__ && ($argv[1] ?? null) === '--read') {
    while (($line = fgets(STDIN)) !== false) {
        $ask = json_decode($line, true);
        try {
            $job = unserialize($ask['command'], ['allowed_classes' => [TakesEveryType::class, TypedOptions::class, \stdClass::class]]);
            $property = $ask['property'];
            $value = (new \ReflectionProperty($job, $property))->isInitialized($job) ? $job->{$property} : 'uninitialized';
            echo get_debug_type($value), ' ', json_encode($value, JSON_PRESERVE_ZERO_FRACTION | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
        } catch (\Throwable $e) {
            echo 'ERROR ', str_replace("\n", ' ', get_class($e) . ': ' . $e->getMessage()), "\n";
        }
    }
}
