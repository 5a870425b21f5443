<?php
/**
 * Reads base64 lines of serialized values; for each, unserializes it with PHP 8.2 and writes
 * one JSON line: {"class": get_class, "props": {name: value}} from get_object_vars-like access
 * to every property (visibility stripped, as PHP sees the object), or {"error": message}.
 * Classes that do not exist become __PHP_Incomplete_Class; its original name is reported.
 */
declare(strict_types=1);

function plain(mixed $value): mixed
{
    if ($value instanceof __PHP_Incomplete_Class) {
        $props = [];
        foreach ((array) $value as $key => $item) {
            if ($key === '__PHP_Incomplete_Class_Name') continue;
            $name = is_string($key) && str_contains($key, "\0") ? substr($key, strrpos($key, "\0") + 1) : (string) $key;
            $props[$name] = plain($item);
        }
        return ['@class' => ((array) $value)['__PHP_Incomplete_Class_Name'], 'props' => (object) $props];
    }
    if (is_object($value)) {
        $props = [];
        foreach ((array) $value as $key => $item) {
            $name = is_string($key) && str_contains($key, "\0") ? substr($key, strrpos($key, "\0") + 1) : (string) $key;
            $props[$name] = plain($item);
        }
        return ['@class' => get_class($value), 'props' => (object) $props];
    }
    if (is_array($value)) return array_map('plain', $value);
    if (is_float($value)) return ['@float' => is_finite($value) ? $value : (string) $value];
    return $value;
}

while (($line = fgets(STDIN)) !== false) {
    $value = @unserialize(base64_decode(trim($line), true));
    if ($value === false) {
        echo json_encode(['error' => error_get_last()['message'] ?? 'unserialize failed']), "\n";
        continue;
    }
    echo json_encode(plain($value), JSON_PRESERVE_ZERO_FRACTION | JSON_INVALID_UTF8_SUBSTITUTE), "\n";
}
