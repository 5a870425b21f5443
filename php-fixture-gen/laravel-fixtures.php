<?php
/**
 * Has real Laravel 8.83 (Debian's packages) queue jobs of every kind through its own RedisQueue
 * into a real Redis, reads back the exact bytes it stored, has Laravel's RedisQueue pop each one
 * (recording the reserved string Redis's Lua/cjson wrote) and deletes it, and writes one JSON
 * record per job to DIR/payloads.jsonl. See fixtures/laravel/README.md for the record fields.
 *
 * Usage: php php-fixture-gen/laravel-fixtures.php [DIR=fixtures/laravel]
 * Environment: REDIS_HOST (127.0.0.1), REDIS_PORT (6379).
 *
 * Everything is pushed under a Redis key prefix unique to the run and the prefix is emptied at
 * the end, so Redis is left as it was. Each record's `expect` is filled from the PHP objects
 * (what was constructed and what Laravel queued, seen through its JobQueued event), never by
 * parsing the payload.
 */
declare(strict_types=1);

require_once __DIR__ . '/laravel-app.php';

use App\Enums\Channel;
use App\Enums\OrderStatus;
use App\Enums\Priority;
use App\Models\Order;
use App\Models\Post;
use App\Models\User;
use Illuminate\Container\Container;
use Illuminate\Contracts\Bus\Dispatcher as BusDispatcher;
use Illuminate\Contracts\Queue\ShouldBeEncrypted;
use Illuminate\Database\Eloquent\Collection as EloquentCollection;
use Illuminate\Database\Eloquent\Model;
use Illuminate\Encryption\Encrypter;
use Illuminate\Events\CallQueuedListener;
use Illuminate\Mail\SendQueuedMailable;
use Illuminate\Notifications\AnonymousNotifiable;
use Illuminate\Notifications\ChannelManager;
use Illuminate\Notifications\SendQueuedNotifications;
use Illuminate\Queue\CallQueuedClosure;
use Illuminate\Queue\Events\JobQueued;
use Illuminate\Queue\Queue as BaseQueue;
use Illuminate\Queue\SerializesModels;
use Illuminate\Support\Carbon;
use Illuminate\Support\Collection;

/**
 * Fixed APP_KEYs and their ciphers. Each key is base64 of sha256("laravel-queue-bridge fixture key
 * <cipher>"), so it can be re-derived (main() checks that it still is).
 */
const KEY_CBC = ['appKey' => 'base64:guiBF1X/fuXE55GTGMavHPEb6bzrFtMVy7QDBtoNw/o=', 'cipher' => 'AES-256-CBC'];
const KEY_GCM = ['appKey' => 'base64:rP6UV0nuSUT6oHeqi+QSdFQtvlDAzv1cSA3cQHhNqr8=', 'cipher' => 'AES-256-GCM'];

/** Properties that carry queue options: reported as maxTries/timeout/... rather than in props. */
const OPTION_PROPS = ['tries', 'timeout', 'backoff', 'maxExceptions', 'failOnTimeout', 'retryUntil'];

/** The classes the Horizon emulation treats as silenced (Horizon's `horizon.silenced` config). */
const HORIZON_SILENCED = [App\Jobs\PingHealthcheck::class];

/** A moment safely in the past: delayed jobs pushed for it are ready at once. */
function past(): Carbon
{
    return Carbon::parse('2024-01-01 00:00:00', 'UTC');
}

// ---------------------------------------------------------------------------------------------
// Rendering PHP values as the `expect` JSON values
// ---------------------------------------------------------------------------------------------

/** Every initialized, non-static property of $object, plain names, subclass first. */
function object_props(object $object): array
{
    $out = [];
    for ($class = new ReflectionClass($object); $class; $class = $class->getParentClass()) {
        foreach ($class->getProperties() as $p) {
            if ($p->isStatic() || array_key_exists($p->getName(), $out) || $p->getDeclaringClass()->getName() !== $class->getName()) {
                continue;
            }
            $p->setAccessible(true);
            if ($p->isInitialized($object)) {
                $out[$p->getName()] = $p->getValue($object);
            }
        }
    }
    return $out;
}

/** Names of the properties a class gets from its traits (Queueable, InteractsWithQueue, ...). */
function trait_property_names(string $class): array
{
    $names = [];
    foreach (class_uses_recursive($class) as $trait) {
        foreach ((new ReflectionClass($trait))->getProperties() as $p) {
            $names[$p->getName()] = true;
        }
    }
    return $names;
}

/** The command's own properties: not from traits, not the queue options. */
function own_props(object $command): array
{
    $fromTraits = trait_property_names(get_class($command));
    $out = [];
    foreach (object_props($command) as $name => $value) {
        if (!isset($fromTraits[$name]) && !in_array($name, OPTION_PROPS, true)) {
            $out[$name] = render($value);
        }
    }
    return $out;
}

function render(mixed $value, int $depth = 0): mixed
{
    if ($depth > 12) {
        throw new LogicException('value nested too deeply to render');
    }
    if (is_array($value)) {
        return array_map(fn ($v) => render($v, $depth + 1), $value);
    }
    if (!is_object($value)) {
        return $value;
    }
    if ($value instanceof UnitEnum) {
        return ['enum' => get_class($value), 'case' => $value->name];
    }
    if ($value instanceof DateTimeInterface) {
        return ['date' => $value->format('Y-m-d H:i:s.u'), 'timezone' => $value->getTimezone()->getName()];
    }
    if ($value instanceof Model) {
        return ['class' => get_class($value), 'id' => $value->getKey()];
    }
    if ($value instanceof EloquentCollection && $value->every(fn ($m) => $m instanceof Model)) {
        return ['class' => $value->isEmpty() ? null : get_class($value->first()), 'id' => $value->map->getKey()->values()->all()];
    }
    if ($value instanceof Collection) {
        return ['collection' => get_class($value), 'items' => render($value->all(), $depth + 1)];
    }
    if ($value instanceof Closure || $value instanceof \Laravel\SerializableClosure\SerializableClosure) {
        return ['closure' => get_class($value)];
    }
    return ['class' => get_class($value), 'props' => array_map(fn ($v) => render($v, $depth + 1), object_props($value))];
}

