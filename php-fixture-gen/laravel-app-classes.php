<?php
/**
 * The application side of laravel-fixtures.php: models, enums, jobs, events, listeners,
 * notifications and mailables shaped like a Laravel 8 app's. Only App\* classes live here;
 * every trait, base class and interface they use is Laravel's own (Debian's 8.83 packages),
 * loaded by laravel-app.php before this file is required.
 *
 * Nothing here has side effects when required: it only declares classes.
 */
declare(strict_types=1);

namespace App\Enums {
    enum OrderStatus: string
    {
        case Pending = 'pending';
        case Shipped = 'shipped';
        case Cancelled = 'cancelled';
    }

    enum Priority: int
    {
        case Low = 1;
        case High = 10;
        case Urgent = 99;
    }

    /** A pure (unbacked) enum: PHP serializes it the same way, E:len:"Class:Case". */
    enum Channel
    {
        case Email;
        case Sms;
    }
}

namespace App\Models {
    use Illuminate\Database\Eloquent\Model;
    use Illuminate\Notifications\Notifiable;

    class User extends Model
    {
        use Notifiable;

        public $timestamps = false;
        protected $guarded = [];

        public function posts()
        {
            return $this->hasMany(Post::class);
        }

        public function routeNotificationForMail($notification = null)
        {
            return $this->email;
        }
    }

    class Post extends Model
    {
        public $timestamps = false;
        protected $guarded = [];

        public function comments()
        {
            return $this->hasMany(Comment::class);
        }
    }

    class Comment extends Model
    {
        public $timestamps = false;
        protected $guarded = [];
    }

    /** String primary key: its ModelIdentifier id is a string. */
    class Order extends Model
    {
        public $timestamps = false;
        public $incrementing = false;
        protected $keyType = 'string';
        protected $guarded = [];
    }
}

namespace App\Jobs {
    use App\Enums\Channel;
    use App\Enums\OrderStatus;
    use App\Enums\Priority;
    use App\Models\Order;
    use App\Models\User;
    use DateTimeInterface;
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldBeEncrypted;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Database\Eloquent\Collection as EloquentCollection;
    use Illuminate\Queue\InteractsWithQueue;
    use Illuminate\Queue\SerializesModels;
    use Illuminate\Support\Carbon;
    use Illuminate\Support\Collection;

    /** An ordinary job: public, protected and private properties of several types. */
    class ProcessPodcast implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public function __construct(
            public int $podcastId,
            public string $title,
            protected array $options = [],
            private ?float $ratio = null,
        ) {
        }

