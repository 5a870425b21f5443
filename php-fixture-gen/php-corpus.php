<?php
/**
 * php-corpus.php — writes a deterministic corpus of PHP serialize() outputs.
 *
 *   php php-fixture-gen/php-corpus.php [outdir]      (outdir defaults to fixtures/php)
 *
 * Output: <outdir>/corpus.jsonl, one JSON object per line:
 *   {"name": "<category>/<n>", "b64": base64(serialize($value)), "describe": <tree>}
 *
 * "describe" is PHP's own account of the value (see describe() below for the
 * tagged format). It is produced by walking the live PHP value, and every entry
 * is cross-checked against an independent parse of the serialized bytes
 * (describe_serialized()), so a wrong description aborts the run instead of
 * producing a bad fixture.
 *
 * Determinism: all randomness comes from mt_rand() after mt_srand(SEED);
 * nothing time- or address-dependent reaches the output (spl_object_id() is only
 * used internally, for cycle detection).
 */

declare(strict_types=1);

// Every class, interface and enum the corpus values are made of; Laravel's are the
// real ones, from Debian's packages (corpus-classes.php requires their autoloaders).
require_once __DIR__ . '/corpus-classes.php';

use App\Enums\Priority;
use App\Enums\Status;

const SEED = 20240521;
const TARGET_ENTRIES = 6000;
const JSON_FLAGS = JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR;

// Deprecations are filtered: the Serializable-only classes in corpus-classes.php are
// deprecated by design (that file masks the notice while it links them), and PHP 8.2
// may flag things in Laravel 8.83, which predates it. Every other warning/notice aborts
// the run, except the two __sleep diagnostics that some fixtures trigger on purpose.
error_reporting(E_ALL & ~E_DEPRECATED);
set_error_handler(static function (int $no, string $msg, string $file = '', int $line = 0): bool {
    if (!(error_reporting() & $no)) {
        return false;
    }
    if (str_contains($msg, 'returned as member variable from __sleep() but does not exist')
        || str_contains($msg, 'is returned from __sleep() multiple times')) {
        return true;
    }
    throw new ErrorException($msg, 0, $no, $file, $line);
});

/** Classes whose C: payload is a nested serialize() stream sharing the outer slot numbers. */
const NESTED_PAYLOAD_CLASSES = ['LegacyWrapper'];

// ===========================================================================
// describe(): walks a live PHP value the way serialize() does
// ===========================================================================

/**
 * Tagged JSON tree for $v:
 *   null / true / false           as is
 *   {"int": "<decimal>"}           ints as strings (64-bit safe)
 *   {"float": <number>|"INF"|"-INF"|"NAN"|"-0"}
 *   {"str": "..."} / {"bin": "<base64>"}  (bin when not valid UTF-8)
 *   {"array": [[key, desc], ...]}
 *   {"object": "<class>", "props": [[key, desc], ...]}  keys exactly as serialized
 *   {"enum": "<class>", "case": "<name>"}
 *   {"custom": "<class>", "data": {"str"|"bin": ...}}   Serializable (C:)
 *   {"cycle": "<class>"}          object already open higher up the current path
 *
 * $path holds the ids of objects currently being described; a repeated
 * object that is not on the path is described again in full.
 */
function describe(mixed $v, array $path = [], int $depth = 0): mixed
{
    if ($depth > 300) {
        throw new LogicException('describe: runaway recursion (array reference cycle?)');
    }
    if ($v === null || is_bool($v)) {
        return $v;
    }
    if (is_int($v)) {
        return ['int' => (string) $v];
    }
    if (is_float($v)) {
        return describe_float($v);
    }
    if (is_string($v)) {
        return describe_string($v);
    }
    if (is_array($v)) {
        return ['array' => describe_pairs(array_pairs($v), $path, $depth)];
    }
    if ($v instanceof UnitEnum) {
        return ['enum' => get_class($v), 'case' => $v->name];
    }

    $class = get_class($v);
    $id = spl_object_id($v);
    if (isset($path[$id])) {
        return ['cycle' => $class];
    }
    $path[$id] = true;

    // Same precedence as php_var_serialize_intern(): __serialize, then
    // Serializable, then __sleep, then the plain property table.
    if (method_exists($v, '__serialize')) {
        return ['object' => $class, 'props' => describe_pairs(array_pairs($v->__serialize()), $path, $depth)];
    }
    if ($v instanceof Serializable) {
        $data = $v instanceof RecordsPayload ? $v->lastPayload() : $v->serialize();
        // A null from serialize() makes PHP write N; (for this and every later occurrence).
        return $data === null ? null : ['custom' => $class, 'data' => describe_string($data)];
    }
    if (method_exists($v, '__sleep')) {
        return ['object' => $class, 'props' => describe_pairs(sleep_props($v), $path, $depth)];
    }
    return ['object' => $class, 'props' => describe_pairs(plain_props($v), $path, $depth)];
}

function describe_float(float $f): array
{
    if (is_nan($f)) {
        return ['float' => 'NAN'];
    }
    if (is_infinite($f)) {
        return ['float' => $f > 0 ? 'INF' : '-INF'];
    }
    if ($f === 0.0 && fdiv(1.0, $f) === -INF) {
        return ['float' => '-0'];
    }
    return ['float' => $f];
}

function describe_string(string $s): array
{
    return mb_check_encoding($s, 'UTF-8') ? ['str' => $s] : ['bin' => base64_encode($s)];
}

/** @param list<array{0:int|string,1:mixed}> $pairs */
function describe_pairs(array $pairs, array $path, int $depth): array
{
    $out = [];
    foreach ($pairs as [$key, $value]) {
        $out[] = [$key, describe($value, $path, $depth + 1)];
    }
    return $out;
}

function array_pairs(array $a): array
{
    $pairs = [];
    foreach ($a as $k => $v) {
        $pairs[] = [$k, $v];
    }
    return $pairs;
}

/**
 * A plain object's props in serialize() order. The (array) cast gives the same
 * order and mangled names, but turns numeric names like "0" into int keys;
 * property tables always hold string names, so PHP writes s:1:"0" — cast back.
 */
function plain_props(object $o): array
{
    $pairs = [];
    foreach ((array) $o as $k => $v) {
        $pairs[] = [(string) $k, $v];
    }
    return $pairs;
}

/**
 * Props written for a __sleep() object. For each returned name PHP tries the
 * name as is, then "\0<ObjectClass>\0name", then "\0*\0name"; names it cannot
 * find (missing, or uninitialized typed props) are skipped, duplicates once.
 */
function sleep_props(object $o): array
{
    $table = (array) $o;     // mangled name => value; uninitialized typed props absent
    $class = get_class($o);
    $pairs = [];
    $seen = [];
    foreach ($o->__sleep() as $name) {
        foreach ([$name, "\0$class\0$name", "\0*\0$name"] as $candidate) {
            if (array_key_exists($candidate, $table)) {
                if (!isset($seen[$candidate])) {
                    $seen[$candidate] = true;
                    $pairs[] = [$candidate, $table[$candidate]];
                }
                break;
            }
        }
    }
    return $pairs;
}

// ===========================================================================
// Self-check: describe the serialized *bytes*, independently of the value
// ===========================================================================

/** Graph node built from the bytes; r:/R: resolve to the very same node. */
final class GNode
{
    public function __construct(
        public string $kind,          // scalar | array | object | enum | custom
        public mixed $desc = null,    // scalar: finished description
        public string $class = '',
        public array $pairs = [],     // array/object: list of [key, GNode]
        public string $case = '',
        public string $data = '',
    ) {
    }
}

