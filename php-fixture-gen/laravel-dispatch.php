<?php
/**
 * Real Laravel (8.83) puts work on the bridge's Redis, for the Node worker to consume, and runs
 * the failed-job commands.
 *
 *   php laravel-dispatch.php KIND [JSON]
 *
 * Job kinds, dispatched the way an application does (dispatch($job): Foundation's PendingDispatch
 * -> Illuminate\Bus\Dispatcher -> RedisQueue push/later):
 *   record         {"n":1,"label":"x","ratio":0.5,"items":[1,2],"flag":true}  RecordJob
 *   flaky          {"n":1,"failTimes":1}                                      FlakyJob
 *   flaky-backoff  {"n":1,"failTimes":1}                                      FlakyBackoffJob
 *   slow           {"n":1,"seconds":1.5}                                      SlowJob
 *   failing        {"n":1,"message":"failing"}                                FailingJob
 *   interleaved    {"n":1,"every":11}  FlakyJob (failTimes 0: it succeeds at once) with a
 *                  RecordJob as every EVERY-th job (n+i), in one push order: a queue where one
 *                  class was moved to Node among jobs still PHP's
 * each also taking
 *   "count": N     push N jobs, n = n .. n+N-1 (default 1)
 *   "queue": Q     onQueue(Q) (default: QUEUE_NAME)
 *   "delay": S     delay(S) seconds: RedisQueue::later, into :delayed
 *   "chain": [{..}]  record only: ->chain() of RecordJobs built from these objects (n, label,
 *                  ratio, items, flag, and "queue" for the link's own onQueue)
 *   "payload": {..}  keys added to the payload by a createPayloadUsing hook, as an app's own
 *                  hooks add them (OpenTelemetry's PHP instrumentation adds "traceparent")
 *   "tries", "timeout", "backoff" (int or [ints]), "maxExceptions", "failOnTimeout": set on the
 *                  job's public property (RecordJob, SlowJob and FailingJob declare some; for a
 *                  property the class lacks it is an error)
 *   listener       {"id":1,"name":"thing","count":N,"queue":Q}: ThingHappened::dispatch() through
 *                  the events Dispatcher, which queues App\Listeners\Bridge\RecordListener as
 *                  Laravel's CallQueuedListener (ids id .. id+N-1)
 *   notification   {"userId":1,"invoiceId":7,"count":N,"queue":Q}: Laravel's ChannelManager::send (what
 *                  $user->notify() calls) of App\Notifications\InvoicePaid(invoiceId) to an
 *                  App\Models\User with that key: one SendQueuedNotifications per notifiable and
 *                  channel ('mail'); with "count", invoices invoiceId .. invoiceId+N-1
 *   mailable       {"orderId":5,"to":"ada@example.com","count":N,"queue":Q}: Mailable::queue() of
 *                  App\Mail\OrderShippedMail(orderId) through the queue manager: SendQueuedMailable
 * For each pushed job, one line on standard output:
 *   {"id": <payload id>, "uuid": <payload uuid>, "queue": <queue name>, "class": <displayName>}
 *
 * Commands:
 *   retry          {"ids":["<uuid>",...]} or {"all":true} (also {"queue":"name"}): Laravel's own
 *                  Illuminate\Queue\Console\RetryCommand (queue:retry): pushes each stored payload
 *                  again with attempts 0 and forgets the record. One line per job pushed back:
 *                  {"id": <payload id>, "uuid": <failed job id = payload uuid>, "queue": .., "class": ..}
 *                  The command's own messages go to standard error; exit status 1 when an id
 *                  was not found.
 *   failed         prints the failer's all() as one JSON array (newest first; each record:
 *                  id (the uuid), connection, queue, payload, exception, failed_at)
 *   pause          {"connection":"redis","queue":"default","all":false}: what Laravel 12.40+'s
 *                  QueueManager::pause does, through this app's real cache store (8.83's RedisStore,
 *                  whose format 12.x keeps): forever("illuminate:queue:paused:{connection}:{queue}",
 *                  true); with "all", 13.25+'s pauseAll: forever("illuminate:queues:paused", true)
 *   resume         the same keys forgotten, as QueueManager::resume / resumeAll
 *   paused         prints {"paused": bool}: QueueManager::isPaused's reading, (bool) of the global
 *                  switch, else of the queue's own
 *   restart        Laravel's RestartCommand (queue:restart): stores the time in the cache under
 *                  illuminate:queue:restart. Prints {"restart": <time>}.
 *
 * Environment: REDIS_HOST, REDIS_PORT, REDIS_PREFIX, QUEUE_NAME, LQB_FAILED_DB, LQB_CACHE_PREFIX
 * (see worker-app.php). Exit status 2 for a usage error.
 */
