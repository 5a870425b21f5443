<?php
/**
 * `lqb shapes`' translation of the methods whose results Laravel writes into a payload or a lock
 * key: uniqueId(), backoff(), retryUntil(), tags(), displayName(). A body that is one `return`
 * of a pure expression over the command's properties is written as a small JSON tree that Node
 * evaluates on the serialized command (src/shapes/expression.ts); any other body is marked
 * `{"untranslated": reason}`. The body is read with PHP's own tokenizer, never run.
 *
 * The tree's nodes:
 *   {"prop": name}                      $this->name
 *   {"modelKey": name}                  $this->name->getKey() (or ->{its key name}) of a model property:
 *                                       the key its ModelIdentifier carries; "orNull": true through ?->,
 *                                       where a property holding null gives null
 *   {"lit": string|int|bool|null}       a literal; {"float": n} a float literal
 *   {"concat": [node, …]}               a . b . c
 *   {"cast": "string"|"int"|"float"|"bool", "of": node}
 *   {"array": [node, …]}                [a, b] (a list)
 *   {"now": {"addSeconds": n}}          now()->addSeconds(n), addMinutes, addHours, addDays, sub…
 *   {"commandClass": true}              static::class, get_class($this)
 *   {"returns": type, "nullable": bool, "strict": bool, "of": node}
 *                                       the method's declared return type (int, float, string, bool,
 *                                       array, or "instant" for a class Carbon is): PHP converts or
 *                                       refuses the returned value as that type, in its file's mode
 *
 * Loaded by reflect.php; php-fixture-gen's tests load it too.
 */
declare(strict_types=1);

const LQB_TRANSLATED_METHODS = ['uniqueId', 'backoff', 'retryUntil', 'tags', 'displayName'];
const LQB_MODEL = 'Illuminate\Database\Eloquent\Model';

final class LqbUntranslatable extends Exception
{
}

/**
 * Each of the translated methods the class has (its own, not Laravel's: `$owns` says which it
 * owns), as a tree or `{"untranslated": reason}`.
 */
function lqbExpressions(ReflectionClass $class, callable $owns): array
{
    $expressions = [];
    foreach (LQB_TRANSLATED_METHODS as $name) {
        if (!$owns($class, $name)) {
            continue;
        }
        try {
            $expressions[$name] = lqbTranslate($class, $class->getMethod($name));
        } catch (LqbUntranslatable $e) {
            $expressions[$name] = ['untranslated' => $e->getMessage()];
        } catch (Throwable $e) {
            // Reading one method never costs the whole shapes file (a model whose constructor throws, …).
            $expressions[$name] = ['untranslated' => 'it could not be read: ' . get_class($e) . ': ' . $e->getMessage()];
        }
    }
    return $expressions;
}

function lqbTranslate(ReflectionClass $class, ReflectionMethod $method): array
{
    if ($method->isStatic() || $method->getNumberOfRequiredParameters() > 0) {
        throw new LqbUntranslatable('it is static or takes arguments');
    }
    $file = $method->getFileName();
    if ($file === false || !is_readable($file)) {
        throw new LqbUntranslatable('its source is not readable');
    }
    $lines = array_slice(file($file), $method->getStartLine() - 1, $method->getEndLine() - $method->getStartLine() + 1);
    $tokens = array_values(array_filter(PhpToken::tokenize("<?php\n" . implode('', $lines)), fn (PhpToken $t) => !$t->isIgnorable()));
    $body = lqbBody($tokens, $method->getName());
    if (count($body) < 3 || !$body[0]->is(T_RETURN) || end($body)->text !== ';') {
        throw new LqbUntranslatable('its body is not a single return statement');
    }
    $parser = new LqbParser(array_slice($body, 1, -1), $class, $method->getDeclaringClass());
    return lqbReturnType($method, $parser->whole(), $file);
}

/**
 * The tree wrapped in the method's declared return type, which PHP applies to what the body
 * returns: `uniqueId(): int { return $this->code; }` gives 7 for "007", not "007", and a lock
 * key spelled from the body alone would be one no one frees. Union types are not translated.
 */