/**
 * Minimal parser of PHP's serialize format. Slot numbering follows PHP: every
 * value gets the next slot number (1 = the top-level value) except R:, which
 * takes none; keys take none; the array returned by __serialize takes none
 * (its elements do). A C: payload is opaque, except for the classes in
 * NESTED_PAYLOAD_CLASSES, whose payload values also take (outer) slots.
 */
final class ByteParser
{
    private int $pos = 0;
    /** @var array<int, GNode> */
    private array $slots = [];
    /** @var array<string,int> tally of tokens seen, e.g. ['R' => 12] */
    public array $tokens = [];

    public function __construct(private string $s)
    {
    }

    public function parseAll(): GNode
    {
        $node = $this->value();
        if ($this->pos !== strlen($this->s)) {
            throw new LogicException('parser: trailing bytes at ' . $this->pos);
        }
        return $node;
    }

    private function value(): GNode
    {
        $tag = $this->s[$this->pos] ?? '';
        $this->tokens[$tag] = ($this->tokens[$tag] ?? 0) + 1;
        if ($tag === 'R') {
            $this->expect('R:');
            return $this->slot((int) $this->until(';'));
        }
        if ($tag === 'r') {
            $this->expect('r:');
            return $this->slots[] = $this->slot((int) $this->until(';'));
        }
        switch ($tag) {
            case 'N':
                $this->expect('N;');
                return $this->slots[] = new GNode('scalar', null);
            case 'b':
                $this->expect('b:');
                $b = $this->until(';');
                if ($b !== '0' && $b !== '1') {
                    throw new LogicException("parser: bad bool $b");
                }
                return $this->slots[] = new GNode('scalar', $b === '1');
            case 'i':
                $this->expect('i:');
                return $this->slots[] = new GNode('scalar', ['int' => $this->intText($this->until(';'))]);
            case 'd':
                $this->expect('d:');
                return $this->slots[] = new GNode('scalar', describe_float($this->floatText($this->until(';'))));
            case 's':
                $body = $this->stringBody('s:');
                $this->expect(';');
                return $this->slots[] = new GNode('scalar', describe_string($body));
            case 'a':
                $node = $this->slots[] = new GNode('array');
                $this->expect('a:');
                $node->pairs = $this->pairs((int) $this->until(':'));
                return $node;
            case 'O':
                $node = $this->slots[] = new GNode('object');
                $node->class = $this->stringBody('O:');
                $this->expect(':');
                $node->pairs = $this->pairs((int) $this->until(':'));
                return $node;
            case 'C':
                $node = $this->slots[] = new GNode('custom');
                $node->class = $this->stringBody('C:');
                $this->expect(':');
                $len = (int) $this->until(':');
                $this->expect('{');
                $node->data = substr($this->s, $this->pos, $len);
                $this->pos += $len;
                $this->expect('}');
                if (in_array($node->class, NESTED_PAYLOAD_CLASSES, true)) {
                    $this->parseNested($node->data);
                }
                return $node;
            case 'E':
                $node = $this->slots[] = new GNode('enum');
                [$node->class, $node->case] = explode(':', $this->stringBody('E:'), 2);
                $this->expect(';');
                return $node;
        }
        throw new LogicException("parser: unexpected '$tag' at {$this->pos}");
    }

    /** A nested serialize() payload: parsed only for the slots it consumes in the shared numbering. */
    private function parseNested(string $payload): void
    {
        [$outer, $outerPos] = [$this->s, $this->pos];
        [$this->s, $this->pos] = [$payload, 0];
        $this->value();
        if ($this->pos !== strlen($payload)) {
            throw new LogicException('parser: trailing bytes in nested payload');
        }
        [$this->s, $this->pos] = [$outer, $outerPos];
    }

    private function pairs(int $count): array
    {
        $this->expect('{');
        $pairs = [];
        for ($i = 0; $i < $count; $i++) {
            // keys are i: or s: and, unlike values, take no slot
            if (($this->s[$this->pos] ?? '') === 'i') {
                $this->expect('i:');
                $key = (int) $this->intText($this->until(';'));
            } else {
                $key = $this->stringBody('s:');
                $this->expect(';');
            }
            $pairs[] = [$key, $this->value()];
        }
        $this->expect('}');
        return $pairs;
    }

    /** Reads <prefix><len>:"<bytes>" and returns the bytes (the caller eats what follows). */
    private function stringBody(string $prefix): string
    {
        $this->expect($prefix);
        $len = (int) $this->until(':');
        $this->expect('"');
        $body = substr($this->s, $this->pos, $len);
        if (strlen($body) !== $len) {
            throw new LogicException('parser: short string');
        }
        $this->pos += $len;
        $this->expect('"');
        return $body;
    }

    private function intText(string $t): string
    {
        if ((string) (int) $t !== $t) {
            throw new LogicException("parser: bad int $t");
        }
        return $t;
    }

    private function floatText(string $t): float
    {
        return match ($t) {
            'INF' => INF,
            '-INF' => -INF,
            'NAN' => NAN,
            default => is_numeric($t) ? (float) $t : throw new LogicException("parser: bad float $t"),
        };
    }

    private function slot(int $n): GNode
    {
        return $this->slots[$n - 1] ?? throw new LogicException("parser: reference to missing slot $n");
    }

    private function expect(string $lit): void
    {
        if (substr($this->s, $this->pos, strlen($lit)) !== $lit) {
            throw new LogicException("parser: expected '$lit' at {$this->pos}");
        }
        $this->pos += strlen($lit);
    }

    private function until(string $end): string
    {
        $at = strpos($this->s, $end, $this->pos);
        if ($at === false) {
            throw new LogicException("parser: missing '$end'");
        }
        $text = substr($this->s, $this->pos, $at - $this->pos);
        $this->pos = $at + 1;
        return $text;
    }
}

/** Same tagged tree as describe(), but from the parsed byte graph. */
function describe_node(GNode $n, array $path = [], int $depth = 0): mixed
{
    if ($depth > 300) {
        throw new LogicException('describe_node: runaway recursion');
    }
    switch ($n->kind) {
        case 'scalar':
            return $n->desc;
        case 'enum':
            return ['enum' => $n->class, 'case' => $n->case];
        case 'custom':
            return ['custom' => $n->class, 'data' => describe_string($n->data)];
        case 'array':
            return ['array' => describe_node_pairs($n->pairs, $path, $depth)];
    }
    $id = spl_object_id($n);
    if (isset($path[$id])) {
        return ['cycle' => $n->class];
    }
    $path[$id] = true;
    return ['object' => $n->class, 'props' => describe_node_pairs($n->pairs, $path, $depth)];
}

function describe_node_pairs(array $pairs, array $path, int $depth): array
{
    $out = [];
    foreach ($pairs as [$key, $node]) {
        $out[] = [$key, describe_node($node, $path, $depth + 1)];
    }
    return $out;
}

// ===========================================================================
// The writer
// ===========================================================================

final class Corpus
{
    /** @var resource */
    private $fh;
    /** @var array<string,int> */
    public array $counts = [];
    /** @var array<string,int> */
    public array $tokens = [];
    /** @var array<string,int> serialized substrings we promise to contain */
    public array $markers = ['d:INF;' => 0, 'd:-INF;' => 0, 'd:NAN;' => 0, 'd:-0;' => 0, 'd:1.0E+25;' => 0, 'C:' => 0, 'E:' => 0, 'r:' => 0, 'R:' => 0];
    public int $total = 0;

    public function __construct(string $file)
    {
        $fh = fopen($file, 'wb');
        if ($fh === false) {
            throw new RuntimeException("cannot write $file");
        }
        $this->fh = $fh;
    }