/** How SerializesModels will write a model or collection of models: a ModelIdentifier's four fields. */
function model_identifier(Model|EloquentCollection $value): array
{
    if ($value instanceof Model) {
        return ['class' => get_class($value), 'id' => $value->getKey(), 'relations' => array_values($value->getQueueableRelations()), 'connection' => $value->getQueueableConnection()];
    }
    return ['class' => $value->isEmpty() ? null : get_class($value->first()), 'id' => $value->map->getKey()->values()->all(), 'relations' => array_values($value->getQueueableRelations()), 'connection' => $value->getQueueableConnection()];
}

/**
 * Finds the models SerializesModels turns into ModelIdentifiers: direct property values of
 * objects whose class uses SerializesModels, searched through arrays and other objects.
 * Returns [path => identifier], path like "user", "data.0.order", "notification.order".
 */
function model_identifiers(mixed $value, string $path = '', int $depth = 0): array
{
    $found = [];
    if ($depth > 8 || $value instanceof Model || $value instanceof Closure) {
        return $found;
    }
    if (is_array($value)) {
        foreach ($value as $k => $v) {
            $found += model_identifiers($v, ltrim("$path.$k", '.'), $depth + 1);
        }
        return $found;
    }
    if (!is_object($value) || $value instanceof UnitEnum || $value instanceof DateTimeInterface) {
        return $found;
    }
    $serializesModels = in_array(SerializesModels::class, class_uses_recursive(get_class($value)), true);
    foreach (object_props($value) as $name => $v) {
        $p = ltrim("$path.$name", '.');
        if ($serializesModels && ($v instanceof Model || ($v instanceof EloquentCollection && $v->every(fn ($m) => $m instanceof Model)))) {
            $found[$p] = model_identifier($v);
        } elseif (!$value instanceof Collection || $name === 'items') {
            $found += model_identifiers($v, $p, $depth + 1);
        }
    }
    return $found;
}

/** The queue options as the command carries them (backoff as set, retryUntil as a UNIX time). */
function job_options(object $command): array
{
    $backoff = method_exists($command, 'backoff') ? $command->backoff() : ($command->backoff ?? null);
    $retryUntil = method_exists($command, 'retryUntil') ? $command->retryUntil() : ($command->retryUntil ?? null);
    return [
        'maxTries' => $command->tries ?? null,
        'timeout' => $command->timeout ?? null,
        'backoff' => $backoff,
        'retryUntil' => $retryUntil instanceof DateTimeInterface ? $retryUntil->getTimestamp() : $retryUntil,
        'maxExceptions' => $command->maxExceptions ?? null,
        'failOnTimeout' => $command->failOnTimeout ?? false,
    ];
}

function is_encrypted_command(object $command): bool
{
    return $command instanceof ShouldBeEncrypted || (isset($command->shouldBeEncrypted) && $command->shouldBeEncrypted);
}

/** PHP's account of one queued command. $extra (from the case) is merged last. */
function expect_for(mixed $command, string $kind, array $extra): array
{
    if (is_string($command)) {   // a string job: `job` is the handler, `data` the raw data
        return ['kind' => $kind, 'job' => $command, 'displayName' => explode('@', $command)[0]] + $extra;
    }
    $expect = [
        'kind' => $kind,
        'commandName' => get_class($command),
        'displayName' => method_exists($command, 'displayName') ? $command->displayName() : get_class($command),
        'props' => own_props($command),
    ] + job_options($command);
    $ids = model_identifiers($command);
    $single = array_values(array_filter($ids, fn ($i) => !is_array($i['id'])));
    $many = array_values(array_filter($ids, fn ($i) => is_array($i['id'])));
    if ($single) {
        $expect['model'] = $single[0];
    }
    if ($many) {
        $expect['models'] = $many[0];
    }
    if ($ids) {
        $expect['modelIdentifiers'] = $ids;
    }
    if (isset($command->delay)) {
        $expect['delay'] = render($command->delay);
    }
    // Queueable's settings other than delay and chained, where the command has them set.
    $queueable = [];
    foreach (['connection', 'queue', 'chainConnection', 'chainQueue', 'afterCommit', 'middleware', 'chainCatchCallbacks'] as $prop) {
        if (property_exists($command, $prop) && $command->$prop !== null && $command->$prop !== []) {
            $queueable[$prop] = render($command->$prop);
        }
    }
    if ($queueable) {
        $expect['queueable'] = $queueable;
    }
    if (is_encrypted_command($command)) {
        $expect['encrypted'] = true;
    }
    return array_merge($expect, $extra);
}

// ---------------------------------------------------------------------------------------------
// Horizon emulation: what Laravel\Horizon\JobPayload::prepare() adds, as a createPayloadUsing hook
// ---------------------------------------------------------------------------------------------

function horizon_type(mixed $job): string
{
    return match (true) {
        $job instanceof \Illuminate\Broadcasting\BroadcastEvent => 'broadcast',
        $job instanceof CallQueuedListener => 'event',
        $job instanceof SendQueuedMailable => 'mail',
        $job instanceof SendQueuedNotifications => 'notification',
        default => 'job',
    };
}

/** The objects Horizon looks at for tags: the event, mailable or notification for Laravel's wrappers. */
function horizon_targets(object $job): array
{
    return match (true) {
        $job instanceof CallQueuedListener => array_values(array_filter($job->data, 'is_object')),
        $job instanceof SendQueuedMailable => [$job->mailable],
        $job instanceof SendQueuedNotifications => [$job->notification],
        default => [$job],
    };
}

/** Explicit tags() of the targets, else "Class:key" of every model in their properties. */
function horizon_tags(mixed $job): array
{
    if (!is_object($job)) {
        return [];
    }
    $targets = horizon_targets($job);
    $explicit = [];
    foreach ($targets as $target) {
        if (method_exists($target, 'tags')) {
            array_push($explicit, ...$target->tags());
        }
    }
    if ($explicit) {
        return array_values(array_unique($explicit));
    }
    $tags = [];
    foreach ($targets as $target) {
        foreach (object_props($target) as $value) {
            $models = $value instanceof Model ? [$value] : ($value instanceof EloquentCollection ? $value->all() : []);
            foreach ($models as $model) {
                $tags[] = get_class($model) . ':' . $model->getKey();
            }
        }
    }
    return array_values(array_unique($tags));
}