declare(strict_types=1);

require __DIR__ . '/worker-app.php';

use App\Events\Bridge\ThingHappened;
use App\Jobs\Bridge\FailingJob;
use App\Jobs\Bridge\FlakyBackoffJob;
use App\Jobs\Bridge\FlakyJob;
use App\Jobs\Bridge\RecordJob;
use App\Jobs\Bridge\SlowJob;
use App\Listeners\Bridge\RecordListener;
use Illuminate\Queue\Console\RestartCommand;
use Illuminate\Queue\Console\RetryCommand;
use Illuminate\Queue\Events\JobQueued;
use Illuminate\Queue\Events\JobRetryRequested;
use Illuminate\Queue\Queue;
use Symfony\Component\Console\Input\ArrayInput;
use Symfony\Component\Console\Output\StreamOutput;

function lqb_usage(string $message): never
{
    fwrite(STDERR, $message . "\nusage: php laravel-dispatch.php record|flaky|flaky-backoff|slow|failing|listener|notification|mailable|retry|failed|pause|resume|paused|restart [JSON]\n");
    exit(2);
}

function lqb_print(array $line): void
{
    fwrite(STDOUT, json_encode($line, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION) . "\n");
}

$kind = $argv[1] ?? lqb_usage('missing KIND');
$options = [];
if (isset($argv[2]) && $argv[2] !== '') {
    try {
        $options = json_decode($argv[2], true, 512, JSON_THROW_ON_ERROR);
    } catch (JsonException $e) {
        lqb_usage('JSON argument: ' . $e->getMessage());
    }
    if (!is_array($options) || ($options !== [] && array_is_list($options))) {
        lqb_usage('JSON argument must be an object');
    }
}

$app = App\Bridge\boot();
$defaultQueue = getenv('QUEUE_NAME') ?: 'default';

// One output line per queued job: the uuid and displayName from the payload as it is created
// (a hook that adds nothing to it), the id from Laravel's JobQueued event after the push.
$pending = null;
Queue::createPayloadUsing(function ($connection, $queue, array $payload) use (&$pending, $options) {
    $pending = ['uuid' => $payload['uuid'] ?? null, 'queue' => $queue, 'class' => $payload['displayName'] ?? null];
    // "payload": keys an app's own createPayloadUsing hook adds (OpenTelemetry's traceparent, say).
    return is_array($options['payload'] ?? null) ? $options['payload'] : [];
});
$app['events']->listen(JobQueued::class, function (JobQueued $event) use (&$pending, $defaultQueue) {
    $queue = $pending['queue'] ?? null;
    $queue = is_string($queue) ? preg_replace('/^queues:/', '', $queue) : $defaultQueue;
    lqb_print(['id' => $event->id, 'uuid' => $pending['uuid'] ?? null, 'queue' => $queue, 'class' => $pending['class'] ?? null]);
    $pending = null;
});

$count = (int) ($options['count'] ?? 1);
if ($count < 0) {
    lqb_usage('"count" must be >= 0');
}
$n = (int) ($options['n'] ?? 1);

/** Applies the common options to a job, then dispatches it as an app does. */
$dispatch = function (object $job) use ($options): void {
    foreach (['tries', 'timeout', 'backoff', 'maxExceptions', 'failOnTimeout'] as $property) {
        if (array_key_exists($property, $options)) {
            if (!property_exists($job, $property)) {
                lqb_usage(get_class($job) . " has no public \${$property}");
            }
            $job->{$property} = $options[$property];
        }
    }
    if (isset($options['queue'])) {
        $job->onQueue((string) $options['queue']);
    }
    if (isset($options['delay'])) {
        $job->delay($options['delay'] + 0);
    }
    dispatch($job);
};

