<?php
/**
 * Laravel 8.83's own DatabaseQueue, on the `database` connection worker-app.php adds for
 * LQB_QUEUE_DB (a SQLite file, or a mysql://, mariadb:// or postgres:// URL) over the table
 * LQB_JOBS_TABLE (jobs): the table made as Laravel's `queue:table` migration makes it, and single
 * operations whose effect on the rows the tests compare with the bridge's DatabaseQueue.
 *
 *   php laravel-database-queue.php OP [JSON]
 *
 *   create-table  the table of Laravel 8's queue:table migration (Illuminate/Queue/Console/stubs/jobs.stub)
 *   drop-table    drops it
 *   lock          {"lock": getLockForPopping() (true, or "FOR UPDATE SKIP LOCKED"), "sql": the
 *                 reserve query's SQL as the connection's grammar writes it}
 *   push          payload on stdin: pushRaw; prints {"id": <row id>}
 *   later         {"delay": S}, payload on stdin: pushed to the database after S seconds; prints {"id"}
 *   record        {"uuid": U, "n":1,"label":"x","ratio":0.5,"items":[1,2],"flag":null,"delay":S}:
 *                 dispatch() of a RecordJob (worker-app.php) on the database connection, its
 *                 uuid made U through Str::createUuidsUsing; prints {"id": <row id>}
 *   pop           {"then": "keep"|"delete"|"release", "delay": S}: DatabaseQueue::pop, then that;
 *                 prints {"id","attempts","payload"} of the job, or null
 *   rows          every row of the table, by id, as Laravel's query builder reads them
 *   size          prints {"size": N}
 *   clear         prints {"cleared": N}
 *
 * Environment: worker-app.php's (QUEUE_NAME, LQB_QUEUE_DB, LQB_JOBS_TABLE), LQB_RETRY_AFTER (90).
 * Exit status 2 for a usage error.
 */
declare(strict_types=1);

require __DIR__ . '/worker-app.php';

use App\Jobs\Bridge\RecordJob;
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Support\Str;
use Ramsey\Uuid\Uuid;

function lqb_db_usage(string $message): never
{
    fwrite(STDERR, $message . "\nusage: php laravel-database-queue.php create-table|drop-table|lock|push|later|record|pop|rows|size|clear [JSON]\n");
    exit(2);
}

function lqb_db_print(mixed $value): void
{
    fwrite(STDOUT, json_encode($value, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION) . "\n");
}

if (!getenv('LQB_QUEUE_DB')) {
    lqb_db_usage('LQB_QUEUE_DB is not set');
}
$op = $argv[1] ?? lqb_db_usage('missing OP');
$options = isset($argv[2]) && $argv[2] !== '' ? json_decode($argv[2], true, 512, JSON_THROW_ON_ERROR) : [];
$retryAfter = getenv('LQB_RETRY_AFTER');
$app = App\Bridge\boot(['retry_after' => $retryAfter === false ? 90 : (int) $retryAfter]);
$table = getenv('LQB_JOBS_TABLE') ?: 'jobs';
$name = getenv('QUEUE_NAME') ?: 'default';
/** @var \Illuminate\Queue\DatabaseQueue $queue */
$queue = $app['queue']->connection('database');
$connection = $queue->getDatabase();
$input = fn () => rtrim(stream_get_contents(STDIN), "\n");

switch ($op) {
    case 'create-table':
        // The columns of Illuminate/Queue/Console/stubs/jobs.stub (8.83), through Laravel's Schema builder.
        $connection->getSchemaBuilder()->create($table, function (Blueprint $t) {
            $t->bigIncrements('id');
            $t->string('queue')->index();
            $t->longText('payload');
            $t->unsignedTinyInteger('attempts');
            $t->unsignedInteger('reserved_at')->nullable();
            $t->unsignedInteger('available_at');
            $t->unsignedInteger('created_at');
        });
        break;

    case 'drop-table':
        $connection->getSchemaBuilder()->dropIfExists($table);
        break;

    case 'lock':
        $lock = (fn () => $this->getLockForPopping())->call($queue);
        $query = $connection->table($table)->lock($lock)->where('queue', $name)
            ->where(function ($query) use ($queue) {
                (fn () => $this->isAvailable($query))->call($queue);
                (fn () => $this->isReservedButExpired($query))->call($queue);
            })
            ->orderBy('id', 'asc')->limit(1);
        lqb_db_print(['lock' => $lock, 'sql' => $query->toSql()]);
        break;

    case 'push':
        lqb_db_print(['id' => $queue->pushRaw($input(), $name)]);
        break;

    case 'later':
        $payload = $input();
        lqb_db_print(['id' => (fn () => $this->pushToDatabase($name, $payload, (int) ($options['delay'] ?? 0)))->call($queue)]);
        break;

    case 'record':
        if (isset($options['uuid'])) {
            Str::createUuidsUsing(fn () => Uuid::fromString((string) $options['uuid']));
        }
        $id = null;
        $app['events']->listen(\Illuminate\Queue\Events\JobQueued::class, function ($event) use (&$id) {
            $id = $event->id;
        });
        $job = new RecordJob(
            (int) ($options['n'] ?? 1),
            (string) ($options['label'] ?? 'x'),
            (float) ($options['ratio'] ?? 0.5),
            (array) ($options['items'] ?? [1, 2]),
            array_key_exists('flag', $options) && $options['flag'] !== null ? (bool) $options['flag'] : null,
        );
        $job->onConnection('database')->onQueue($name);
        if (isset($options['delay'])) {
            $job->delay((int) $options['delay']);
        }
        dispatch($job);
        lqb_db_print(['id' => $id]);
        break;

    case 'pop':
        $job = $queue->pop($name);
        if ($job === null) {
            lqb_db_print(null);
            break;
        }
        $then = $options['then'] ?? 'keep';
        if ($then === 'delete') {
            $job->delete();
        } elseif ($then === 'release') {
            $job->release((int) ($options['delay'] ?? 0));
        }
        lqb_db_print(['id' => $job->getJobId(), 'attempts' => $job->attempts(), 'payload' => $job->getRawBody()]);
        break;

    case 'rows':
        lqb_db_print($connection->table($table)->orderBy('id')->get()->map(fn ($row) => (array) $row)->all());
        break;

    case 'size':
        lqb_db_print(['size' => $queue->size($name)]);
        break;

    case 'clear':
        lqb_db_print(['cleared' => $queue->clear($name)]);
        break;

    default:
        lqb_db_usage("unknown OP '{$op}'");
}