function lqbReturnType(ReflectionMethod $method, array $tree, string $file): array
{
    $type = $method->getReturnType();
    if ($type === null || ($type instanceof ReflectionNamedType && $type->getName() === 'mixed')) {
        return $tree;
    }
    if (!$type instanceof ReflectionNamedType) {
        throw new LqbUntranslatable("it declares the return type {$type}, which is not translated");
    }
    $name = ltrim($type->getName(), '\\');
    if (!$type->isBuiltin() && is_a('Illuminate\Support\Carbon', $name, true)) {
        $name = 'instant';
    } elseif (!in_array($name, ['int', 'float', 'string', 'bool', 'array'], true)) {
        throw new LqbUntranslatable("it declares the return type {$type}, which is not translated");
    }
    return ['returns' => $name, 'nullable' => $type->allowsNull(), 'strict' => lqbStrictTypes($file), 'of' => $tree];
}

/** Whether the method's file declares strict_types=1: a return type is checked in the mode of the file that declares it. */
function lqbStrictTypes(string $file): bool
{
    $tokens = array_values(array_filter(PhpToken::tokenize(file_get_contents($file)), fn (PhpToken $t) => !$t->isIgnorable()));
    foreach ($tokens as $i => $token) {
        if ($token->is(T_DECLARE)) {
            $words = implode('', array_map(fn (PhpToken $t) => strtolower($t->text), array_slice($tokens, $i + 1, 5)));
            return $words === '(strict_types=1)';
        }
        if ($token->is([T_NAMESPACE, T_CLASS, T_TRAIT, T_FUNCTION])) {
            break;
        }
    }
    return false;
}

/** The tokens between the method's braces. */
function lqbBody(array $tokens, string $name): array
{
    $count = count($tokens);
    for ($i = 0; $i < $count - 1; $i++) {
        if ($tokens[$i]->is(T_FUNCTION) && $tokens[$i + 1]->is(T_STRING) && strcasecmp($tokens[$i + 1]->text, $name) === 0) {
            break;
        }
    }
    for (; $i < $count && $tokens[$i]->text !== '{'; $i++) {
    }
    $depth = 0;
    $body = [];
    for (; $i < $count; $i++) {
        $text = $tokens[$i]->text;
        if ($text === '{' || $tokens[$i]->is([T_CURLY_OPEN, T_DOLLAR_OPEN_CURLY_BRACES])) {
            $depth++;
            if ($depth === 1) {
                continue;
            }
        } elseif ($text === '}') {
            $depth--;
            if ($depth === 0) {
                return $body;
            }
        }
        $body[] = $tokens[$i];
    }
    throw new LqbUntranslatable('its body could not be found in its source');
}

/** A recursive descent over one expression's tokens; anything it does not know is untranslatable. */
final class LqbParser
{
    private int $at = 0;

    public function __construct(private array $tokens, private ReflectionClass $class, private ReflectionClass $declaring)
    {
    }

    public function whole(): array
    {
        $tree = $this->concat();
        if ($this->at < count($this->tokens)) {
            throw new LqbUntranslatable('it uses ' . $this->describe($this->tokens[$this->at]) . ', which is not translated');
        }
        return $tree;
    }

    private function peek(int $ahead = 0): ?PhpToken
    {
        return $this->tokens[$this->at + $ahead] ?? null;
    }

    private function next(): PhpToken
    {
        $token = $this->tokens[$this->at++] ?? null;
        if ($token === null) {
            throw new LqbUntranslatable('its expression ends early');
        }
        return $token;
    }

    private function expect(string $text): void
    {
        $token = $this->next();
        if ($token->text !== $text) {
            throw new LqbUntranslatable("it uses {$this->describe($token)} where `{$text}` was expected");
        }
    }

    private function describe(PhpToken $token): string
    {
        return '`' . $token->text . '`';
    }