function horizon_silenced(mixed $job): bool
{
    $underlying = match (true) {
        $job instanceof CallQueuedListener => $job->class,
        $job instanceof SendQueuedMailable => get_class($job->mailable),
        $job instanceof SendQueuedNotifications => get_class($job->notification),
        is_object($job) => get_class($job),
        default => (string) $job,
    };
    return in_array($underlying, HORIZON_SILENCED, true);
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

final class FixtureRun
{
    /** @var array<int, array> */
    public array $records = [];
    /** @var array<int, JobQueued> JobQueued events of the current case, in push order */
    private array $queued = [];
    /** @var array<int, array> what each createPayloadUsing hook of the current case returned, in order */
    public array $hookLog = [];
    /** @var array{appKey: string, cipher: string}|null */
    public ?array $key = null;
    private Redis $raw;

    public function __construct(public Container $container, public string $prefix, public string $version)
    {
        $this->raw = new Redis();
        $this->raw->connect(getenv('REDIS_HOST') ?: '127.0.0.1', (int) (getenv('REDIS_PORT') ?: 6379));
        $container['events']->listen(JobQueued::class, function (JobQueued $e) {
            $this->queued[] = $e;
        });
    }

    public function connection(): \Illuminate\Queue\RedisQueue
    {
        return $this->container['queue']->connection();
    }

    /** Our keys (full names, prefix included), sorted. */
    public function ourKeys(): array
    {
        $keys = [];
        $it = null;
        while (($batch = $this->raw->scan($it, $this->prefix . '*', 1000)) !== false) {
            array_push($keys, ...$batch);
        }
        sort($keys);
        return $keys;
    }

    /**
     * Runs $push (which queues one or more jobs through Laravel), then for every job it queued:
     * reads the stored bytes straight from Redis, pops it with Laravel's RedisQueue, deletes it,
     * and records it. $push returns either the expect extras for all its jobs, or a list with one
     * array of extras per job (in push order; an optional 'suffix' names the record).
     */
    public function capture(string $name, string $kind, callable $push, array $extra = []): void
    {
        if ($left = $this->ourKeys()) {
            throw new LogicException("$name: keys left over before the push: " . implode(', ', $left));
        }
        $this->queued = [];
        $this->hookLog = [];
        $returned = $push() ?? [];
        $perJob = array_is_list($returned) && $returned !== [] ? $returned : array_fill(0, max(1, count($this->queued)), $returned);
        if (count($this->queued) === 0 || count($perJob) !== count($this->queued)) {
            throw new LogicException("$name: queued " . count($this->queued) . ' jobs, expected ' . count($perJob));
        }

        // What Laravel stored, read with a plain client: ready lists and :delayed zsets.
        $stored = [];   // id => [queue, key, payload, score|null]
        foreach ($this->ourKeys() as $full) {
            $key = substr($full, strlen($this->prefix));
            if (!preg_match('/^queues:(.+?)(:delayed|:notify|:reserved)?$/', $key, $m)) {
                throw new LogicException("$name: unexpected key $key");
            }
            $suffix = $m[2] ?? '';
            if ($suffix === ':notify') {
                continue;
            }
            if ($suffix === ':reserved') {
                throw new LogicException("$name: something was reserved before the pop");
            }
            $entries = $suffix === ':delayed'
                ? $this->raw->zRange($full, 0, -1, true)
                : array_fill_keys($this->raw->lRange($full, 0, -1), null);
            foreach ($entries as $payload => $score) {
                $payload = (string) $payload;
                $id = json_decode($payload, true, 512, JSON_THROW_ON_ERROR)['id'];
                $stored[$id] = ['queue' => $m[1], 'key' => $key, 'payload' => $payload, 'score' => $score];
            }
        }

        // Laravel pops every queue until empty (migrating :delayed first), and deletes what it popped.
        $reserved = [];   // original payload => reserved string
        $connection = $this->connection();
        foreach (array_unique(array_column($stored, 'queue')) as $queue) {
            while ($job = $connection->pop($queue)) {
                $reserved[$job->getRawBody()] = $job->getReservedJob();
                $job->delete();
            }
        }

        foreach ($this->queued as $i => $event) {
            $entry = $stored[$event->id] ?? throw new LogicException("$name: job {$event->id} not found in Redis");
            $jobExtra = $perJob[$i];
            $suffix = $jobExtra['suffix'] ?? (count($this->queued) > 1 ? (string) ($i + 1) : null);
            unset($jobExtra['suffix']);
            if ($this->hookLog) {
                $jobExtra['hook'] = $this->hookLog[$i] ?? throw new LogicException("$name: no hook result for job $i");
            }
            // Queue::push(Closure) reports the bare Closure in JobQueued; Laravel wrapped it with
            // CallQueuedClosure::create() to build the payload, so describe that wrapper.
            $command = $event->job instanceof Closure ? CallQueuedClosure::create($event->job) : $event->job;
            $expect = expect_for($command, $kind, array_merge($extra, $jobExtra));
            $record = ['name' => $suffix === null ? $name : "$name#$suffix", 'laravel' => $this->version, 'queue' => $entry['queue'], 'key' => $entry['key']];
            if ($entry['score'] !== null) {
                $record['score'] = (int) $entry['score'];
            }
            $record['payload'] = $entry['payload'];
            $record['reserved'] = $reserved[$entry['payload']] ?? throw new LogicException("$name: Laravel did not pop job {$event->id}");
            if ($this->key !== null && (!empty($expect['encrypted']) || !empty($expect['signed']))) {
                $record += $this->key;
            }
            $record['expect'] = $expect;
            $this->records[] = $record;
        }
        if ($left = array_filter($this->ourKeys(), fn ($k) => !str_ends_with($k, ':notify'))) {
            throw new LogicException("$name: left in Redis after the pops: " . implode(', ', $left));
        }
        // The notify lists hold one token per ready job and pop takes one each: they must be gone too.
        if ($left = $this->ourKeys()) {
            throw new LogicException("$name: notify tokens left: " . implode(', ', $left));
        }
    }

    public function useKey(array $key): void
    {
        laravel_use_app_key($this->container, $key['appKey'], $key['cipher']);
        $this->key = $key;
    }

    /** Deletes whatever is left under our prefix (nothing, unless a case failed half-way). */
    public function cleanup(): int
    {
        $keys = $this->ourKeys();
        if ($keys) {
            $this->raw->del($keys);
        }
        return count($keys);
    }
}

// ---------------------------------------------------------------------------------------------
// Self-checks on the records
// ---------------------------------------------------------------------------------------------

function check_record(array $r): void
{
    $name = $r['name'];
    $payload = json_decode($r['payload'], true, 512, JSON_THROW_ON_ERROR);
    $reserved = json_decode($r['reserved'], true, 512, JSON_THROW_ON_ERROR);
    $fail = fn (string $why) => throw new LogicException("$name: $why");
    if ($payload['attempts'] !== 0) {
        $fail('attempts in the payload is not 0');
    }
    if ($reserved['attempts'] !== 1) {
        $fail('attempts in the reserved string is not 1');
    }
    if ($reserved['id'] !== $payload['id'] || $reserved['uuid'] !== $payload['uuid']) {
        $fail('reserved string is not the same job');
    }
    if (!str_starts_with($r['key'], 'queues:') || ($r['key'] !== "queues:{$r['queue']}" && $r['key'] !== "queues:{$r['queue']}:delayed")) {
        $fail('key does not match queue');
    }
    if (str_ends_with($r['key'], ':delayed') !== isset($r['score'])) {
        $fail('score must be present exactly for delayed jobs');
    }
    $expect = $r['expect'];
    if (isset($expect['job'])) {   // string job
        if ($payload['job'] !== $expect['job'] || $payload['data'] !== $expect['data']) {
            $fail('string job or data differ from what was pushed');
        }
        return;
    }
    if ($payload['job'] !== 'Illuminate\Queue\CallQueuedHandler@call' || $payload['data']['commandName'] !== $expect['commandName'] || $payload['displayName'] !== $expect['displayName']) {
        $fail('commandName/displayName differ from the PHP object');
    }
    $command = $payload['data']['command'];
    if (!empty($expect['encrypted'])) {
        if (str_starts_with($command, 'O:')) {
            $fail('encrypted command starts with O:');
        }
        $envelope = json_decode(base64_decode($command, true), true, 512, JSON_THROW_ON_ERROR);
        if (array_keys($envelope) !== ['iv', 'value', 'mac', 'tag']) {
            $fail('unexpected encryption envelope keys: ' . implode(',', array_keys($envelope)));
        }
        $key = base64_decode(substr($r['appKey'], strlen('base64:')), true);
        $command = (new Encrypter($key, $r['cipher']))->decrypt($command);
        if (!is_string($command) || !str_starts_with($command, 'O:')) {
            $fail('decrypting did not give a serialized object');
        }
    } elseif (!str_starts_with($command, 'O:')) {
        $fail('plain command does not start with O:');
    }
    // Closures inside are signed with the APP_KEY the app had when it queued them (or not at all):
    // unserializing needs that same secret, or none (a set secret refuses unsigned closures).
    \Laravel\SerializableClosure\SerializableClosure::setSecretKey(
        empty($expect['signed']) ? null : base64_decode(substr($r['appKey'], strlen('base64:')), true)
    );
    $object = unserialize($command);
    if (get_class($object) !== $expect['commandName']) {
        $fail('command unserializes to ' . get_class($object));
    }
    if (isset($expect['chained'])) {
        $chained = array_map(fn ($s) => get_class(unserialize($s)), $object->chained);
        if ($chained !== $expect['chained']) {
            $fail('chained jobs differ: ' . implode(',', $chained));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------------------------

function seed(): array
{
    $ada = User::create(['name' => 'Ada Lovelace', 'email' => 'ada@example.com']);
    $zoe = User::create(['name' => 'Zoë Ångström', 'email' => 'zoe@example.com']);
    $li = User::create(['name' => '李小龍', 'email' => 'li@example.com']);
    foreach (['First post', 'Second post'] as $title) {
        $post = Post::create(['user_id' => $ada->id, 'title' => $title]);
        $post->comments()->create(['body' => "On $title"]);
    }
    $order = Order::create(['id' => 'ord_7YF2K9', 'user_id' => $ada->id, 'status' => 'shipped', 'total_cents' => 4200]);
    return [
        'ada' => User::with('posts.comments')->find($ada->id),   // relations: posts, posts.comments
        'zoe' => User::find($zoe->id),
        'li' => User::find($li->id),
        'order' => Order::find($order->id),
    ];
}

function run_cases(FixtureRun $run, array $m): void
{
    $c = $run->container;
    $conn = $run->connection();
    /** @var \Illuminate\Bus\Dispatcher $bus */
    $bus = $c->make(BusDispatcher::class);
    /** @var \Illuminate\Events\Dispatcher $events */
    $events = $c['events'];
    /** @var ChannelManager $notifications */
    $notifications = $c->make(ChannelManager::class);
    $queueFactory = $c['queue'];

    // --- plain jobs ---------------------------------------------------------------------------
    $run->capture('job/queue-push', 'job', function () {
        \Illuminate\Queue\Capsule\Manager::push(new App\Jobs\ProcessPodcast(1, 'Episode 1', ['bitrate' => 128, 'tags' => ['tech', 'history']], 0.75));
    });
    $run->capture('job/push-on', 'job', function () use ($conn) {
        $conn->pushOn('podcasts', new App\Jobs\ProcessPodcast(2, 'Episode 2'));
    });
    $run->capture('job/bus-dispatch', 'job', function () use ($bus) {
        $bus->dispatch((new App\Jobs\ProcessPodcast(3, 'Episode 3', [], null))->onQueue('podcasts'));
    });
    $run->capture('job/options-methods', 'job', function () use ($bus) {
        $bus->dispatch((new App\Jobs\ChargeCustomer('cus_42', 1999))->onQueue('billing'));
    });
    $run->capture('job/options-props', 'job', function () use ($conn) {
        $conn->pushOn('inventory', new App\Jobs\SyncInventory('SKU-001'));
    });
    $run->capture('job/display-name-int-backoff', 'job', function () use ($conn) {
        $conn->pushOn('reports', new App\Jobs\GenerateReport('sales', 2024));
    });
    $run->capture('job/cjson-numbers', 'job', function () use ($conn) {
        $conn->pushOn('numbers', new App\Jobs\CrunchNumbers(PHP_INT_MAX, 0.1));
    });
    $run->capture('job/models', 'job', function () use ($conn, $m) {
        $followers = new EloquentCollection([$m['zoe'], $m['li']]);
        $conn->pushOn('users', new App\Jobs\SyncUserProfile($m['ada'], $followers, $m['order']));
    });
    $run->capture('job/models-empty-collection', 'job', function () use ($conn, $m) {
        $conn->pushOn('users', new App\Jobs\SyncUserProfile($m['zoe'], new EloquentCollection(), $m['order'], 'web'));
    });
    $run->capture('job/model-without-serializes-models', 'job', function () use ($conn, $m) {
        $conn->pushOn('orders', new App\Jobs\ArchiveOrder($m['order']));
    });
    $run->capture('job/enums', 'job', function () use ($conn) {
        $conn->pushOn('orders', new App\Jobs\ChangeOrderStatus('ord_7YF2K9', OrderStatus::Shipped, Priority::High, Channel::Email, OrderStatus::Pending, [OrderStatus::Pending, Priority::Low, OrderStatus::Pending]));
    });
    $run->capture('job/dates', 'job', function () use ($conn) {
        $conn->pushOn('calendar', new App\Jobs\ScheduleMeeting(
            Carbon::parse('2025-03-30 01:30:00.123456', 'UTC'),
            Carbon::parse('2025-03-30 03:30:00', 'Europe/Paris'),
            \Carbon\CarbonImmutable::parse('2025-03-30 02:45:00', 'America/New_York'),
            new DateTimeImmutable('2025-01-02 03:04:05.000006', new DateTimeZone('+05:30')),
        ));
    });
    $run->capture('job/collection', 'job', function () use ($conn) {
        $conn->pushOn('imports', new App\Jobs\ImportRows(
            collect(['r1' => ['sku' => 'A-1', 'qty' => 3, 'price' => 9.99], 'r2' => ['sku' => 'B/2', 'qty' => 0, 'price' => null]]),
            collect(['sku', 'qty', 'price']),
        ));
    });
    $run->capture('job/unicode', 'job', function () use ($conn) {
        $conn->pushOn('i18n', new App\Jobs\TranslateText(
            "Grüße, 世界! 🌍👩‍👩‍👧 café (e\u{301}) — «quotes» ‘single’ / slash \\ backslash \"double\"",
            ['ar' => 'مرحبا بالعالم', 'ja' => '日本語テキスト', 'emoji' => '🚀✨', 'ctrl' => "tab\tnewline\nnul\0bell\x07", 'separators' => "line\u{2028}para\u{2029}end", 'bmp-edge' => "\u{FFFD}\u{FEFF}"],
            'ünïcödé note',
        ));
    });
    $run->capture('job/middleware', 'job', function () use ($bus) {
        $bus->dispatch((new App\Jobs\ReindexSearch('products'))->onQueue('search')->through([
            (new \Illuminate\Queue\Middleware\WithoutOverlapping('reindex-products', 30))->expireAfter(600),
            new \Illuminate\Queue\Middleware\ThrottlesExceptions(5, 10),
        ]));
    });
    $run->capture('job/after-commit', 'job', function () use ($bus) {
        $bus->dispatch((new App\Jobs\ProcessPodcast(4, 'Episode 4'))->onQueue('podcasts')->afterCommit());
    });
    $run->capture('job/bulk', 'job', function () use ($conn) {
        $conn->bulk([new App\Jobs\ProcessPodcast(5, 'Bulk A'), new App\Jobs\OptimizePodcast(5, 'fast')], '', 'bulk');
        return [['suffix' => '1'], ['suffix' => '2']];
    });

    // --- string jobs ----------------------------------------------------------------------------
    $run->capture('string/handler-with-data', 'string-job', function () use ($conn) {
        $data = ['file' => '/imports/2024/users.csv', 'rows' => 3, 'ratio' => 0.5, 'who' => 'Zoë'];
        $conn->push('App\Handlers\LegacyImport@fire', $data, 'legacy');
        return ['data' => $data];
    });
    $run->capture('string/empty-array-data', 'string-job', function () use ($conn) {
        $conn->push('App\Handlers\LegacyImport@fire', [], 'legacy');
        return ['data' => []];
    });
    $run->capture('string/no-method', 'string-job', function () use ($conn) {
        $conn->push('App\Handlers\LegacyImport', 'raw string data', 'legacy');
        return ['data' => 'raw string data'];
    });

    // --- queued listeners (the events Dispatcher) -----------------------------------------------
    $listen = function (string $name, string $event, array $listeners, callable $fire, array $perJob) use ($run, $events) {
        foreach ($listeners as $l) {
            $events->listen($event, $l);
        }
        try {
            $run->capture($name, 'listener', function () use ($fire, $perJob) {
                $fire();
                return $perJob;
            });
        } finally {
            $events->forget($event);
        }
    };
    $shipped = new App\Events\OrderShipped($m['order'], 'Left the warehouse — 🚚', true);
    $listen('listener/model', App\Events\OrderShipped::class, [App\Listeners\SendShipmentNotification::class], fn () => $events->dispatch($shipped),
        ['listener' => App\Listeners\SendShipmentNotification::class . '@handle', 'event' => render($shipped)]);
    $listen('listener/two-methods', App\Events\OrderShipped::class,
        [App\Listeners\SendShipmentNotification::class, App\Listeners\SendShipmentNotification::class . '@onExpress'], fn () => $events->dispatch($shipped), [
            ['suffix' => 'handle', 'listener' => App\Listeners\SendShipmentNotification::class . '@handle', 'event' => render($shipped)],
            ['suffix' => 'onExpress', 'listener' => App\Listeners\SendShipmentNotification::class . '@onExpress', 'event' => render($shipped)],
        ]);
    $registered = new App\Events\UserRegistered($m['ada'], 'newsletter/2024', OrderStatus::Pending);
    $listen('listener/options', App\Events\UserRegistered::class, [App\Listeners\AuditRegistration::class], fn () => $events->dispatch($registered),
        ['listener' => App\Listeners\AuditRegistration::class . '@handle', 'event' => render($registered)]);
    $cleared = new App\Events\CacheCleared(['users', 'posts', 'ünï'], 3);
    $listen('listener/via-queue', App\Events\CacheCleared::class, [App\Listeners\WarmCache::class], fn () => $events->dispatch($cleared),
        ['listener' => App\Listeners\WarmCache::class . '@handle', 'event' => render($cleared)]);
    $args = [42, '203.0.113.9', ['agent' => 'Mozilla/5.0 (X11; Linux x86_64)', 'remember' => true]];
    $listen('listener/string-event', 'user.login', [App\Listeners\LogLogin::class], fn () => $events->dispatch('user.login', $args),
        ['listener' => App\Listeners\LogLogin::class . '@handle', 'event' => ['name' => 'user.login', 'args' => render($args)]]);

    // --- notifications (ChannelManager::send, what $user->notify() and Notification::send call) --
    $invoice = new App\Notifications\InvoicePaid($m['order'], 4200, 'Merci — 感谢');
    $run->capture('notification/mail', 'notification', function () use ($notifications, $m, $invoice) {
        $notifications->send($m['ada'], $invoice);
        return ['notifiables' => [render($m['ada'])], 'notification' => get_class($invoice), 'channels' => ['mail']];
    });
    $run->capture('notification/two-channels-via-queues', 'notification', function () use ($notifications, $m) {
        $n = new App\Notifications\OrderStatusChanged('ord_7YF2K9', 'shipped');
        $notifications->send($m['zoe'], $n);
        $base = ['notifiables' => [render($m['zoe'])], 'notification' => get_class($n)];
        return [$base + ['suffix' => 'mail', 'channels' => ['mail']], $base + ['suffix' => 'database', 'channels' => ['database']]];
    });
    $run->capture('notification/many-notifiables', 'notification', function () use ($notifications, $m) {
        $n = new App\Notifications\WeeklyDigest(['Laravel 8.83 released', 'Queues explained']);
        $notifications->send(new EloquentCollection([$m['zoe'], $m['li']]), $n);
        return [
            ['suffix' => 'zoe', 'notifiables' => [render($m['zoe'])], 'notification' => get_class($n), 'channels' => ['mail']],
            ['suffix' => 'li', 'notifiables' => [render($m['li'])], 'notification' => get_class($n), 'channels' => ['mail']],
        ];
    });
    $run->capture('notification/anonymous', 'notification', function () use ($notifications) {
        $n = new App\Notifications\WeeklyDigest(['On-call rota']);
        $anonymous = (new AnonymousNotifiable())->route('mail', 'ops@example.com');
        $notifications->send($anonymous, $n);
        return ['notifiables' => [render($anonymous)], 'notification' => get_class($n), 'channels' => ['mail']];
    });
    $run->capture('notification/on-queue-locale', 'notification', function () use ($notifications, $m) {
        $n = (new App\Notifications\InvoicePaid($m['order'], 100, 'Danke'))->onQueue('notifications');
        $notifications->locale('fr')->send($m['li'], $n);
        $notifications->locale(null);
        return ['notifiables' => [render($m['li'])], 'notification' => get_class($n), 'channels' => ['mail'], 'locale' => 'fr'];
    });

    // --- mailables (Mailable::queue / later: SendQueuedMailable) --------------------------------
    $run->capture('mailable/model', 'mailable', function () use ($queueFactory, $m) {
        $mail = (new App\Mail\OrderShippedMail($m['order'], 'Olá'))->to('ada@example.com', 'Ada Lovelace')->subject('Your order shipped ✓');
        $mail->queue($queueFactory);
        return ['mailable' => get_class($mail)];
    });
    $run->capture('mailable/on-queue-options', 'mailable', function () use ($queueFactory, $m) {
        $mail = (new App\Mail\WelcomeMail('Zoë'))->to($m['zoe'])->cc('team@example.com')->replyTo('help@example.com', 'Help Desk')->onQueue('mail');
        $mail->queue($queueFactory);
        return ['mailable' => get_class($mail)];
    });
    if (class_exists(\Illuminate\View\Factory::class)) {
        // Mail::to(...)->queue(...) through a real Mailer: it also stamps the mailer's name on the mailable.
        $run->capture('mailable/via-mailer', 'mailable', function () use ($queueFactory, $c) {
            $views = new \Illuminate\View\Factory(new \Illuminate\View\Engines\EngineResolver(), new \Illuminate\View\FileViewFinder(new \Illuminate\Filesystem\Filesystem(), []), $c['events']);
            $mailer = new \Illuminate\Mail\Mailer('smtp', $views, new Swift_Mailer(new Swift_NullTransport()), $c['events']);
            $mailer->setQueue($queueFactory);
            $mail = new App\Mail\WelcomeMail('Ωmega');
            $mailer->to('omega@example.com')->bcc('audit@example.com')->queue($mail);
            return ['mailable' => get_class($mail)];
        });
    }

    // --- closures (CallQueuedClosure) -----------------------------------------------------------
    if (laravel_has_foundation()) {
        $run->capture('closure/queue-push', 'closure', function () use ($conn) {
            $orderId = 'ord_7YF2K9';
            $conn->pushOn('closures', static function () use ($orderId) {
                return "ship $orderId";
            });
            return ['signed' => false];
        });
        $run->capture('closure/dispatch-helper', 'closure', function () {
            $amount = 12.5;
            dispatch(function () use ($amount) {
                return $amount * 2;
            })->onQueue('closures');
            return ['signed' => false];
        });
    } else {
        fwrite(STDERR, "warning: Illuminate\\Foundation (Debian's php-laravel-framework) is not installed: no closure records\n");
    }

    // --- chains ---------------------------------------------------------------------------------
    $run->capture('chain/queueable', 'chain', function () use ($bus) {
        $next = [new App\Jobs\OptimizePodcast(7, 'hq'), new App\Jobs\ReleasePodcast(7)];
        $bus->dispatch((new App\Jobs\ProcessPodcast(7, 'Chained'))->onQueue('chains')->chain($next));
        return ['chained' => array_map('get_class', $next)];
    });
    $run->capture('chain/all-on-queue', 'chain', function () use ($bus) {
        $next = [new App\Jobs\OptimizePodcast(8), new App\Jobs\ReleasePodcast(8, false)];
        $bus->dispatch((new App\Jobs\ProcessPodcast(8, 'All on one queue'))->allOnConnection('default')->allOnQueue('chains')->chain($next));
        return ['chained' => array_map('get_class', $next)];
    });
    if (laravel_has_foundation()) {
        $run->capture('chain/bus-chain-catch', 'chain', function () use ($bus) {
            $jobs = [new App\Jobs\ProcessPodcast(9, 'Bus::chain'), new App\Jobs\OptimizePodcast(9), new App\Jobs\ReleasePodcast(9)];
            $bus->chain($jobs)->onQueue('chains')->catch(static function (Throwable $e) {
                return $e->getMessage();
            })->dispatch();
            return ['chained' => array_map('get_class', array_slice($jobs, 1))];
        });
    }

    // --- delayed (later): :delayed zset, popped after Laravel migrates it ------------------------
    $run->capture('delayed/later-past-datetime', 'job', function () use ($conn) {
        $conn->laterOn('reports', past(), new App\Jobs\GenerateReport('inventory', 2023));
        return ['pushedDelay' => render(past())];
    });
    $run->capture('delayed/later-zero-seconds', 'job', function () use ($conn) {
        $conn->laterOn('reports', 0, new App\Jobs\GenerateReport('zero', 2024));
        return ['pushedDelay' => 0];
    });
    $run->capture('delayed/later-date-interval', 'job', function () use ($conn) {
        $conn->laterOn('reports', new DateInterval('PT0S'), new App\Jobs\GenerateReport('interval', 2024));
        return ['pushedDelay' => 'PT0S'];
    });
    $run->capture('delayed/bus-delay-property', 'job', function () use ($bus) {
        $bus->dispatch((new App\Jobs\ProcessPodcast(10, 'Delayed'))->onQueue('podcasts')->delay(past()));
    });
    $events->listen(App\Events\UserRegistered::class, App\Listeners\FollowUpRegistration::class);
    try {
        $run->capture('delayed/listener', 'listener', function () use ($events, $registered) {
            $events->dispatch($registered);
            return ['listener' => App\Listeners\FollowUpRegistration::class . '@handle', 'event' => render($registered), 'pushedDelay' => 0];
        });
    } finally {
        $events->forget(App\Events\UserRegistered::class);
    }
    $run->capture('delayed/notification', 'notification', function () use ($notifications, $m) {
        $n = (new App\Notifications\InvoicePaid($m['order'], 999))->delay(past());
        $notifications->send($m['ada'], $n);
        return ['notifiables' => [render($m['ada'])], 'notification' => get_class($n), 'channels' => ['mail']];
    });
    $run->capture('delayed/mailable', 'mailable', function () use ($queueFactory, $m) {
        $mail = (new App\Mail\OrderShippedMail($m['order']))->to('ada@example.com')->onQueue('mail');
        $mail->later(past(), $queueFactory);
        return ['mailable' => get_class($mail), 'pushedDelay' => render(past())];
    });

    // --- createPayloadUsing hooks -----------------------------------------------------------------
    $withHooks = function (array $hooks, callable $body) use ($run) {
        foreach ($hooks as $hook) {
            BaseQueue::createPayloadUsing($hook);
        }
        try {
            $body();
        } finally {
            BaseQueue::createPayloadUsing(null);
        }
    };
    $logged = fn (callable $hook) => function (...$args) use ($hook, $run) {
        $extra = $hook(...$args);
        $run->hookLog[] = $extra;
        return $extra;
    };
    $withHooks([$logged(fn () => ['traceId' => '4bf92f3577b34da6a3ce929d0e0e4736'])], function () use ($run, $conn) {
        $run->capture('hook/trace-id', 'job', function () use ($conn) {
            $conn->pushOn('traced', new App\Jobs\ProcessPodcast(11, 'Traced'));
        });
        $run->capture('hook/trace-id-string-job', 'string-job', function () use ($conn) {
            $conn->push('App\Handlers\LegacyImport@fire', ['traced' => true], 'traced');
            return ['data' => ['traced' => true]];
        });
    });
    // Two hooks: each one's keys are merged in turn; the second sees the payload the first made.
    // `hook` records the two merged, as Laravel merges them (a later hook's key replaces in place).
    $hookParts = [];
    $withHooks([
        function (...$args) use (&$hookParts) {
            return $hookParts[] = ['traceId' => '00f067aa0ba902b7', 'tenant' => 'acme'];
        },
        function ($connection, $queue, $payload) use (&$hookParts, $run) {
            $extra = ['tenant' => 'acme-eu', 'span' => "queued:{$payload['displayName']}@$connection/$queue", 'sawTraceId' => $payload['traceId'] ?? null];
            $run->hookLog[] = array_merge(array_pop($hookParts), $extra);
            return $extra;
        },
    ], function () use ($run, $conn) {
        $run->capture('hook/two-hooks', 'job', function () use ($conn) {
            $conn->pushOn('traced', new App\Jobs\GenerateReport('traced', 2025));
        });
    });

    // --- Horizon-style payloads (emulated: Horizon is not installed) ----------------------------
    $horizon = $logged(function ($connection, $queue, $payload) {
        $job = $payload['data']['command'] ?? $payload['job'];
        return [
            'type' => horizon_type($job),
            'tags' => horizon_tags($job),
            'silenced' => horizon_silenced($job),
            'pushedAt' => str_replace(',', '.', (string) microtime(true)),
        ];
    });
    $withHooks([$horizon], function () use ($run, $conn, $events, $notifications, $queueFactory, $m, $shipped) {
        $h = ['horizonEmulated' => true];
        $run->capture('horizon/job-model-tags', 'job', function () use ($conn, $m) {
            $conn->pushOn('horizon', new App\Jobs\SyncUserProfile($m['ada'], new EloquentCollection([$m['zoe'], $m['li']]), $m['order']));
        }, $h);
        $run->capture('horizon/job-explicit-tags', 'job', function () use ($conn) {
            $conn->pushOn('horizon', new App\Jobs\RenderVideo(77, 'webm'));
        }, $h);
        $run->capture('horizon/silenced', 'job', function () use ($conn) {
            $conn->pushOn('horizon', new App\Jobs\PingHealthcheck());
        }, $h);
        $events->listen(App\Events\OrderShipped::class, App\Listeners\SendShipmentNotification::class);
        try {
            $run->capture('horizon/listener', 'listener', function () use ($events, $shipped) {
                $events->dispatch($shipped);
                return ['listener' => App\Listeners\SendShipmentNotification::class . '@handle', 'event' => render($shipped)];
            }, $h);
        } finally {
            $events->forget(App\Events\OrderShipped::class);
        }
        $run->capture('horizon/notification', 'notification', function () use ($notifications, $m) {
            $n = (new App\Notifications\InvoicePaid($m['order'], 300))->onQueue('horizon');
            $notifications->send($m['zoe'], $n);
            return ['notifiables' => [render($m['zoe'])], 'notification' => get_class($n), 'channels' => ['mail']];
        }, $h);
        $run->capture('horizon/mailable', 'mailable', function () use ($queueFactory, $m) {
            $mail = (new App\Mail\OrderShippedMail($m['order']))->to('ada@example.com')->onQueue('horizon');
            $mail->queue($queueFactory);
            return ['mailable' => get_class($mail)];
        }, $h);
    });

    // --- with an APP_KEY: encrypted commands, signed closures ------------------------------------
    $run->useKey(KEY_CBC);
    $run->capture('encrypted/cbc', 'encrypted-job', function () use ($conn) {
        $conn->pushOn('secure', new App\Jobs\ChargeCard('tok_visa_4242', 1999));
    });
    $run->capture('encrypted/cbc-chain', 'encrypted-job', function () use ($bus) {
        $next = [new App\Jobs\ProcessPodcast(12, 'after payment'), new App\Jobs\ReleasePodcast(12)];
        $bus->dispatch((new App\Jobs\ChargeCard('tok_chain', 500, 'USD'))->onQueue('secure')->chain($next));
        return ['chained' => array_map('get_class', $next)];
    });
    $events->listen(App\Events\OrderShipped::class, App\Listeners\AuditPayment::class);
    try {
        $run->capture('encrypted/cbc-listener', 'listener', function () use ($events, $shipped) {
            $events->dispatch($shipped);
            return ['listener' => App\Listeners\AuditPayment::class . '@handle', 'event' => render($shipped)];
        });
    } finally {
        $events->forget(App\Events\OrderShipped::class);
    }
    $run->capture('encrypted/cbc-mailable', 'mailable', function () use ($queueFactory) {
        $mail = (new App\Mail\PasswordResetMail('reset-7f3a9c'))->to('ada@example.com')->onQueue('secure');
        $mail->queue($queueFactory);
        return ['mailable' => get_class($mail)];
    });
    if (laravel_has_foundation()) {
        $run->capture('closure/signed', 'closure', function () use ($conn) {
            $conn->pushOn('closures', static function () {
                return 'signed with the APP_KEY';
            });
            return ['signed' => true];
        });
    }
    $run->useKey(KEY_GCM);
    $run->capture('encrypted/gcm', 'encrypted-job', function () use ($conn) {
        $conn->pushOn('secure', new App\Jobs\ChargeCard('tok_mastercard_5555', 4200, 'GBP'));
    });
    $run->capture('encrypted/gcm-delayed', 'encrypted-job', function () use ($conn) {
        $conn->laterOn('secure', past(), new App\Jobs\ChargeCard('tok_later', 1, 'JPY'));
        return ['pushedDelay' => render(past())];
    });
    $run->capture('encrypted/gcm-notification', 'notification', function () use ($notifications, $m) {
        $n = (new App\Notifications\SecurityAlert('198.51.100.7', 'Firefox on Linux'))->onQueue('secure');
        $notifications->send($m['ada'], $n);
        return ['notifiables' => [render($m['ada'])], 'notification' => get_class($n), 'channels' => ['mail']];
    });
}

function main(array $argv): int
{
    $dir = rtrim($argv[1] ?? 'fixtures/laravel', '/');
    if (!is_dir($dir) && !mkdir($dir, 0777, true)) {
        throw new RuntimeException("cannot create $dir");
    }
    date_default_timezone_set('UTC');
    foreach ([KEY_CBC, KEY_GCM] as $key) {
        if ($key['appKey'] !== 'base64:' . base64_encode(hash('sha256', "laravel-queue-bridge fixture key {$key['cipher']}", true))) {
            throw new LogicException("the {$key['cipher']} key is not the documented derivation");
        }
    }
    $prefix = 'lqb-fixtures:' . bin2hex(random_bytes(6)) . ':';
    putenv("REDIS_PREFIX=$prefix");
    $app = laravel_app();
    laravel_migrate($app['db']);
    $run = new FixtureRun($app['container'], $prefix, laravel_version());
    try {
        run_cases($run, seed());
    } finally {
        BaseQueue::createPayloadUsing(null);
        $leftover = $run->cleanup();
    }
    if ($leftover !== 0 || $run->ourKeys() !== []) {
        throw new LogicException("$leftover keys were left under $prefix");
    }

    $names = [];
    $lines = '';
    $kinds = [];
    foreach ($run->records as $record) {
        if (isset($names[$record['name']])) {
            throw new LogicException("duplicate record name {$record['name']}");
        }
        $names[$record['name']] = true;
        check_record($record);
        $kinds[$record['expect']['kind']] = ($kinds[$record['expect']['kind']] ?? 0) + 1;
        $lines .= json_encode($record, JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR) . "\n";
    }
    file_put_contents("$dir/payloads.jsonl", $lines);
    fprintf(STDOUT, "wrote %d records (Laravel %s, PHP %s) to %s/payloads.jsonl\n", count($run->records), $run->version, PHP_VERSION, $dir);
    ksort($kinds);
    foreach ($kinds as $kind => $n) {
        fprintf(STDOUT, "  %-14s %3d\n", $kind, $n);
    }
    return 0;
}

exit(main($argv));
