<?php
/**
 * What PHP gives for the values Horizon's code computes, for test/horizon/values.test.ts.
 * Reads a JSON list on standard input; writes the JSON list of results. The first argument says which:
 *   prefix   each item {env: {NAME: value}}: the prefix Horizon's keys get: config/horizon.php's
 *            expression, read through Laravel's own env() with those variables set (and nothing
 *            else), as Horizon::use() applies it (an empty one is 'horizon:')
 *   payload  each item [payload, additions]: what Horizon's queue writes for a Laravel payload:
 *            the id made the uuid (RedisQueue::createPayloadArray), the additions' tags after the
 *            payload's own (JobPayload::determineTags), then JobPayload::set's
 *            json_encode(array_merge(json_decode(payload, true), additions)). Horizon is not
 *            installed here, so these are the PHP calls its code makes, not its classes.
 *   float    each item a number: (string) of it, as microtime(true) is cast in Horizon's records
 *   round    each item a number: round(it, 2), as Horizon's Stopwatch rounds a runtime
 *   json     each item any JSON value: json_encode of it as PHP reads it (objects as arrays), as
 *            Horizon writes a metrics snapshot's point from the counters phpredis read
 *   basename each item a host name: Str::slug of it, as MasterSupervisor::basename() names masters
 *   ordered-uuid  each item ignored: [microtime(true), Str::orderedUuid(), microtime(true)], the
 *            id RetryFailedJob gives a retry, with the times just before and after it was made
 */
declare(strict_types=1);

require_once 'Illuminate/Support/autoload.php';
require_once 'Dotenv/autoload.php';

use Illuminate\Support\Env;
use Illuminate\Support\Str;

$mode = $argv[1] ?? '';
$items = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
$out = [];
foreach ($items as $item) {
    switch ($mode) {
        case 'prefix':
            foreach (['HORIZON_PREFIX', 'APP_NAME'] as $name) {
                unset($_SERVER[$name], $_ENV[$name]);
                putenv($name);
            }
            foreach ($item['env'] as $name => $value) {
                $_SERVER[$name] = $value;
                $_ENV[$name] = $value;
            }
            Env::enablePutenv(); // forgets the repository, so the variables above are read afresh
            $configured = env('HORIZON_PREFIX', Str::slug((string) env('APP_NAME', 'laravel'), '_').'_horizon:');
            // Horizon::use() then gives its connection this prefix, or 'horizon:' when it is empty.
            $out[] = $configured ?: 'horizon:';
            break;
        case 'payload':
            [$payload, $additions] = $item;
            $decoded = json_decode($payload, true);
            $decoded['id'] = $decoded['uuid'];
            $additions['tags'] = array_merge($decoded['tags'] ?? [], $additions['tags']);
            $out[] = json_encode(array_merge($decoded, $additions));
            break;
        case 'float':
            $out[] = (string) $item;
            break;
        case 'round':
            $out[] = round($item, 2);
            break;
        case 'json':
            $out[] = json_encode($item);
            break;
        case 'basename':
            $out[] = Str::slug($item);
            break;
        case 'ordered-uuid':
            $out[] = [microtime(true), (string) Str::orderedUuid(), microtime(true)];
            break;
        default:
            fwrite(STDERR, "unknown mode {$mode}\n");
            exit(2);
    }
}
echo json_encode($out, JSON_THROW_ON_ERROR | JSON_PRESERVE_ZERO_FRACTION), "\n";