    public function add(string $category, mixed $value): void
    {
        $bytes = serialize($value);
        $describe = describe($value);

        // Cross-check against the bytes: same tree, same keys, same order.
        $parser = new ByteParser($bytes);
        $fromBytes = describe_node($parser->parseAll());
        $name = $category . '/' . ($this->counts[$category] ?? 0);
        if (json_encode($describe, JSON_FLAGS) !== json_encode($fromBytes, JSON_FLAGS)) {
            fwrite(STDERR, "$name\n  bytes:    " . addcslashes($bytes, "\0..\37") . "\n  describe: "
                . json_encode($describe, JSON_FLAGS) . "\n  parsed:   " . json_encode($fromBytes, JSON_FLAGS) . "\n");
            throw new LogicException("describe() disagrees with the serialized bytes for $name");
        }
        foreach ($parser->tokens as $t => $n) {
            $this->tokens[$t] = ($this->tokens[$t] ?? 0) + $n;
        }
        foreach ($this->markers as $m => $_) {
            if (str_contains($bytes, $m)) {
                $this->markers[$m]++;
            }
        }

        $line = json_encode(['name' => $name, 'b64' => base64_encode($bytes), 'describe' => $describe], JSON_FLAGS);
        fwrite($this->fh, $line . "\n");
        $this->counts[$category] = ($this->counts[$category] ?? 0) + 1;
        $this->total++;
    }

    public function close(): void
    {
        fclose($this->fh);
    }
}

// ===========================================================================
// Seeded random helpers (mt_rand only)
// ===========================================================================

function rnd_chance(float $p): bool
{
    return mt_rand(0, 999_999) < (int) ($p * 1_000_000);
}

function rnd_pick(array $xs): mixed
{
    $keys = array_keys($xs);
    return $xs[$keys[mt_rand(0, count($keys) - 1)]];
}

function rnd_int64(): int
{
    return mt_rand(PHP_INT_MIN, PHP_INT_MAX);
}

function rnd_bytes(int $n): string
{
    $s = '';
    for ($i = 0; $i < $n; $i++) {
        $s .= chr(mt_rand(0, 255));
    }
    return $s;
}

/** Any double at all, NaN payloads and subnormals included. */
function rnd_float_bits(): float
{
    return unpack('e', rnd_bytes(8))[1];
}

/** Decimal-looking floats across many magnitudes. */
function rnd_decimal(): float
{
    return match (mt_rand(0, 4)) {
        0 => mt_rand(-999_999, 999_999) / (10 ** mt_rand(0, 8)),
        1 => mt_rand() / mt_getrandmax(),
        2 => mt_rand(1, 99_999) * (10.0 ** mt_rand(-30, 30)) * (rnd_chance(0.5) ? 1 : -1),
        3 => round(mt_rand(-100_000, 100_000) / 7, mt_rand(0, 6)),
        default => (float) mt_rand(-2 ** 31, 2 ** 31) + mt_rand(0, 99) / 100,
    };
}

function rnd_ascii(int $min, int $max): string
{
    $s = '';
    for ($i = mt_rand($min, $max); $i > 0; $i--) {
        $s .= chr(mt_rand(0x20, 0x7E));
    }
    return $s;
}

/** Valid UTF-8 drawn from many scripts, 1- to 4-byte sequences, no surrogates. */
function rnd_utf8(int $min, int $max): string
{
    static $ranges = [
        [0x20, 0x7E], [0x20, 0x7E], [0x20, 0x7E], [0xA0, 0xFF], [0x100, 0x17F], [0x300, 0x36F],
        [0x370, 0x3FF], [0x400, 0x4FF], [0x5D0, 0x5EA], [0x600, 0x6FF], [0x900, 0x97F],
        [0x3040, 0x30FF], [0x4E00, 0x9FFF], [0xAC00, 0xD7A3], [0xE000, 0xF8FF], [0xFFF0, 0xFFFF],
        [0x1F300, 0x1FAFF], [0x1F300, 0x1FAFF], [0x10000, 0x1FFFF], [0x20000, 0x2A6DF], [0x10FFF0, 0x10FFFF],
    ];
    static $specials = [0x0, 0x9, 0xA, 0xD, 0x22, 0x3B, 0x7B, 0x7D, 0x5C, 0x7F, 0x80, 0x85, 0x200D, 0x2028, 0x2029, 0xFEFF, 0xFFFD];
    $s = '';
    for ($i = mt_rand($min, $max); $i > 0; $i--) {
        if (rnd_chance(0.1)) {
            $cp = rnd_pick($specials);
        } else {
            [$lo, $hi] = rnd_pick($ranges);
            $cp = mt_rand($lo, $hi);
        }
        $s .= mb_chr($cp, 'UTF-8');
    }
    return $s;
}

/** Short strings built from the characters that matter to a serialize parser. */
function rnd_tricky(int $min, int $max): string
{
    static $alphabet = ['"', ';', '}', '{', ':', "\n", "\r", "\0", '\\', "'", 's', 'a', 'i', 'N', '1', '0', 'é', "\t", ' ', '😀', 'O', 'C', 'R', 'r'];
    $s = '';
    for ($i = mt_rand($min, $max); $i > 0; $i--) {
        $s .= rnd_pick($alphabet);
    }
    return $s;
}

/** Byte strings that are guaranteed not to be valid UTF-8. */
function rnd_invalid_utf8(): string
{
    do {
        $s = match (mt_rand(0, 3)) {
            0 => rnd_bytes(mt_rand(1, 40)),
            // a valid multi-byte string cut in the middle of a sequence
            1 => substr($u = rnd_utf8(2, 12), 0, mt_rand(1, max(1, strlen($u) - 1))),
            // a stray byte >= 0x80 dropped into valid text
            2 => substr_replace($u = rnd_utf8(1, 10), chr(mt_rand(0x80, 0xFF)), mt_rand(0, strlen($u)), 0),
            default => rnd_ascii(0, 6) . rnd_pick(invalid_utf8_samples()) . rnd_utf8(0, 4),
        };
    } while (mb_check_encoding($s, 'UTF-8'));
    return $s;
}

function rnd_string(): string
{
    return match (mt_rand(0, 9)) {
        0, 1, 2 => rnd_ascii(0, 20),
        3, 4, 5 => rnd_utf8(0, 12),
        6, 7 => rnd_tricky(0, 10),
        8 => rnd_pick(interesting_strings()),
        default => rnd_invalid_utf8(),
    };
}

function rnd_enum(): UnitEnum
{
    return rnd_pick([...Suit::cases(), ...Size::cases(), ...Color::cases(), ...Status::cases(), ...Priority::cases()]);
}

/** A scalar or enum leaf. */
function rnd_leaf(): mixed
{
    return match (mt_rand(0, 15)) {
        0 => null,
        1 => rnd_chance(0.5),
        2, 3 => mt_rand(-1000, 1000),
        4 => rnd_int64(),
        5 => rnd_pick(interesting_ints()),
        6 => rnd_decimal(),
        7 => rnd_pick(interesting_floats()),
        8 => rnd_float_bits(),
        9, 10 => rnd_ascii(0, 12),
        11 => rnd_utf8(0, 8),
        12 => rnd_tricky(0, 6),
        13 => rnd_invalid_utf8(),
        default => rnd_enum(),
    };
}

/** Array keys; int keys stay within +-2^31 here (64-bit keys get their own category). */
function rnd_key(): int|string
{
    return match (mt_rand(0, 7)) {
        0, 1 => mt_rand(0, 20),
        2 => mt_rand(-50, -1),
        3 => mt_rand(-2 ** 31, 2 ** 31),
        4 => rnd_pick(numeric_looking_keys()),
        5 => rnd_utf8(0, 4),
        6 => rnd_pick(js_hostile_names()),
        default => rnd_ascii(1, 8),
    };
}

// ===========================================================================
// Fixed sample sets
// ===========================================================================