        public function handle(): void
        {
        }
    }

    class OptimizePodcast implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public function __construct(public int $podcastId, public string $preset = 'default')
        {
        }

        public function handle(): void
        {
        }
    }

    class ReleasePodcast implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public function __construct(public int $podcastId, public bool $notify = true)
        {
        }

        public function handle(): void
        {
        }
    }

    /** Every retry option a job can carry: tries, backoff (array, via method), timeout, retryUntil, maxExceptions, failOnTimeout. */
    class ChargeCustomer implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public $tries = 5;
        public $timeout = 120;
        public $maxExceptions = 3;
        public $failOnTimeout = true;

        public function __construct(public string $customer, public int $cents)
        {
        }

        /** @return int[] */
        public function backoff(): array
        {
            return [5, 30, 120];
        }

        public function retryUntil(): DateTimeInterface
        {
            return Carbon::parse('2035-06-30 12:00:00', 'UTC');
        }

        public function handle(): void
        {
        }
    }

    /** The same options as properties: backoff as an array property, an int timeout, tries = 0 (unlimited). */
    class SyncInventory implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public $tries = 0;
        public $timeout = 30;
        public $backoff = [1, 2, 4, 8];
        public $maxExceptions = 1;

        public function __construct(public string $sku)
        {
        }

        public function handle(): void
        {
        }
    }

    /** A single-int backoff property, and a displayName() that differs from the class. */
    class GenerateReport implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public $backoff = 10;

        public function __construct(public string $report, public int $year)
        {
        }

        public function displayName(): string
        {
            return "Report {$this->report} ({$this->year})";
        }

        public function handle(): void
        {
        }
    }

    /** Numbers that Redis's cjson re-encodes differently (%.14g) in the reserved copy. */
    class CrunchNumbers implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public $tries = 12345678901234567;
        public $timeout = 2.5;

        public function __construct(public int $big, public float $ratio)
        {
        }

        public function handle(): void
        {
        }
    }

    /** SerializesModels: a single model (with loaded relations) and a collection of models. */
    class SyncUserProfile implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public function __construct(public User $user, public EloquentCollection $followers, public Order $order, public string $source = 'api')
        {
        }

        public function handle(): void
        {
        }
    }

    /** No SerializesModels: PHP serializes the whole Eloquent model, attributes and all. */
    class ArchiveOrder implements ShouldQueue
    {
        use InteractsWithQueue, Queueable;

        public function __construct(public Order $order)
        {
        }

        public function handle(): void
        {
        }
    }

    /** PHP 8.1 enums as properties: backed string, backed int, pure, and null. */
    class ChangeOrderStatus implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public function __construct(
            public string $orderId,
            public OrderStatus $status,
            public Priority $priority,
            public Channel $channel,
            public ?OrderStatus $previous = null,
            public array $history = [],
        ) {
        }

        public function handle(): void
        {
        }
    }

    /** Date properties: Illuminate\Support\Carbon in two zones, a CarbonImmutable and a plain DateTimeImmutable. */
    class ScheduleMeeting implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public function __construct(
            public Carbon $startsAt,
            public Carbon $localStart,
            public \Carbon\CarbonImmutable $endsAt,
            public \DateTimeImmutable $createdAt,
        ) {
        }

        public function handle(): void
        {
        }
    }

    /** An Illuminate\Support\Collection property (assoc items, nested arrays) next to a list Collection. */
    class ImportRows implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public function __construct(public Collection $rows, public Collection $columns)
        {
        }

        public function handle(): void
        {
        }
    }

    /** Unicode, slashes and control characters in string properties. */
    class TranslateText implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public function __construct(public string $text, public array $targets, protected string $note = '')
        {
        }

        public function handle(): void
        {
        }
    }

    /** ShouldBeEncrypted: with an Encrypter bound, Laravel writes the Encrypter's output instead of serialize(). */
    class ChargeCard implements ShouldQueue, ShouldBeEncrypted
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public $tries = 2;

        public function __construct(public string $cardToken, public int $cents, public string $currency = 'EUR')
        {
        }

        public function handle(): void
        {
        }
    }

    /** Dispatched ->through([...]) Laravel's own queue middleware: the objects are serialized in the `middleware` property. */
    class ReindexSearch implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public function __construct(public string $index)
        {
        }

        public function handle(): void
        {
        }
    }

    /** Explicit Horizon-style tags. */
    class RenderVideo implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public function __construct(public int $videoId, public string $format)
        {
        }

        public function tags(): array
        {
            return ['render', "video:{$this->videoId}"];
        }

        public function handle(): void
        {
        }
    }

    /** Listed as silenced in the Horizon emulation's config. */
    class PingHealthcheck implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public function __construct(public string $target = 'db')
        {
        }

        public function handle(): void
        {
        }
    }
}

namespace App\Handlers {
    /** Target of a string job (`push('App\Handlers\LegacyImport@fire', $data)`): called as fire($job, $data). */
    class LegacyImport
    {
        public function fire($job, $data): void
        {
        }
    }
}

namespace App\Events {
    use App\Enums\OrderStatus;
    use App\Models\Order;
    use App\Models\User;
    use Illuminate\Queue\SerializesModels;

    class OrderShipped
    {
        use SerializesModels;

        public function __construct(public Order $order, public string $note, public bool $express = false)
        {
        }
    }

    class UserRegistered
    {
        use SerializesModels;

        public function __construct(public User $user, public string $referrer, public OrderStatus $firstStatus = OrderStatus::Pending)
        {
        }
    }

    /** An event without models or SerializesModels. */
    class CacheCleared
    {
        public function __construct(public array $tags, public int $count)
        {
        }
    }
}

