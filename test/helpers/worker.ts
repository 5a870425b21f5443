/**
 * A worker set up against real Redis under a prefix of its own, with a SQLite failed_jobs
 * file of its own, torn down after the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisQueue, type RedisClient } from '../../src/redis/index.js';
import {
  DatabaseUuidFailedJobProvider,
  QueueCache,
  Worker,
  type HandlerMap,
  type WorkerDependencies,
  type WorkerEvent,
  type WorkerOptions,
} from '../../src/worker/index.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from './redis.js';

/**
 * The worker's --memory limit is off unless a test sets it: the limit reads the JS heap, and
 * here that is the test runner's, whatever it holds. These workers are Node's alone on their
 * queues (`share: false`: a job with no handler is failed) unless a test shares them; the
 * default, shared, has tests of its own (test/worker/defaults.test.ts).
 */
export interface WorkerSetup {
  prefix: string;
  client: RedisClient;
  queue: RedisQueue;
  failer: DatabaseUuidFailedJobProvider;
  failedDb: string;
  cache: QueueCache;
  events: WorkerEvent[];
  worker(handlers: HandlerMap, options?: Partial<WorkerOptions>, deps?: Partial<WorkerDependencies>): Worker;
  cleanup(): Promise<void>;
}

export function workerSetup(label = 'worker', queueOptions: ConstructorParameters<typeof RedisQueue>[1] = {}): WorkerSetup {
  const prefix = uniquePrefix(label);
  const client = prefixedClient(prefix);
  const queue = new RedisQueue(client, queueOptions);
  const dir = mkdtempSync(join(tmpdir(), 'lqb-failed-'));
  const failedDb = join(dir, 'failed.sqlite');
  const failer = DatabaseUuidFailedJobProvider.fromUrl(failedDb);
  const cache = new QueueCache(client, 'laravel_cache');
  const events: WorkerEvent[] = [];
  return {
    prefix,
    client,
    queue,
    failer,
    failedDb,
    cache,
    events,
    worker: (handlers, options = {}, deps = {}) =>
      new Worker(
        queue,
        handlers,
        { sleep: 0.05, memory: 0, share: false, ...options },
        { failer, cache, log: (e) => events.push(e), ...deps },
      ),
    async cleanup() {
      await queue.close();
      await failer.close();
      client.disconnect();
      const raw = rawClient();
      await removePrefix(raw, prefix);
      raw.disconnect();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