function interesting_ints(): array
{
    return [
        0, 1, -1, 2, -2, 7, 9, 10, -10, 42, -42, 99, 100, 127, 128, -128, -129, 255, 256, 1000,
        32767, 32768, -32768, -32769, 65535, 65536, 2147483647, 2147483648, -2147483648, -2147483649,
        4294967295, 4294967296, 999999999999999, 1000000000000000, 9007199254740990,
        9007199254740991, 9007199254740992, 9007199254740993, 9007199254740994, 9007199254740995,
        -9007199254740991, -9007199254740992, -9007199254740993, -9007199254740994,
        18014398509481984, 1 << 60, 1000000000000000000, PHP_INT_MAX - 1, PHP_INT_MAX,
        PHP_INT_MIN, PHP_INT_MIN + 1,
    ];
}

function interesting_floats(): array
{
    $negNan = unpack('e', "\x00\x00\x00\x00\x00\x00\xf8\xff")[1];
    $nanPayload = unpack('e', "\x01\x00\x00\x00\x00\x00\xf0\x7f")[1];
    return [
        0.0, -0.0, INF, -INF, NAN, $negNan, $nanPayload, 0.1, 0.2, 0.3, 0.1 + 0.2, 1.0, -1.0,
        1.5, -1.5, 2.5, 100.0, 1e25, -1e25, 1e-7, 1e15, 1e16, 1e17, 1e21, 1e22, 1e-4, 1e-5,
        1e-6, 123456789012345678.0, PHP_FLOAT_MAX, -PHP_FLOAT_MAX, PHP_FLOAT_MIN, PHP_FLOAT_EPSILON,
        5e-324, -5e-324, -1.5e-300, 2.0 ** 53, 2.0 ** 53 + 2, 9007199254740993.0, 2.0 ** 63,
        -(2.0 ** 63), 2.0 ** 64, 1 / 3, 2 / 3, M_PI, M_E, 4.35, 1234.5678, 1e100, 1e-100,
        2.2250738585072009e-308, 1000000000000000.2, 0.000123, 12345678.9, 1.0e15 + 0.5,
    ];
}

function interesting_strings(): array
{
    return [
        '', 'a', 'hello world', "\0", "a\0b", "\0\0\0", '"', '";', ';', '}', '{', '{}', ':', "\n",
        "\r\n", "\t", '\\', "'", 's:1:"a";', 'a:1:{i:0;i:1;}', 'O:8:"stdClass":0:{}', 'N;', 'é',
        'café', 'naïve résumé', '日本語', '中文字符', '한국어', 'Ελληνικά', 'русский', 'עברית',
        'العربية', '😀', '👨‍👩‍👧‍👦', '🏳️‍🌈', "\u{FEFF}bom", "\u{10FFFF}", "\u{FFFD}", "\u{2028}\u{2029}",
        "\u{7F}", "e\u{301}", '123', '-0', '1.5', '1e3', ' 1', '0x1A', 'NAN', 'INF', 'null', 'true',
        str_repeat('x', 255), str_repeat('é', 128),
    ];
}

function invalid_utf8_samples(): array
{
    return [
        "\xC0\x80", "\xC1\xBF", "\xE0\x80\xAF", "\xF0\x80\x80\xAF", "\xED\xA0\x80", "\xED\xBF\xBF",
        "\xED\xA0\xBD\xED\xB8\x80", "\x80", "\xBF", "\x80\x80\x80", "\xFE", "\xFF", "\xFF\xFE",
        "\xC3", "\xE2\x82", "\xF0\x9F\x98", "\xF4\x90\x80\x80", "\xF8\x88\x80\x80\x80", "caf\xE9",
        "h\0i\0", "abc\x80def", "\xC3\x28", "\xE2\x28\xA1", "\xF0\x28\x8C\x28",
    ];
}

/** String keys that look numeric to some parsers but which PHP keeps as strings. */
function numeric_looking_keys(): array
{
    return [
        '01', '00', '007', '-01', '1.5', ' 1', '1 ', '-0', '+1', '0x1A', '1e3', '.5', '0.0',
        '9223372036854775808', '-9223372036854775809', '٣', '１', 'NaN', '', ' ',
    ];
}

function js_hostile_names(): array
{
    return ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'length', '0', '1', '123', '-1'];
}

// ===========================================================================
// Random mixed-value generator
// ===========================================================================

/**
 * Builds nested arrays/objects of every kind. Keeps the objects it has made
 * (reusing one gives r:), the objects still under construction (reusing one
 * gives a cycle), and sometimes turns two array slots into one PHP reference (R:).
 */
final class MixGen
{
    private array $pool = [];
    private array $open = [];

    public function __construct(private int $maxDepth, private int $budget)
    {
    }

    public function value(int $depth = 0): mixed
    {
        $this->budget--;
        if ($depth >= $this->maxDepth || $this->budget <= 0 || ($depth > 0 && rnd_chance(0.4))) {
            return rnd_leaf();
        }
        $roll = mt_rand(1, 100);
        if ($roll <= 5 && $this->open) {
            return rnd_pick($this->open);
        }
        if ($roll <= 14 && $this->pool) {
            return rnd_pick($this->pool);
        }
        return $roll <= 55 ? $this->array($depth) : $this->object($depth);
    }

    public function array(int $depth): array
    {
        $a = [];
        $list = rnd_chance(0.5);
        for ($n = mt_rand(0, 5); $n > 0; $n--) {
            if ($list) {
                $a[] = $this->value($depth + 1);
            } else {
                $a[rnd_key()] = $this->value($depth + 1);
            }
        }
        if (rnd_chance(0.2)) {
            link_random_slots($a);
        }
        return $a;
    }

    public function object(int $depth): object
    {
        $kind = mt_rand(0, 14);
        if ($kind === 0) {
            return rnd_enum();
        }
        if ($kind === 1) {
            // (LegacyWrapper stays out of mixes: its nested payload shifts slot numbers, see its own category)
            return $this->pool[] = new LegacyToken(rnd_chance(0.1) ? null : rnd_string());
        }
        if ($kind === 2) {
            return $this->pool[] = rnd_builtin();
        }

        $fill = fn () => $this->value($depth + 1);

        // Classes whose props are set from outside or via a method: create first,
        // register as open, then fill, so the contents can point back (cycles).
        if ($kind <= 9) {
            $o = match ($kind) {
                3, 4 => new stdClass(),
                5 => new Bag(),
                6 => new Point(),
                7 => new Node('n' . mt_rand(0, 99)),
                default => new Magic([]),
            };
            $this->open[] = $o;
            if ($o instanceof Point) {
                $o->x = $fill();
                $o->y = $fill();
            } elseif ($o instanceof Node) {
                $o->children = [$fill(), $fill()];
                $o->parent = $this->open[0];
            } elseif ($o instanceof Magic) {
                $o->fill($this->array($depth));
            } else {
                for ($n = mt_rand(0, 4); $n > 0; $n--) {
                    $o->{prop_name()} = $fill();
                }
            }
            array_pop($this->open);
            return $this->pool[] = $o;
        }

        // Constructor-filled classes: contents first (these can still hold
        // other open objects, just not themselves).
        return $this->pool[] = match ($kind) {
            10 => new Visibility($fill(), $fill(), $fill()),
            11 => new ChildBox($fill(), $fill(), $fill(), $fill(), $fill()),
            12 => new Sleepy(rnd_sleep_names(false), $fill(), $fill(), $fill(), $fill()),
            13 => rnd_typed($fill),
            default => new \App\Jobs\Deep\Nested\Name\Space\Job($fill(), mt_rand(0, 5)),
        };
    }
}