namespace App\Listeners {
    use App\Events\CacheCleared;
    use App\Events\OrderShipped;
    use App\Events\UserRegistered;
    use DateTimeInterface;
    use Illuminate\Contracts\Queue\ShouldBeEncrypted;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;
    use Illuminate\Support\Carbon;

    class SendShipmentNotification implements ShouldQueue
    {
        use InteractsWithQueue;

        public function handle(OrderShipped $event): void
        {
        }

        /** A second method, registered as 'SendShipmentNotification@onExpress'. */
        public function onExpress(OrderShipped $event): void
        {
        }
    }

    /** Listener options that Laravel copies onto CallQueuedListener, and a queue of its own. */
    class AuditRegistration implements ShouldQueue
    {
        use InteractsWithQueue;

        public $queue = 'audit';
        public $tries = 4;
        public $timeout = 45;
        public $maxExceptions = 2;

        /** @return int[] */
        public function backoff(): array
        {
            return [3, 9];
        }

        public function retryUntil(): DateTimeInterface
        {
            return Carbon::parse('2035-01-01 00:00:00', 'UTC');
        }

        public function handle(UserRegistered $event): void
        {
        }
    }

    /** $delay set: Laravel queues it with laterOn (delay 0: lands in :delayed, ready at once). */
    class FollowUpRegistration implements ShouldQueue
    {
        use InteractsWithQueue;

        public $delay = 0;

        public function handle(UserRegistered $event): void
        {
        }
    }

    /** viaQueue() picks the queue. */
    class WarmCache implements ShouldQueue
    {
        public function viaQueue(): string
        {
            return 'cache';
        }

        public function handle(CacheCleared $event): void
        {
        }
    }

    /** A listener for a string-named event with several arguments. */
    class LogLogin implements ShouldQueue
    {
        public function handle(int $userId, string $ip, array $context = []): void
        {
        }
    }

    class AuditPayment implements ShouldQueue, ShouldBeEncrypted
    {
        public function handle(OrderShipped $event): void
        {
        }
    }
}

namespace App\Notifications {
    use App\Models\Order;
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldBeEncrypted;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Notifications\Notification;

    class InvoicePaid extends Notification implements ShouldQueue
    {
        use Queueable;

        public $tries = 3;

        public function __construct(public Order $order, public int $amount, public string $memo = '')
        {
        }

        public function via($notifiable): array
        {
            return ['mail'];
        }
    }

    /** Two channels: Laravel queues one job per channel, all with one notification id. */
    class OrderStatusChanged extends Notification implements ShouldQueue
    {
        use Queueable;

        public function __construct(public string $orderId, public string $status)
        {
        }

        public function via($notifiable): array
        {
            return ['mail', 'database'];
        }

        public function viaQueues(): array
        {
            return ['mail' => 'mail-queue', 'database' => 'db-queue'];
        }
    }

    class WeeklyDigest extends Notification implements ShouldQueue
    {
        use Queueable;

        public $timeout = 60;

        public function __construct(public array $headlines)
        {
        }

        public function via($notifiable): array
        {
            return ['mail'];
        }
    }

    class SecurityAlert extends Notification implements ShouldQueue, ShouldBeEncrypted
    {
        use Queueable;

        public function __construct(public string $ip, public string $device)
        {
        }

        public function via($notifiable): array
        {
            return ['mail'];
        }
    }
}

namespace App\Mail {
    use App\Models\Order;
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldBeEncrypted;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Mail\Mailable;
    use Illuminate\Queue\SerializesModels;

    class OrderShippedMail extends Mailable implements ShouldQueue
    {
        use Queueable, SerializesModels;

        public function __construct(public Order $order, public string $greeting = 'Hello')
        {
        }

        public function build()
        {
            return $this->view('emails.orders.shipped');
        }
    }

    class WelcomeMail extends Mailable implements ShouldQueue
    {
        use Queueable, SerializesModels;

        public $tries = 3;
        public $timeout = 20;

        public function __construct(public string $name)
        {
        }

        public function build()
        {
            return $this->view('emails.welcome');
        }
    }

    class PasswordResetMail extends Mailable implements ShouldQueue, ShouldBeEncrypted
    {
        use Queueable, SerializesModels;

        public function __construct(public string $token)
        {
        }

        public function build()
        {
            return $this->view('emails.reset');
        }
    }
}