switch ($kind) {
    case 'record':
        $record = fn (array $o, int $n) => new RecordJob(
            $n,
            (string) ($o['label'] ?? 'x'),
            (float) ($o['ratio'] ?? 0.5),
            (array) ($o['items'] ?? [1, 2]),
            array_key_exists('flag', $o) ? ($o['flag'] === null ? null : (bool) $o['flag']) : null,
        );
        $links = array_map(function (array $o) use ($record) {
            $link = $record($o, (int) ($o['n'] ?? 1));
            return isset($o['queue']) ? $link->onQueue((string) $o['queue']) : $link;
        }, (array) ($options['chain'] ?? []));
        for ($i = 0; $i < $count; $i++) {
            $job = $record($options, $n + $i);
            $dispatch($links ? $job->chain($links) : $job);
        }
        break;

    case 'flaky':
    case 'flaky-backoff':
        $class = $kind === 'flaky' ? FlakyJob::class : FlakyBackoffJob::class;
        for ($i = 0; $i < $count; $i++) {
            $dispatch(new $class($n + $i, (int) ($options['failTimes'] ?? 1)));
        }
        break;

    case 'slow':
        for ($i = 0; $i < $count; $i++) {
            $dispatch(new SlowJob($n + $i, (float) ($options['seconds'] ?? 1.0)));
        }
        break;

    case 'interleaved':
        $every = max(1, (int) ($options['every'] ?? 11));
        for ($i = 0; $i < $count; $i++) {
            $dispatch($i % $every === $every - 1 ? new RecordJob($n + $i, 'moved', 0.5, [1], null) : new FlakyJob($n + $i, 0));
        }
        break;

    case 'failing':
        for ($i = 0; $i < $count; $i++) {
            $dispatch(new FailingJob($n + $i, (string) ($options['message'] ?? 'failing')));
        }
        break;

    case 'listener':
        $app['events']->listen(ThingHappened::class, RecordListener::class);
        RecordListener::$onQueue = isset($options['queue']) ? (string) $options['queue'] : null;
        $id = (int) ($options['id'] ?? 1);
        for ($i = 0; $i < $count; $i++) {
            ThingHappened::dispatch($id + $i, (string) ($options['name'] ?? 'thing'));
        }
        break;

    case 'notification':
        $user = (new App\Models\User())->forceFill(['id' => (int) ($options['userId'] ?? 1)]);
        $user->exists = true;
        $notifications = new Illuminate\Notifications\ChannelManager($app);
        $invoiceId = (int) ($options['invoiceId'] ?? 1);
        for ($i = 0; $i < $count; $i++) {
            $notification = new App\Notifications\InvoicePaid($invoiceId + $i);
            if (isset($options['queue'])) {
                $notification->onQueue((string) $options['queue']);
            }
            $notifications->send($user, $notification);
        }
        break;

    case 'mailable':
        $orderId = (int) ($options['orderId'] ?? 1);
        for ($i = 0; $i < $count; $i++) {
            $mail = (new App\Mail\OrderShippedMail($orderId + $i))->to((string) ($options['to'] ?? 'ada@example.com'))->subject('Your order shipped');
            if (isset($options['queue'])) {
                $mail->onQueue((string) $options['queue']);
            }
            $mail->queue($app['queue']);
        }
        break;

    case 'retry':
        if (!empty($options['all'])) {
            $input = ['id' => ['all']];
        } elseif (isset($options['ids'])) {
            $input = ['id' => array_map('strval', (array) $options['ids'])];
        } elseif (isset($options['queue'])) {
            $input = ['--queue' => (string) $options['queue']];
        } else {
            lqb_usage('retry needs {"ids":[...]}, {"all":true} or {"queue":"name"}');
        }
        $retried = 0;
        $app['events']->listen(JobRetryRequested::class, function (JobRetryRequested $event) use (&$retried) {
            $payload = $event->payload();
            $retried++;
            lqb_print(['id' => $payload['id'] ?? null, 'uuid' => $event->job->id, 'queue' => $event->job->queue, 'class' => $payload['displayName'] ?? null]);
        });
        $command = new RetryCommand();
        $command->setLaravel($app);
        $command->run(new ArrayInput($input), new StreamOutput(STDERR));
        // queue:retry only reports unknown ids; make them visible in the exit status.
        $missing = isset($input['id']) && $input['id'] !== ['all'] ? count(array_unique(array_filter($input['id']))) - $retried : 0;
        exit($missing > 0 ? 1 : 0);

    case 'failed':
        lqb_print(array_map(fn ($record) => (array) $record, $app['queue.failer']->all()));
        break;

    case 'pause':
    case 'resume':
    case 'paused':
        $key = !empty($options['all'])
            ? 'illuminate:queues:paused'
            : 'illuminate:queue:paused:' . ($options['connection'] ?? 'redis') . ':' . ($options['queue'] ?? 'default');
        $store = $app['cache.store'];
        if ($kind === 'pause') {
            $store->forever($key, true);
        } elseif ($kind === 'resume') {
            $store->forget($key);
        } else {
            $own = 'illuminate:queue:paused:' . ($options['connection'] ?? 'redis') . ':' . ($options['queue'] ?? 'default');
            lqb_print(['paused' => (bool) ($store->get('illuminate:queues:paused') ?: $store->get($own))]);
        }
        break;

    case 'restart':
        $command = new RestartCommand($app['cache.store']);
        $command->setLaravel($app);
        $command->run(new ArrayInput([]), new StreamOutput(STDERR));
        $time = $app['cache.store']->get('illuminate:queue:restart');
        lqb_print(['restart' => is_numeric($time) ? (int) $time : $time]);
        break;

    default:
        lqb_usage("unknown KIND '{$kind}'");
}