/** Makes $a[k2] a PHP reference to $a[k1] (both slots become the same reference). */
function link_random_slots(array &$a): void
{
    if (count($a) < 2) {
        return;
    }
    $keys = array_keys($a);
    $from = $keys[mt_rand(0, count($keys) - 1)];
    $to = $keys[mt_rand(0, count($keys) - 1)];
    if ($from !== $to) {
        $a[$to] = &$a[$from];
    }
}

/** A dynamic property name: ordinary, numeric, or one that trips up JS objects. */
function prop_name(): string
{
    return match (mt_rand(0, 4)) {
        0 => rnd_pick(js_hostile_names()),
        1 => (string) mt_rand(0, 30),
        2 => ltrim(rnd_utf8(1, 4), "\0") ?: 'nul',    // names may not start with NUL
        default => rnd_pick(['a', 'b', 'id', 'name', 'data', 'x', 'y', 'items', 'user_id', 'createdAt']),
    };
}

function rnd_sleep_names(bool $child): array
{
    $names = ['a', 'b', 'c', 'd'];
    if ($child) {
        array_push($names, 'e', 'typedUninit', "\0Sleepy\0c");
    }
    $picked = [];
    foreach ($names as $n) {
        if (rnd_chance(0.6)) {
            $picked[] = $n;
        }
    }
    if (rnd_chance(0.1)) {
        $picked[] = 'missing';      // warns and is skipped
    }
    if ($picked && rnd_chance(0.05)) {
        $picked[] = $picked[0];     // notice, written once
    }
    // PHP serializes in the order __sleep() lists the names
    for ($i = count($picked) - 1; $i > 0; $i--) {
        $j = mt_rand(0, $i);
        [$picked[$i], $picked[$j]] = [$picked[$j], $picked[$i]];
    }
    return $picked;
}

/** Typed with a random subset of props initialized (values of the right types). */
function rnd_typed(?callable $fill = null): Typed
{
    $fill ??= fn () => rnd_leaf();
    $gens = [
        'id' => fn () => rnd_chance(0.5) ? mt_rand(0, 10_000) : rnd_int64(),
        'name' => fn () => rnd_chance(0.2) ? null : rnd_string(),
        'ratio' => fn () => rnd_chance(0.3) ? rnd_pick(interesting_floats()) : rnd_decimal(),
        'tags' => fn () => array_map(fn () => rnd_ascii(1, 6), range(1, mt_rand(1, 4))),
        'active' => fn () => rnd_chance(0.5),
        'code' => fn () => rnd_chance(0.5) ? mt_rand(-99, 99) : rnd_utf8(1, 5),
        'next' => fn () => rnd_chance(0.5) ? null : Typed::make(['id' => mt_rand(0, 9)]),
        'status' => fn () => rnd_chance(0.2) ? null : rnd_pick(Status::cases()),
        'items' => fn () => [$fill(), $fill()],
        'secret' => fn () => rnd_chance(0.2) ? null : rnd_decimal(),
        'ro' => fn () => mt_rand(-5, 5),
        'anything' => $fill,
    ];
    $init = [];
    foreach ($gens as $prop => $gen) {
        if (rnd_chance(0.55)) {
            $init[$prop] = $gen();
        }
    }
    return Typed::make($init, rnd_chance(0.2) ? ['withDefault'] : []);
}

/** Built-in classes whose serialize() output is deterministic (they all use __serialize). */
function rnd_builtin(): object
{
    static $zones = ['UTC', '+00:00', '+05:30', '-03:00', '+14:00', 'EST', 'CET', 'Europe/Paris', 'America/New_York', 'Asia/Tokyo'];
    $ts = mt_rand(-2_000_000_000, 1_700_000_000);   // past dates only: future tz rules may change
    $date = DateTimeImmutable::createFromFormat('U.u', sprintf('%d.%06d', $ts, mt_rand(0, 999_999)));
    $date = $date->setTimezone(new DateTimeZone(rnd_pick($zones)));
    switch (mt_rand(0, 6)) {
        case 0:
            return $date;
        case 1:
            return DateTime::createFromImmutable($date);
        case 2:
            return $date->getTimezone();
        case 3:
            return new ArrayObject([rnd_leaf(), 'k' => rnd_leaf()]);
        case 4:
            $s = new SplObjectStorage();
            $s[new Point(mt_rand(0, 9), mt_rand(0, 9))] = rnd_leaf();
            $s[new stdClass()] = null;
            return $s;
        case 5:
            $f = new SplFixedArray(mt_rand(0, 4));
            for ($i = 0; $i < $f->getSize(); $i++) {
                $f[$i] = rnd_leaf();
            }
            return $f;
        default:
            $q = rnd_chance(0.5) ? new SplQueue() : new SplStack();
            for ($i = mt_rand(0, 3); $i > 0; $i--) {
                $q->push(rnd_leaf());
            }
            return $q;
    }
}

// ===========================================================================
// Categories
// ===========================================================================

function gen_scalars(Corpus $c): void
{
    foreach ([null, true, false] as $v) {
        $c->add('scalar', $v);
    }
    foreach (interesting_ints() as $i) {
        $c->add('int', $i);
    }
    for ($bits = 1; $bits <= 63; $bits++) {
        $max = $bits === 63 ? PHP_INT_MAX : (1 << $bits) - 1;
        $c->add('int', mt_rand(0, $max));
        $c->add('int', -mt_rand(0, $max));
    }
    for ($i = 0; $i < 250; $i++) {
        $c->add('int', rnd_int64());
    }
}

function gen_floats(Corpus $c): void
{
    foreach (interesting_floats() as $f) {
        $c->add('float', $f);
    }
    // Where PHP switches between plain and exponent notation.
    for ($e = -25; $e <= 25; $e++) {
        $c->add('float', 10.0 ** $e);
        $c->add('float', -1.5 * 10.0 ** $e);
    }
    for ($i = 0; $i < 350; $i++) {
        $c->add('float-bits', rnd_float_bits());
    }
    for ($i = 0; $i < 250; $i++) {
        $c->add('float-decimal', rnd_decimal());
    }
}

function gen_strings(Corpus $c): void
{
    foreach (interesting_strings() as $s) {
        $c->add('string', $s);
    }
    for ($i = 0; $i < 300; $i++) {
        $c->add('string', match ($i % 3) {
            0 => rnd_ascii(0, 40),
            1 => rnd_utf8(1, 30),
            default => rnd_tricky(1, 20),
        });
    }
    foreach (invalid_utf8_samples() as $s) {
        $c->add('string-invalid-utf8', $s);
    }
    for ($i = 0; $i < 180; $i++) {
        $c->add('string-invalid-utf8', rnd_invalid_utf8());
    }

    $c->add('string-long', str_repeat('abcdefghij', 1000));                           // 10,000 ASCII
    $c->add('string-long', rnd_ascii(12_000, 12_000));
    $c->add('string-long', str_repeat("\"};\0\n", 2500));                               // parser-hostile bytes
    $c->add('string-long', rnd_utf8(5_000, 5_000));                                   // multi-byte, >10k bytes
    $c->add('string-long', rnd_bytes(20_000));                                        // binary
    $c->add('string-long', str_repeat('😀', 4096));                                   // 16 KiB of 4-byte chars
}

