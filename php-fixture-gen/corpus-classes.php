<?php
/**
 * corpus-classes.php — every class, interface and enum whose instances the PHP corpus holds.
 *
 * Required by php-corpus.php, which builds the corpus values from them, and by
 * bench-codec.php, so that unserialize() rebuilds the corpus as these very objects
 * rather than as __PHP_Incomplete_Class.
 *
 * Requiring this file loads Debian's Laravel 8.83 autoloaders and declares classes;
 * it does nothing else: it prints nothing, defines no variables or constants, and
 * leaves error_reporting() as it found it.
 *
 * Laravel's own classes (Illuminate\Bus\Queueable, Illuminate\Contracts\Database\ModelIdentifier,
 * Illuminate\Support\Collection, Illuminate\Database\Eloquent\Collection) are the real
 * ones from Debian's php-illuminate-* packages, loaded on first use, never stand-ins.
 */

declare(strict_types=1);

// ---------------------------------------------------------------------------
// Debian's Laravel 8.83 (/usr/share/php is on the include path).
// ---------------------------------------------------------------------------

namespace {
    require_once 'Illuminate/Bus/autoload.php';          // Illuminate\Bus\Queueable
    require_once 'Illuminate/Contracts/autoload.php';    // Illuminate\Contracts\Database\ModelIdentifier
    require_once 'Illuminate/Collections/autoload.php';  // Illuminate\Support\Collection
    require_once 'Illuminate/Database/autoload.php';     // Illuminate\Database\Eloquent\Collection
}

// ---------------------------------------------------------------------------
// App classes in their own namespaces, so that class names with backslashes
// (and private props mangled with them) appear in the corpus. The jobs use
// Laravel's real Queueable trait and put its real ModelIdentifier in place of models.
// ---------------------------------------------------------------------------

namespace App\Enums {
    enum Status: string
    {
        case Pending = 'pending';
        case Done = 'done';
        case Failed = 'failed';
    }

    enum Priority: int
    {
        case Low = 1;
        case High = 10;
        case Negative = -1;
        case Huge = 9223372036854775807;
    }
}

namespace App\Models {
    class User
    {
        public $exists = true;
        protected $attributes = [];
        private $hidden = ['password'];

        public function __construct(array $attributes = [])
        {
            $this->attributes = $attributes;
        }

        public function getKey(): mixed
        {
            return $this->attributes['id'] ?? null;
        }
    }
}

namespace App\Jobs {
    use App\Enums\Status;
    use Illuminate\Bus\Queueable;

    /** A job with trait props, typed props, a protected and private prop and an enum. */
    class ImportCsv
    {
        use Queueable;

        public $tries = 3;
        public int $timeout = 120;
        protected string $path;
        private array $rows = [];
        private ?Status $status = null;

        public function __construct(string $path, array $rows, ?Status $status)
        {
            $this->path = $path;
            $this->rows = $rows;
            $this->status = $status;
        }
    }

    /**
     * Like a job using SerializesModels: __serialize() emits the mangled prop
     * names itself and swaps models for ModelIdentifier objects.
     */
    class SendWelcomeEmail
    {
        use Queueable;

        public function __construct(public \App\Models\User $user, protected string $locale = 'en')
        {
        }

        public function __serialize(): array
        {
            $out = [];
            foreach ((array) $this as $key => $value) {
                $out[$key] = $value instanceof \App\Models\User
                    ? new \Illuminate\Contracts\Database\ModelIdentifier(\App\Models\User::class, $value->getKey(), [], 'mysql')
                    : $value;
            }
            return $out;
        }

        public function __unserialize(array $data): void
        {
            $this->locale = $data["\0*\0locale"] ?? 'en';
        }
    }
}

namespace App\Jobs\Deep\Nested\Name\Space {
    class Job
    {
        private $payload;
        protected $attempt = 0;

        public function __construct($payload, int $attempt)
        {
            $this->payload = $payload;
            $this->attempt = $attempt;
        }
    }
}

// ---------------------------------------------------------------------------
// Global namespace: plain classes and enums.
// ---------------------------------------------------------------------------

namespace {

use App\Enums\Status;

/**
 * A Serializable that remembers the payload it last handed to serialize().
 * Needed because a payload built with a nested serialize() call depends on the
 * surrounding serialize() (see LegacyWrapper), so describe() must report the
 * payload that was really written rather than call serialize() again.
 */
interface RecordsPayload
{
    public function lastPayload(): ?string;
}

// PHP 8.1+ raises E_DEPRECATED when it links a class that implements Serializable
// without __serialize()/__unserialize(); we want these two anyway (they are the only
// way to get a C: token). They are declared inside a function, so they are linked
// when it runs, not at compile time, with E_DEPRECATED masked for just that long:
// requiring this file prints nothing whatever the caller's error_reporting(), and
// leaves it unchanged. (A caller's error handler is still called, as PHP calls it
// for masked errors too; it should return false when error_reporting() excludes them.)
(static function (): void {
    $level = error_reporting();
    error_reporting($level & ~E_DEPRECATED);

    /** Old-style Serializable: serialize() returns the raw payload written between C:...:{ and }. */
    class LegacyToken implements Serializable, RecordsPayload
    {
        private ?string $last = null;

        public function __construct(public ?string $data)
        {
        }

        public function serialize()
        {
            return $this->last = $this->data;
        }

        public function lastPayload(): ?string
        {
            return $this->last;
        }

        public function unserialize($data)
        {
            $this->data = $data;
        }
    }

    /**
     * Serializable whose payload is itself a serialize() string. PHP runs that
     * inner serialize() with the OUTER call's state: its values take outer slot
     * numbers (so later r:/R: numbers skip past them) and its r:/R: may point at
     * outer values. unserialize() mirrors this inside Serializable::unserialize().
     */
    class LegacyWrapper implements Serializable, RecordsPayload
    {
        private ?string $last = null;

        public function __construct(public mixed $inner)
        {
        }

        public function serialize()
        {
            return $this->last = serialize($this->inner);
        }

        public function lastPayload(): ?string
        {
            return $this->last;
        }

        public function unserialize($data)
        {
            $this->inner = unserialize($data);
        }
    }

    error_reporting($level);
})();

/** Implements Serializable AND __serialize: __serialize wins, so this is an O:, not a C:. */
class BothWays implements Serializable
{
    public function __construct(public mixed $v)
    {
    }

