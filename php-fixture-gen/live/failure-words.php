<?php
/**
 * The words a Laravel version's worker records for a job out of attempts and for a job past its
 * timeout, made by that version's own exception classes (MaxAttemptsExceededException::forJob,
 * TimeoutExceededException::forJob) from a Laravel app's vendor/ (any app folder of that version):
 *
 *   php php-fixture-gen/live/failure-words.php APP_DIR >> fixtures/laravel/failure-words.jsonl
 *
 * Prints one JSON line: {laravel, outOfAttempts: {class, message}, timedOut: {class, message}}
 * for a job whose resolveName() is App\Jobs\Slow. Not run by CI (it has no such runtime).
 */
$app = $argv[1] ?? null;
if ($app === null || !is_file("{$app}/vendor/autoload.php")) {
    fwrite(STDERR, "usage: php failure-words.php APP_DIR (a folder with vendor/autoload.php)\n");
    exit(2);
}
if (is_file("{$app}/polyfills.php")) require "{$app}/polyfills.php";
require "{$app}/vendor/autoload.php";

$installed = json_decode((string) file_get_contents("{$app}/vendor/composer/installed.json"), true);
$packages = $installed['packages'] ?? $installed;
$laravel = null;
foreach ($packages as $package) {
    if (($package['name'] ?? null) === 'laravel/framework') $laravel = ltrim($package['version'], 'v');
}

// A job as the worker holds it: only its name is read by forJob().
$job = new class {
    public function resolveName() { return 'App\\Jobs\\Slow'; }
};
$outOfAttempts = Illuminate\Queue\MaxAttemptsExceededException::forJob($job);
$timedOut = Illuminate\Queue\TimeoutExceededException::forJob($job);
echo json_encode([
    'laravel' => $laravel,
    'outOfAttempts' => ['class' => get_class($outOfAttempts), 'message' => $outOfAttempts->getMessage()],
    'timedOut' => ['class' => get_class($timedOut), 'message' => $timedOut->getMessage()],
], JSON_UNESCAPED_SLASHES), "\n";
