<?php
/**
 * Reads base64 lines of serialized values on standard input; for each, writes one line:
 * base64 of serialize(unserialize(bytes)), or "ERROR <message>" when PHP refuses the input.
 * Classes that do not exist come back as __PHP_Incomplete_Class, which PHP writes back under
 * the original name, so any object shape survives. The enum and Serializable class below are
 * the ones the property tests generate.
 */
declare(strict_types=1);

namespace Lqb\Test {
    enum Suit: string { case Hearts = 'H'; case Spades = 'S'; }
    enum Flag { case On; case Off; }
}

namespace {
    while (($line = fgets(STDIN)) !== false) {
        $bytes = base64_decode(trim($line), true);
        $value = @unserialize($bytes);
        if ($value === false && $bytes !== 'b:0;') {
            echo 'ERROR ', error_get_last()['message'] ?? 'unserialize failed', "\n";
            continue;
        }
        echo base64_encode(serialize($value)), "\n";
    }
}