    public function serialize()
    {
        return 'never used';
    }

    public function unserialize($data)
    {
    }

    public function __serialize(): array
    {
        return ['v' => $this->v, 'via' => '__serialize'];
    }

    public function __unserialize(array $data): void
    {
        $this->v = $data['v'];
    }
}

class Point
{
    public function __construct(public mixed $x = 0, public mixed $y = 0)
    {
    }
}

class Visibility
{
    public $pub;
    protected $prot;
    private $priv;

    public function __construct($pub, $prot, $priv)
    {
        $this->pub = $pub;
        $this->prot = $prot;
        $this->priv = $priv;
    }
}

#[AllowDynamicProperties]
class Bag
{
}

/** Non-ASCII class and property names are legal PHP; lengths in O: are bytes. */
class Café
{
    public $crème = 'brûlée';
    private $naïve = true;
}

class ParentBox
{
    private $secret;
    protected $shared;
    public $label;

    public function __construct($secret, $shared, $label)
    {
        $this->secret = $secret;
        $this->shared = $shared;
        $this->label = $label;
    }
}

/** Has its own private $secret next to the parent's: both "\0ParentBox\0secret" and "\0ChildBox\0secret" appear. */
class ChildBox extends ParentBox
{
    private $secret;
    public $extra;

    public function __construct($parentSecret, $childSecret, $shared, $label, $extra)
    {
        parent::__construct($parentSecret, $shared, $label);
        $this->secret = $childSecret;
        $this->extra = $extra;
    }
}

class GrandChildBox extends ChildBox
{
    private $secret = 'grandchild';
    protected $level = 3;
}

class Typed
{
    public int $id;
    public ?string $name;
    public float $ratio;
    public array $tags;
    public bool $active;
    public int|string $code;
    public ?Typed $next;
    public ?Status $status;
    protected iterable $items;
    private ?float $secret;
    public string $withDefault = 'default';
    public readonly int $ro;
    public mixed $anything;

    /** Only the props in $init get set; the rest stay uninitialized, which serialize() leaves out. */
    public static function make(array $init, array $unset = []): self
    {
        $o = new self();
        foreach ($init as $prop => $value) {
            $o->$prop = $value;
        }
        foreach ($unset as $prop) {
            unset($o->$prop);
        }
        return $o;
    }
}

/** __serialize() returns an arbitrary array (any keys, any nesting). */
class Magic
{
    public function __construct(private array $payload)
    {
    }

    /** Lets a generator create the object first and fill it afterwards (so the payload can contain it). */
    public function fill(array $payload): void
    {
        $this->payload = $payload;
    }

    public function __serialize(): array
    {
        return $this->payload;
    }

    public function __unserialize(array $data): void
    {
        $this->payload = $data;
    }
}

/** __serialize() data that contains PHP references (R:) to the object's own props. */
class MagicRefs
{
    public $value;
    public $alias;

    public function __construct($value)
    {
        $this->value = $value;
        $this->alias = &$this->value;
    }

    public function __serialize(): array
    {
        return ['value' => &$this->value, 'alias' => &$this->alias, 7 => $this->value];
    }

    public function __unserialize(array $data): void
    {
        $this->value = $data['value'];
        $this->alias = &$this->value;
    }
}

/** Has __sleep AND __serialize: __serialize wins. */
class SleepButSerialize
{
    public $a = 1;
    public $b = 2;

    public function __sleep(): array
    {
        return ['a'];
    }

    public function __serialize(): array
    {
        return [0 => 'from __serialize', 'b' => $this->b];
    }

    public function __unserialize(array $data): void
    {
    }
}

/** __sleep() returns whichever names it was built with (public, protected, private, mangled, missing). */
class Sleepy
{
    public $a;
    protected $b;
    private $c;
    public $d;
    private array $only;

    public function __construct(array $only, $a, $b, $c, $d)
    {
        $this->only = $only;
        $this->a = $a;
        $this->b = $b;
        $this->c = $c;
        $this->d = $d;
    }

    /**
     * $only is set whenever php-corpus.php serializes, but an object rebuilt by unserialize()
     * (bench-codec.php) has it only if __sleep() listed it; then it names the props it has.
     */
    public function __sleep(): array
    {
        return $this->only ?? array_keys(get_object_vars($this));
    }

    public function __wakeup(): void
    {
    }
}

/** Its own private $c shadows Sleepy's: "c" in __sleep() finds "\0SleepyChild\0c"; Sleepy's needs the mangled name. */
class SleepyChild extends Sleepy
{
    private $c = 'child-c';
    private ?int $e = null;
    public int $typedUninit;
}

class Node
{
    public $name;
    public $children = [];
    public $parent = null;
    public $peer = null;

    public function __construct($name)
    {
        $this->name = $name;
    }
}

enum Suit
{
    case Hearts;
    case Diamonds;
    case Clubs;
    case Spades;
}

enum Size: int
{
    case Small = 0;
    case Large = 2;
    case Max = PHP_INT_MAX;
}

enum Color: string
{
    case Red = 'red';
    case Empty = '';
    case Unicode = 'ünï😀';
}

}