function gen_arrays(Corpus $c): void
{
    $fixed = [
        [], [1], [1, 2, 3], [null], [[]], [[[]]], ['a', 'b', 'c'], [true, false, null, 0, 0.0, ''],
        [0 => 'a', 2 => 'b'], [5 => 1], [1 => 'one', 0 => 'zero'], [-1 => 'neg'], [-5 => 1, -3 => 2, 0 => 3],
        ['1' => 'int key from "1"', '-1' => 'int key from "-1"'], [true => 'bool key -> 1', null => 'null key -> ""'],
        ['a' => 1, 'b' => 2], ['' => 'empty key'], ["\0" => 'nul key', "a\0b" => 'nul inside'],
        ['é' => 1, '日本' => 2, '😀' => 3], ['__proto__' => 1, 'constructor' => 2, 'prototype' => 3],
        [0 => 'a', 'x' => 'b', 1 => 'c', '01' => 'd'], array_fill(0, 20, 0), range(-10, 10), range('a', 'z'),
    ];
    foreach ($fixed as $a) {
        $c->add('array', $a);
    }
    $holes = [1, 2, 3, 4, 5];
    unset($holes[1], $holes[3]);
    $c->add('array', $holes);
    $appendAfterNegative = [-7 => 'a'];
    $appendAfterNegative[] = 'b';                 // PHP >= 8.3 would use -6; 8.2 uses 0
    $c->add('array', $appendAfterNegative);
    $same = ['x' => 1];
    $c->add('array', [$same, $same, 'k' => $same]);  // arrays are values: no r:, written out each time

    for ($i = 0; $i < 120; $i++) {
        $list = [];
        for ($n = mt_rand(0, 12); $n > 0; $n--) {
            $list[] = rnd_leaf();
        }
        $c->add('array', $list);
    }

    foreach (numeric_looking_keys() as $k) {
        $c->add('array-keys', [$k => $k]);
    }
    for ($i = 0; $i < 200; $i++) {
        $a = [];
        for ($n = mt_rand(1, 8); $n > 0; $n--) {
            $key = match ($i % 4) {
                0 => mt_rand(-1000, 1000) * mt_rand(1, 3),     // non-sequential / negative ints
                1 => rnd_pick(numeric_looking_keys()),
                2 => rnd_utf8(0, 6),
                default => rnd_key(),
            };
            $a[$key] = rnd_leaf();
        }
        $c->add('array-keys', $a);
    }

    // Keys outside the JS safe-integer range, kept apart so consumers can see them.
    $c->add('array-int64-keys', [PHP_INT_MAX => 'max', PHP_INT_MIN => 'min']);
    $c->add('array-int64-keys', [9007199254740991 => 'a', 9007199254740992 => 'b', 9007199254740993 => 'c', -9007199254740993 => 'd']);
    for ($i = 0; $i < 28; $i++) {
        $a = [];
        for ($n = mt_rand(1, 4); $n > 0; $n--) {
            $a[rnd_int64()] = rnd_leaf();
        }
        $c->add('array-int64-keys', $a);
    }

    for ($depth = 1; $depth <= 20; $depth++) {
        foreach (['list', 'assoc', 'mixed', 'objects'] as $shape) {
            $c->add('array-deep', deep_chain($depth, $shape));
        }
    }
}

/** A chain nested $depth levels deep, in one of a few shapes. */
function deep_chain(int $depth, string $shape): mixed
{
    $v = rnd_leaf();
    for ($d = 0; $d < $depth; $d++) {
        $v = match ($shape) {
            'list' => [$v],
            'assoc' => ['level' . $d => $v],
            'mixed' => [0 => rnd_leaf(), 'next' => $v, 2 => rnd_leaf()],
            default => $d % 2 === 0 ? (object) ['child' => $v, 'd' => $d] : [$d => $v],
        };
    }
    return $v;
}

function gen_objects(Corpus $c): void
{
    // --- stdClass and dynamic props -----------------------------------------
    $c->add('object-stdclass', new stdClass());
    $o = new stdClass();
    foreach (js_hostile_names() as $n) {
        $o->$n = $n;
    }
    $c->add('object-stdclass', $o);
    $c->add('object-stdclass', (object) ['x', 'y', 5 => 'z']);                 // int keys become "0", "1", "5"
    $c->add('object-stdclass', (object) ['' => 'empty name']);                // only reachable via a cast
    $c->add('object-stdclass', (object) ["\0*\0fake" => 'looks protected', "\0Other\0fake" => 'looks private']);
    for ($i = 0; $i < 140; $i++) {
        $o = new stdClass();
        for ($n = mt_rand(0, 6); $n > 0; $n--) {
            $o->{prop_name()} = rnd_chance(0.8) ? rnd_leaf() : (new MixGen(2, 5))->value();
        }
        $c->add('object-stdclass', $o);
    }

    // --- user classes ------------------------------------------------------
    $c->add('object-class', new Point());
    $c->add('object-class', new Visibility(1, 2, 3));
    $c->add('object-class', new Café());
    $c->add('object-class', new Bag());
    for ($i = 0; $i < 150; $i++) {
        $o = match ($i % 5) {
            0 => new Point(rnd_leaf(), rnd_leaf()),
            1 => new Visibility(rnd_leaf(), rnd_leaf(), rnd_leaf()),
            2 => (function () { $b = new Bag(); $b->{prop_name()} = rnd_leaf(); $b->{prop_name()} = rnd_leaf(); return $b; })(),
            3 => new Point(new Point(rnd_leaf(), rnd_leaf()), new Visibility(rnd_leaf(), new Point(), [rnd_leaf()])),
            default => (function () { $v = new Visibility(1, 2, 3); $v->pub = new Café(); unset($v->pub); return $v; })(),
        };
        $c->add('object-class', $o);
    }

    // --- inheritance: parent's and child's private props side by side -------
    $c->add('object-inheritance', new ChildBox('parent-secret', 'child-secret', 'shared', 'label', 'extra'));
    $c->add('object-inheritance', new GrandChildBox('p', 'c', 's', 'l', 'e'));
    for ($i = 0; $i < 70; $i++) {
        $args = [rnd_leaf(), rnd_leaf(), rnd_leaf(), rnd_leaf(), rnd_leaf()];
        $c->add('object-inheritance', $i % 3 === 0 ? new GrandChildBox(...$args) : new ChildBox(...$args));
    }
    $c->add('object-inheritance', new \Illuminate\Database\Eloquent\Collection([1, 2]));

    // --- typed props, some uninitialized (left out by serialize) --------------
    $c->add('object-typed', Typed::make([]));
    $c->add('object-typed', Typed::make([], ['withDefault']));
    $c->add('object-typed', Typed::make(['id' => 1, 'ro' => 2, 'next' => Typed::make(['id' => 3])]));
    for ($i = 0; $i < 130; $i++) {
        $c->add('object-typed', rnd_typed());
    }

    gen_namespaced($c);
    gen_serializable($c);
    gen_magic($c);
    gen_sleep($c);
    gen_builtins($c);
    gen_enums($c);
}

