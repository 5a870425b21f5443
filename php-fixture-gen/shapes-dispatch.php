<?php
/**
 * Real Laravel (8.83) dispatches one of shapes-app's jobs the way an application does:
 * dispatch(new CLASS(...ARGS)), through PendingDispatch, which takes a ShouldBeUnique job's lock
 * in the app's cache store and drops a duplicate.
 *
 *   php shapes-dispatch.php '{"class":"App\\Jobs\\ImportFeed","args":["news"]}'
 *   php shapes-dispatch.php '{"event":"App\\Events\\OrderShipped","args":[5],"listener":"App\\Listeners\\SendShipmentNotification"}'
 *
 * Prints {"queued": <bool>}. Environment: worker-app.php's.
 */
declare(strict_types=1);

require __DIR__ . '/worker-app.php';

use Illuminate\Queue\Events\JobQueued;

$spec = json_decode($argv[1] ?? '', true, 512, JSON_THROW_ON_ERROR);
$app = App\Bridge\boot();
$queued = 0;
$app['events']->listen(JobQueued::class, function () use (&$queued) {
    $queued++;
});
if (isset($spec['event'])) {
    // A queued listener: registered for the event, and the event fired, as an app's event() does.
    $app['events']->listen($spec['event'], $spec['listener']);
    $event = $spec['event'];
    event(new $event(...($spec['args'] ?? [])));
} else {
    $class = $spec['class'];
    dispatch((new $class(...($spec['args'] ?? [])))->onQueue(getenv('QUEUE_NAME') ?: 'default'));
}
echo json_encode(['queued' => $queued === 1]), "\n";