    private function concat(): array
    {
        $parts = [$this->unary()];
        while ($this->peek()?->text === '.') {
            $this->at++;
            $parts[] = $this->unary();
        }
        return count($parts) === 1 ? $parts[0] : ['concat' => $parts];
    }

    private function unary(): array
    {
        $token = $this->peek();
        $casts = [T_STRING_CAST => 'string', T_INT_CAST => 'int', T_DOUBLE_CAST => 'float', T_BOOL_CAST => 'bool'];
        foreach ($casts as $id => $cast) {
            if ($token?->is($id)) {
                $this->at++;
                return ['cast' => $cast, 'of' => $this->unary()];
            }
        }
        if ($token?->text === '-' && $this->peek(1)?->is([T_LNUMBER, T_DNUMBER])) {
            $this->at++;
            $literal = $this->primary();
            return isset($literal['float']) ? ['float' => -$literal['float']] : ['lit' => -$literal['lit']];
        }
        return $this->primary();
    }

    private function primary(): array
    {
        $token = $this->next();
        if ($token->is(T_VARIABLE) && $token->text === '$this') {
            return $this->property();
        }
        if ($token->is(T_LNUMBER)) {
            // 0x…, 0b…, 0… and 8.1's 0o… octal, underscores aside.
            $digits = str_replace('_', '', $token->text);
            $value = preg_match('/^0[oO]/', $digits) ? intval(substr($digits, 2), 8) : intval($digits, 0);
            return ['lit' => $value];
        }
        if ($token->is(T_DNUMBER)) {
            return ['float' => (float) str_replace('_', '', $token->text)];
        }
        if ($token->is(T_CONSTANT_ENCAPSED_STRING)) {
            return ['lit' => $this->stringLiteral($token->text)];
        }
        if ($token->is(T_CLASS_C)) {
            return ['lit' => $this->declaring->getName()];
        }
        if ($token->text === '(') {
            $inner = $this->concat();
            $this->expect(')');
            return $inner;
        }
        if ($token->text === '[' || ($token->is(T_ARRAY) && $this->peek()?->text === '(')) {
            return $this->arrayLiteral($token->text === '[' ? ']' : ')');
        }
        if ($token->is([T_STATIC, T_STRING]) && $this->peek()?->is(T_DOUBLE_COLON) && $this->peek(1)?->is(T_CLASS)) {
            $this->at += 2;
            $name = strtolower($token->text);
            if ($name === 'static') {
                return ['commandClass' => true];
            }
            if ($name === 'self') {
                return ['lit' => $this->declaring->getName()];
            }
            throw new LqbUntranslatable("it names {$token->text}::class");
        }
        if ($token->is([T_STRING, T_NAME_FULLY_QUALIFIED])) {
            $name = strtolower(ltrim($token->text, '\\'));
            if (in_array($name, ['true', 'false', 'null'], true)) {
                return ['lit' => $name === 'null' ? null : $name === 'true'];
            }
            if ($name === 'now' && $this->peek()?->text === '(') {
                return $this->now();
            }
            if ($name === 'get_class' && $this->peek()?->text === '(' && $this->peek(1)?->text === '$this' && $this->peek(2)?->text === ')') {
                $this->at += 3;
                return ['commandClass' => true];
            }
            throw new LqbUntranslatable("it calls or names {$token->text}, which is not translated");
        }
        throw new LqbUntranslatable('it uses ' . $this->describe($token) . ', which is not translated');
    }

