<?php
/**
 * Reads JSON lines whose values are base64 strings; for each, writes PHP's json_encode of the
 * decoded string with default flags and with JSON_UNESCAPED_UNICODE, tab-separated, or
 * "ERROR" when PHP refuses (invalid UTF-8).
 */
declare(strict_types=1);

while (($line = fgets(STDIN)) !== false) {
    $text = base64_decode(trim($line), true);
    $plain = json_encode($text);
    $unicode = json_encode($text, JSON_UNESCAPED_UNICODE);
    echo $plain === false || $unicode === false ? 'ERROR' : $plain . "\t" . $unicode, "\n";
}
