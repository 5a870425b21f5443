/**
 * The stand-in a Node worker pushes when it hands a batch's finish to PHP
 * (CallQueuedHandler.handOverFinish), pushed onto a real Laravel's queue: a no-op
 * CallQueuedClosure in batch BATCH_ID, its closure signed with the app's APP_KEY, built by our
 * batchedNoopCommand and buildPayload (profile from the app's Laravel version, 12 or 13) and
 * pushed by the library's RedisQueue.pushRaw (the payload onto PREFIXqueues:QUEUE, a token onto
 * its :notify list, as Laravel's own push leaves them). Prints one JSON line: {laravel, profile,
 * key, payload}. Made fixtures/laravel/batch-handover-12-13.jsonl (its README says how) with a
 * Laravel 12 and a 13 app built outside this repository and a Redis of your own on PORT (never
 * 6379): the app dispatches a batch of jobs with then/finally callbacks, one of its jobs is taken
 * off the list (the one Node ran), this script pushes the stand-in, and the app's own worker runs
 * the queue; the batch row then shows pending_jobs 0 and finished_at, the callbacks once.
 *
 *   npx tsx php-fixture-gen/live/batch-handover.ts APP_DIR PORT QUEUE BATCH_ID [PREFIX]
 *
 * APP_DIR is the Laravel app (.env: APP_KEY; vendor/composer/installed.json: the version);
 * PREFIX defaults to `live-bridge-database-`. Not run by CI (it has no such app).
 */
import { readFileSync } from 'node:fs';
import { parseDotenv } from '../../src/connect/dotenv.js';
import { installedLaravel } from '../../src/connect/settings.js';
import { Encrypter } from '../../src/laravel/encrypter.js';
import { batchedNoopCommand } from '../../src/laravel/closure.js';
import { buildPayload } from '../../src/laravel/builders.js';
import { RedisQueue, connectRedis } from '../../src/redis/index.js';

async function main(): Promise<void> {
  const [dir, port, queue, batchId, prefix = 'live-bridge-database-'] = process.argv.slice(2);
  if (!dir || !port || !queue || !batchId) {
    console.error('usage: batch-handover.ts RUNTIME_DIR PORT QUEUE BATCH_ID [PREFIX]');
    process.exit(2);
  }
  if (Number(port) === 6379) throw new Error('not on 6379');

  const env = parseDotenv(readFileSync(`${dir}/.env`, 'utf8'), {});
  const laravel = installedLaravel(dir)?.replace(/^v/, '') ?? '';
  const profile = laravel.split('.')[0];
  if (profile !== '12' && profile !== '13') throw new Error(`Laravel ${laravel}: this check is for 12 and 13`);

  const signer = new Encrypter(env.APP_KEY ?? ''); // signClosure is the key's HMAC, whatever the cipher
  const built = buildPayload(batchedNoopCommand(batchId, signer), {
    profile,
    displayName: `Closure (laravel-queue-bridge: finishes batch ${batchId})`,
    batchId,
    driver: 'redis',
  });

  const client = connectRedis({ url: `redis://127.0.0.1:${port}/0`, prefix });
  try {
    const pushing = new RedisQueue(client);
    await pushing.pushRaw(built.raw, queue);
    console.log(JSON.stringify({ laravel, profile, key: `${prefix}${pushing.key(queue)}`, payload: built.raw }));
  } finally {
    client.disconnect();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