    /** $this->name, and a model property's key through ->getKey() or ->{key name}. */
    private function property(): array
    {
        $arrow = $this->next();
        $name = $this->next();
        if (!$arrow->is(T_OBJECT_OPERATOR) || !$name->is(T_STRING)) {
            throw new LqbUntranslatable('it uses $this other than to read a property');
        }
        if ($this->peek()?->text === '(') {
            throw new LqbUntranslatable("it calls \$this->{$name->text}()");
        }
        if (!$this->class->hasProperty($name->text) || $this->class->getProperty($name->text)->isStatic()) {
            throw new LqbUntranslatable("it reads \$this->{$name->text}, which the class does not declare");
        }
        if (!$this->peek()?->is([T_OBJECT_OPERATOR, T_NULLSAFE_OBJECT_OPERATOR])) {
            return ['prop' => $name->text];
        }
        $model = $this->modelOf($this->class->getProperty($name->text));
        $nullsafe = $this->next()->is(T_NULLSAFE_OBJECT_OPERATOR) ? ['orNull' => true] : [];
        $member = $this->next();
        if ($model === null) {
            throw new LqbUntranslatable("it reads \$this->{$name->text}->{$member->text}, and \${$name->text} is not typed as an Eloquent model");
        }
        if ($member->text === 'getKey' && $this->peek()?->text === '(' && $this->peek(1)?->text === ')') {
            $this->at += 2;
            return ['modelKey' => $name->text] + $nullsafe;
        }
        if ($member->is(T_STRING) && $this->peek()?->text !== '(' && $member->text === (new $model())->getKeyName()) {
            return ['modelKey' => $name->text] + $nullsafe;
        }
        throw new LqbUntranslatable("it reads \$this->{$name->text}->{$member->text}, which the payload's ModelIdentifier does not carry (only the key)");
    }

    private function modelOf(ReflectionProperty $property): ?string
    {
        $type = $property->getType();
        if (!$type instanceof ReflectionNamedType || $type->isBuiltin()) {
            return null;
        }
        $name = ltrim($type->getName(), '\\');
        return class_exists($name) && is_subclass_of($name, LQB_MODEL) && (new ReflectionClass($name))->isInstantiable() ? $name : null;
    }

    private function stringLiteral(string $text): string
    {
        $inner = substr($text, 1, -1);
        if ($text[0] === "'") {
            return strtr($inner, ['\\\\' => '\\', "\\'" => "'"]);
        }
        if (str_contains($inner, '\\')) {
            throw new LqbUntranslatable('it uses a double-quoted string with escapes');
        }
        return $inner;
    }

    private function arrayLiteral(string $close): array
    {
        if ($close === ')') {
            $this->expect('(');
        }
        $items = [];
        while ($this->peek()?->text !== $close) {
            $items[] = $this->concat();
            if ($this->peek()?->is(T_DOUBLE_ARROW)) {
                throw new LqbUntranslatable('it returns an array with keys');
            }
            if ($this->peek()?->text === ',') {
                $this->at++;
            } elseif ($this->peek()?->text !== $close) {
                throw new LqbUntranslatable('it uses ' . ($this->peek() ? $this->describe($this->peek()) : 'nothing') . ' inside an array');
            }
        }
        $this->at++;
        return ['array' => $items];
    }

    /** now() and its additions, summed to seconds: Carbon's addMinutes(n) is n × 60 s, and so on. */
    private function now(): array
    {
        $this->expect('(');
        $this->expect(')');
        $units = ['second' => 1, 'minute' => 60, 'hour' => 3600, 'day' => 86400, 'week' => 604800];
        $seconds = 0;
        while ($this->peek()?->is(T_OBJECT_OPERATOR)) {
            $this->at++;
            $method = $this->next()->text;
            if (!preg_match('/^(add|sub)(Second|Minute|Hour|Day|Week)s?$/', $method, $m)) {
                throw new LqbUntranslatable("it calls now()->{$method}(), which is not translated");
            }
            $this->expect('(');
            $count = 1;
            if ($this->peek()?->text !== ')') {
                $argument = $this->unary();
                if (!isset($argument['lit']) || !is_int($argument['lit'])) {
                    throw new LqbUntranslatable("it calls now()->{$method}() with other than an int literal");
                }
                $count = $argument['lit'];
            }
            $this->expect(')');
            $seconds += ($m[1] === 'add' ? 1 : -1) * $count * $units[strtolower($m[2])];
        }
        return ['now' => ['addSeconds' => $seconds]];
    }
}
