<?php
/**
 * How laravel/serializable-closure (Debian's, as Laravel 8.83 uses it) serializes a closure
 * that does nothing, signed with a key as EncryptionServiceProvider signs with the APP_KEY.
 *
 *   php closure-serialize.php APP_KEY
 *
 * Prints {"closure": serialize(new SerializableClosure(function () {})), "self": the object
 * hash it wrote}, and checks the way back: the bytes unserialize to a closure under the key.
 */
declare(strict_types=1);

require_once 'Illuminate/autoload.php';

use Laravel\SerializableClosure\SerializableClosure;

$key = $argv[1] ?? '';
SerializableClosure::setSecretKey(str_starts_with($key, 'base64:') ? base64_decode(substr($key, 7)) : $key);
$closure = serialize(new SerializableClosure(function () {}));
preg_match('/s:4:"self";s:32:"([0-9a-f]{32})"/', $closure, $self);
$back = unserialize($closure)->getClosure();
if (!$back instanceof Closure) {
    fwrite(STDERR, "the closure did not come back\n");
    exit(1);
}
echo json_encode(['closure' => $closure, 'self' => $self[1] ?? null], JSON_UNESCAPED_SLASHES), "\n";
