/**
 * A Node worker process on Laravel's database queue, built through the library (no CLI): a
 * DatabaseQueue on LQB_QUEUE_DB's LQB_JOBS_TABLE, the cross-language test handlers
 * (test/e2e/fixtures/handlers.mjs, which record each run to LQB_NODE_RECORD_FILE), and
 * failed jobs in LQB_FAILED_DB's failed_jobs, where Laravel's workers record theirs.
 *
 *   node --import tsx test/helpers/database-worker.ts '{"concurrency":8,"tries":3,"retryAfter":90,"stopWhenEmpty":true}'
 *
 * The JSON argument holds Worker options, and `retryAfter` for the queue. The process exits
 * with the worker's status; SIGTERM stops it after the jobs in hand.
 */
import { DatabaseQueue } from '../../src/database/index.js';
import { DatabaseUuidFailedJobProvider, Worker, type HandlerMap, type WorkerOptions } from '../../src/worker/index.js';
// @ts-expect-error: the fixture handlers are plain JavaScript, shared with the CLI's tests.
import handlers from '../e2e/fixtures/handlers.mjs';

const { retryAfter = 90, ...options } = JSON.parse(process.argv[2] ?? '{}') as Partial<WorkerOptions> & { retryAfter?: number };
const queue = DatabaseQueue.open(process.env.LQB_QUEUE_DB!, { table: process.env.LQB_JOBS_TABLE ?? 'jobs', retryAfter });
const failer = DatabaseUuidFailedJobProvider.fromUrl(process.env.LQB_FAILED_DB!);
const worker = new Worker(
  queue,
  handlers as HandlerMap,
  { queues: [process.env.QUEUE_NAME || 'default'], sleep: 0.05, memory: 0, share: false, connectionName: 'database', ...options },
  {
    failer,
    // One line per trouble on standard error, as Laravel's worker reports its exceptions.
    log: (event) => {
      if (event.event === 'error') process.stderr.write(`${JSON.stringify(event)}\n`);
    },
  },
);
process.once('SIGTERM', () => void worker.stop());
const stopped = await worker.run();
await queue.close();
await failer.close();
process.exit(stopped.status);
