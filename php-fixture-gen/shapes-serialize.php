<?php
/**
 * What PHP itself writes for one of shapes-app's jobs: `serialize(new CLASS(...ARGS))`, after
 * setting properties the constructor does not (by reflection, as the job's own code would).
 *
 *   php shapes-serialize.php '{"class":"App\\Jobs\\ShipOrder","args":[7,"s3"],"set":{"weight":2.0}}'
 *
 * An argument or value {"@model":"App\\Models\\User","id":5} is that model, loaded (exists) with
 * that key; {"@collection":"App\\Models\\User","ids":[1,2]} an Eloquent collection of them.
 * Prints {"serialized": "<serialize() output>"} on one line.
 */
declare(strict_types=1);

require __DIR__ . '/shapes-app/vendor/autoload.php';

/** A JSON value with its model markers made into models. */
function shapes_value(mixed $value): mixed
{
    if (is_array($value) && isset($value['@model'])) {
        $model = new $value['@model']();
        $model->setAttribute($model->getKeyName(), $value['id']);
        $model->exists = true;
        return $model;
    }
    if (is_array($value) && isset($value['@collection'])) {
        return new \Illuminate\Database\Eloquent\Collection(array_map(fn ($id) => shapes_value(['@model' => $value['@collection'], 'id' => $id]), $value['ids']));
    }
    return $value;
}

$spec = json_decode($argv[1] ?? '', true, 512, JSON_THROW_ON_ERROR);
$class = $spec['class'];
$job = new $class(...array_map('shapes_value', $spec['args'] ?? []));
foreach ($spec['set'] ?? [] as $name => $value) {
    for ($owner = new ReflectionClass($job); $owner && !$owner->hasProperty($name); $owner = $owner->getParentClass());
    $property = ($owner ?: new ReflectionClass($job))->getProperty($name);
    $property->setAccessible(true);
    $property->setValue($job, shapes_value($value));
}
echo json_encode(['serialized' => serialize($job)], JSON_THROW_ON_ERROR), "\n";