function gen_namespaced(Corpus $c): void
{
    $c->add('object-namespaced', new \App\Jobs\ImportCsv('/tmp/users.csv', [['id' => 1, 'email' => 'a@example.com']], Status::Pending));
    $c->add('object-namespaced', new \App\Jobs\SendWelcomeEmail(new \App\Models\User(['id' => 7, 'name' => 'Ann'])));
    $c->add('object-namespaced', new \Illuminate\Contracts\Database\ModelIdentifier(\App\Models\User::class, [1, 2, 3], ['posts'], 'mysql'));
    for ($i = 0; $i < 160; $i++) {
        $user = new \App\Models\User(['id' => mt_rand(1, 99_999), 'name' => rnd_utf8(1, 8), 'email' => rnd_ascii(3, 10) . '@example.com']);
        $o = match ($i % 6) {
            0 => new \App\Jobs\ImportCsv('/data/' . rnd_ascii(1, 10) . '.csv', [rnd_leaf(), ['row' => rnd_leaf()]], rnd_chance(0.3) ? null : rnd_pick(Status::cases())),
            1 => new \App\Jobs\SendWelcomeEmail($user, rnd_pick(['en', 'fr', 'pt_BR', 'zh-Hant'])),
            2 => $user,
            3 => new \Illuminate\Support\Collection([$user, new \App\Models\User(['id' => mt_rand(1, 9)]), rnd_leaf()]),
            4 => new \Illuminate\Contracts\Database\ModelIdentifier(\App\Models\User::class, rnd_chance(0.5) ? mt_rand(1, 999) : [mt_rand(1, 9), mt_rand(10, 99)], rnd_chance(0.5) ? [] : ['roles', 'posts.comments'], rnd_pick([null, 'mysql', 'pgsql'])),
            default => new \App\Jobs\Deep\Nested\Name\Space\Job((new MixGen(3, 10))->value(), mt_rand(0, 3)),
        };
        if ($o instanceof \App\Jobs\ImportCsv || $o instanceof \App\Jobs\SendWelcomeEmail) {
            // what ->onQueue()/->delay()/->chain() leave behind
            $o->queue = rnd_pick([null, 'default', 'imports', 'high']);
            $o->delay = rnd_chance(0.5) ? null : mt_rand(0, 3600);
            $o->connection = rnd_chance(0.7) ? null : 'redis';
            if (rnd_chance(0.3)) {
                $o->chained = [serialize(new \App\Jobs\ImportCsv('/next.csv', [], Status::Done))];
            }
        }
        $c->add('object-namespaced', $o);
    }
}

function gen_serializable(Corpus $c): void
{
    $c->add('object-serializable', new LegacyToken('abc'));
    $c->add('object-serializable', new LegacyToken(''));
    $c->add('object-serializable', new LegacyToken('}};"{'));               // payload length-delimited, braces inside are fine
    $c->add('object-serializable', new LegacyToken("bin\0\xFF\xC0\x80"));
    $c->add('object-serializable', new LegacyToken(null));                  // serialize() returns null -> N;
    $nul = new LegacyToken(null);
    $c->add('object-serializable', [$nul, $nul, 'after' => 1]);             // the repeat is N; too, not r:
    $tok = new LegacyToken('shared');
    $c->add('object-serializable', [$tok, $tok, 'obj' => (object) ['t' => $tok]]);
    $c->add('object-serializable', new BothWays(['not', 'a', 'C:']));
    for ($i = 0; $i < 80; $i++) {
        $o = $i % 2 ? new LegacyToken(rnd_string()) : new BothWays(rnd_leaf());
        $c->add('object-serializable', rnd_chance(0.3) ? ['wrapped' => $o, 'n' => rnd_leaf()] : $o);
    }

    // Nested serialize() inside Serializable::serialize(): shared numbering.
    $c->add('object-serializable-nested', new LegacyWrapper([new stdClass(), 'x' => [1, 2]]));
    $o = new stdClass();
    $c->add('object-serializable-nested', [$o, new LegacyWrapper([1, 2, $o]), $o, 'x', new stdClass(), 5]);
    $p = new stdClass();
    $c->add('object-serializable-nested', [new LegacyWrapper([$p, 1, 2, 3]), $p]);    // outer r: points into the payload
    for ($i = 0; $i < 40; $i++) {
        $shared = new Point(rnd_leaf(), rnd_leaf());
        $w = new LegacyWrapper(rnd_chance(0.5) ? [$shared, (new MixGen(3, 8))->value()] : (new MixGen(3, 8))->value());
        $a = filler(mt_rand(0, 4));
        $a['w'] = $w;
        $a['after'] = $shared;
        $a['tail'] = filler(mt_rand(0, 4));
        $a['p'] = $shared;
        if (rnd_chance(0.3)) {
            $a['again'] = new LegacyWrapper([$shared, $w]);                     // wrapper inside wrapper
        }
        $c->add('object-serializable-nested', $a);
    }
}

function gen_magic(Corpus $c): void
{
    $c->add('object-magic', new Magic([]));
    $c->add('object-magic', new Magic([0 => 'a', 1 => 'b']));
    $c->add('object-magic', new Magic([5 => 'x', -1 => 'y', 'k' => 'z', '01' => 'w']));
    $c->add('object-magic', new Magic([PHP_INT_MAX => 'int64 key in __serialize data']));
    $c->add('object-magic', new SleepButSerialize());
    $c->add('object-magic', new MagicRefs('v'));
    for ($i = 0; $i < 150; $i++) {
        $payload = (new MixGen(4, 14))->array(0);
        $c->add('object-magic', new Magic(rnd_chance(0.3) ? [$payload, new Magic([rnd_leaf()])] : $payload));
    }
}

function gen_sleep(Corpus $c): void
{
    $c->add('object-sleep', new Sleepy([], 1, 2, 3, 4));
    $c->add('object-sleep', new Sleepy(['a', 'b', 'c', 'd'], 1, 2, 3, 4));
    $c->add('object-sleep', new Sleepy(['d', 'c', 'b', 'a'], 1, 2, 3, 4));      // order follows __sleep()
    $c->add('object-sleep', new Sleepy(['a', 'missing'], 1, 2, 3, 4));          // warning; left out
    $c->add('object-sleep', new Sleepy(['only'], 1, 2, 3, 4));                   // the private typed array itself
    $c->add('object-sleep', new SleepyChild(['c', "\0Sleepy\0c", 'e', 'typedUninit'], 1, 2, 3, 4));
    for ($i = 0; $i < 110; $i++) {
        $child = $i % 2 === 1;
        $args = [rnd_sleep_names($child), rnd_leaf(), rnd_leaf(), rnd_leaf(), rnd_leaf()];
        $c->add('object-sleep', $child ? new SleepyChild(...$args) : new Sleepy(...$args));
    }
}

function gen_builtins(Corpus $c): void
{
    $c->add('object-builtin', new DateTimeImmutable('2024-01-02 03:04:05.123456', new DateTimeZone('Europe/Paris')));
    $c->add('object-builtin', new DateTime('2020-02-29 12:00:00', new DateTimeZone('EST')));
    $c->add('object-builtin', new DateTimeZone('+02:00'));
    $c->add('object-builtin', new ArrayObject([]));
    $c->add('object-builtin', new SplFixedArray(0));
    for ($i = 0; $i < 80; $i++) {
        $c->add('object-builtin', rnd_builtin());
    }
}

function gen_enums(Corpus $c): void
{
    foreach ([...Suit::cases(), ...Size::cases(), ...Color::cases(), ...Status::cases(), ...Priority::cases()] as $case) {
        $c->add('enum', $case);
    }
    for ($i = 0; $i < 70; $i++) {
        $list = [];
        for ($n = mt_rand(1, 6); $n > 0; $n--) {
            $list[] = rnd_chance(0.7) ? rnd_enum() : rnd_leaf();   // repeated cases become r:
        }
        $c->add('enum', $i % 2 ? $list : (object) ['status' => rnd_pick(Status::cases()), 'list' => $list]);
    }
}

// --- references ---------------------------------------------------------------

/** Random filler values so that back-references point at large slot numbers. */
function filler(int $n): array
{
    $a = [];
    for ($i = 0; $i < $n; $i++) {
        $a[] = rnd_chance(0.2) ? [rnd_leaf(), rnd_leaf()] : rnd_leaf();
    }
    return $a;
}

