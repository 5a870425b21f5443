<?php
/**
 * Laravel's own Encrypter (Debian's 8.83), for the cross-language encryption tests.
 *   php encrypter.php encrypt APP_KEY CIPHER   base64 lines in → Encrypter::encrypt(bytes) lines out
 *   php encrypter.php decrypt APP_KEY CIPHER   payload lines in → base64 of Encrypter::decrypt(payload), or "ERROR <message>"
 * encrypt() serializes what it is given and decrypt() unserializes, as Laravel's defaults do.
 */
declare(strict_types=1);

require_once 'Illuminate/Encryption/autoload.php';

use Illuminate\Encryption\Encrypter;

[$self, $mode, $appKey, $cipher] = $argv;
$key = str_starts_with($appKey, 'base64:') ? base64_decode(substr($appKey, 7)) : $appKey;
$encrypter = new Encrypter($key, $cipher);

while (($line = fgets(STDIN)) !== false) {
    $line = trim($line);
    if ($mode === 'encrypt') {
        echo $encrypter->encrypt(base64_decode($line)), "\n";
        continue;
    }
    try {
        echo base64_encode($encrypter->decrypt($line)), "\n";
    } catch (Throwable $e) {
        echo 'ERROR ', get_class($e), ': ', $e->getMessage(), "\n";
    }
}