/** The same object more than once, not as a cycle: PHP writes r:N. */
function gen_ref_objects(Corpus $c): void
{
    $o = new stdClass();
    $c->add('ref-object', [$o, $o]);
    $p = new Point(1, 2);
    $c->add('ref-object', (object) ['first' => $p, 'second' => $p]);
    $c->add('ref-object', ['a' => $p, 'b' => [$p, [$p]]]);
    // Long distance: back-references with three- and four-digit slot numbers.
    foreach ([60, 150, 400, 1200] as $n) {
        $early = new Point('early', $n);
        $a = [$early, ...filler($n)];
        $late = new stdClass();
        $a[] = $late;
        array_push($a, ...filler(intdiv($n, 3)));
        $a[] = $late;
        $a[] = $early;
        $c->add('ref-object', $a);
    }
    for ($i = 0; $i < 160; $i++) {
        $shared = (new MixGen(2, 6))->object(0);
        $other = new Point(rnd_leaf(), rnd_leaf());
        $a = filler(mt_rand(0, 12));
        $a[] = $shared;
        array_push($a, ...filler(mt_rand(0, 12)));
        $a['again'] = $shared;
        if (rnd_chance(0.5)) {
            $a['o1'] = $other;
            $a['nested'] = [filler(mt_rand(0, 5)), ['x' => $other, 'y' => $shared]];
        }
        if (rnd_chance(0.3)) {
            $holder = new Visibility($shared, $other, $a);      // same objects via props, after the array
            $c->add('ref-object', [$holder, $shared]);
            continue;
        }
        $c->add('ref-object', $a);
    }
}

/** Objects reachable from themselves. */
function gen_ref_cycles(Corpus $c): void
{
    $self = new stdClass();
    $self->self = $self;
    $c->add('ref-cycle', $self);
    $a = new Node('a');
    $b = new Node('b');
    $a->peer = $b;
    $b->peer = $a;
    $c->add('ref-cycle', [$a, $b]);           // the second one is a full re-description, not a cycle
    $loop = new Bag();
    $loop->magic = new Magic(['owner' => $loop, 'list' => [$loop]]);   // cycle through __serialize data
    $c->add('ref-cycle', $loop);
    $ao = new ArrayObject();
    $ao['me'] = $ao;                            // cycle through a built-in's __serialize
    $c->add('ref-cycle', $ao);
    $s = new Sleepy(['a', 'c'], null, null, null, null);
    $s->a = $s;
    $c->add('ref-cycle', $s);
    for ($i = 0; $i < 110; $i++) {
        $c->add('ref-cycle', random_tree());
    }
}

/** A tree of Nodes with parent back-pointers and random peer links. */
function random_tree(): Node
{
    $root = new Node('root');
    $all = [$root];
    for ($n = mt_rand(1, 10); $n > 0; $n--) {
        $parent = rnd_pick($all);
        $child = new Node(rnd_leaf());
        $child->parent = $parent;
        $parent->children[] = $child;
        if (rnd_chance(0.3)) {
            $child->peer = rnd_pick($all);
        }
        $all[] = $child;
    }
    return $root;
}

/** PHP references (&) between slots: PHP writes R:N. */
function gen_php_refs(Corpus $c): void
{
    $a = [1, 2];
    $a[1] = &$a[0];
    $c->add('ref-php', $a);
    $v = 'outside';
    $c->add('ref-php', [&$v, &$v, $v]);                 // third is a copy, not a reference

    $o = new stdClass();
    $a = [$o];
    $a[1] = &$a[0];
    $a[2] = $o;                                         // R: for the reference, r: for the plain copy
    $c->add('ref-php', $a);

    $x = [1, 2];
    $x[1] = &$x[0];
    $y = $x;                                            // the copy shares the reference
    $c->add('ref-php', [$x, $y]);

    $o = new stdClass();
    $o->a = 1;
    $o->b = &$o->a;
    $c->add('ref-php', $o);

    $t = Typed::make(['id' => 5, 'code' => 'x']);
    $c->add('ref-php', ['typed' => $t, 'id' => &$t->id]);   // reference to a typed prop

    $c->add('ref-php', new MagicRefs([1, 2, 3]));
    $payload = ['a' => 'shared', 'b' => null];
    $payload['b'] = &$payload['a'];
    $c->add('ref-php', new Magic($payload));

    // Long distance: R: with large slot numbers, to values near the start and the end.
    foreach ([60, 150, 400, 1200] as $n) {
        $a = filler($n);
        $a[] = 'target';
        $a['far'] = &$a[3];
        $a['near'] = &$a[$n];
        $c->add('ref-php', $a);
    }
    for ($i = 0; $i < 200; $i++) {
        $c->add('ref-php', random_ref_shape($i % 5));
    }
}

function random_ref_shape(int $shape): mixed
{
    $a = filler(mt_rand(2, 15));
    $keys = array_keys($a);
    switch ($shape) {
        case 0:     // several reference groups among siblings
            for ($n = mt_rand(1, 3); $n > 0; $n--) {
                $a[rnd_pick($keys)] = &$a[rnd_pick($keys)];
            }
            return $a;
        case 1:     // a slot referencing an object
            $a[] = new Point(rnd_leaf(), rnd_leaf());
            $last = array_key_last($a);
            $a[] = &$a[$last];
            $a[] = $a[$last];
            return $a;
        case 2:     // reference into a nested array, and to a whole array
            $a['inner'] = filler(mt_rand(1, 5));
            $a['alias'] = &$a['inner'][0];
            $a['whole'] = &$a['inner'];
            return $a;
        case 3:     // references inside a nested object's props
            $inner = new stdClass();
            $inner->list = filler(mt_rand(2, 6));
            $inner->list[1] = &$inner->list[0];
            $inner->same = &$inner->list[0];
            return new Visibility($a, $inner, ['again' => $inner]);
        default:    // references inside __serialize data, mixed with r:
            $p = new Point();
            $a[] = $p;
            $a['ref'] = &$a[0];
            $a['obj'] = $p;
            return new Magic(['data' => $a, 'tail' => filler(mt_rand(0, 4))]);
    }
}

function gen_mix(Corpus $c): void
{
    $i = 0;
    while ($c->total < TARGET_ENTRIES) {
        $gen = new MixGen(mt_rand(1, 6), mt_rand(4, 30));
        $v = $i++ % 3 === 0 ? $gen->object(0) : $gen->value();
        $c->add('mix', $v);
    }
}

// ===========================================================================
// main
// ===========================================================================

function main(array $argv): int
{
    $dir = rtrim($argv[1] ?? 'fixtures/php', '/');
    if (!is_dir($dir) && !mkdir($dir, 0777, true)) {
        throw new RuntimeException("cannot create $dir");
    }
    if ((int) ini_get('serialize_precision') !== -1) {
        throw new RuntimeException('serialize_precision must be -1 (the default) for shortest round-trip floats');
    }
    mt_srand(SEED);

    $corpus = new Corpus("$dir/corpus.jsonl");
    gen_scalars($corpus);
    gen_floats($corpus);
    gen_strings($corpus);
    gen_arrays($corpus);
    gen_objects($corpus);
    gen_ref_objects($corpus);
    gen_ref_cycles($corpus);
    gen_php_refs($corpus);
    gen_mix($corpus);
    $corpus->close();

    // Every token letter PHP 8.2 writes must be present, and the float spellings we promise.
    foreach (str_split('NbidsaOCErR') as $t) {
        if (empty($corpus->tokens[$t])) {
            throw new LogicException("token $t: missing from the corpus");
        }
    }
    foreach ($corpus->markers as $m => $n) {
        if ($n === 0) {
            throw new LogicException("no entry contains $m");
        }
    }

    fprintf(STDOUT, "wrote %d entries to %s/corpus.jsonl\n", $corpus->total, $dir);
    foreach ($corpus->counts as $cat => $n) {
        fprintf(STDOUT, "  %-22s %5d\n", $cat, $n);
    }
    ksort($corpus->tokens);
    fprintf(STDOUT, "tokens: %s\n", json_encode($corpus->tokens));
    fprintf(STDOUT, "entries containing: %s\n", json_encode($corpus->markers));
    return 0;
}

exit(main($argv));
