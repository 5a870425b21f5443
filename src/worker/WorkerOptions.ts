/**
 * The worker's settings, named and defaulted as `php artisan queue:work` (8.x) names them.
 */
export interface WorkerOptions {
  /** Queues to take jobs from, first ones first (`--queue=high,default`). */
  queues: string[];
  /** Attempts when the payload says none (`--tries`, 1). 0 means no limit. */
  tries: number;
  /** Seconds before a retry when the payload says none (`--backoff`, 0): one per attempt, the last repeating. */
  backoff: number[];
  /** Seconds a job may run when the payload says none (`--timeout`, 60); 0 means no limit. */
  timeout: number;
  /** Seconds to wait when every queue is empty (`--sleep`, 3). */
  sleep: number;
  /** Stop after this many jobs (`--max-jobs`, 0: never). */
  maxJobs: number;
  /** Stop after this many seconds (`--max-time`, 0: never). */
  maxTime: number;
  /**
   * Stop (exit 12) once the JS heap live after a full collection holds this many MB (`--memory`,
   * 128; 0: no limit): what Laravel's memory_get_usage() measures in PHP, the script's live
   * values, not the process's RSS.
   */
  memory: number;
  /** Seconds to rest after each job (`--rest`, 0). */
  rest: number;
  /** Run one job, then stop (`--once`). */
  once: boolean;
  /** Stop when every queue is empty (`--stop-when-empty`). */
  stopWhenEmpty: boolean;
  /** Jobs in flight at once in this process (`--concurrency`, 1). */
  concurrency: number;
  /**
   * The queues are shared with PHP workers (`--share`): a job with no Node handler is given
   * back, unchanged and without spending an attempt, instead of being failed.
   */
  share: boolean;
  /** Seconds before a job given back may be taken again (`--share-delay`, 1). */
  shareDelay: number;
  /** The connection name failed-job records carry (Laravel's `redis`). */
  connectionName: string;
}

export const defaultWorkerOptions: WorkerOptions = {
  queues: ['default'],
  tries: 1,
  backoff: [0],
  timeout: 60,
  sleep: 3,
  maxJobs: 0,
  maxTime: 0,
  memory: 128,
  rest: 0,
  once: false,
  stopWhenEmpty: false,
  concurrency: 1,
  share: false,
  shareDelay: 1,
  connectionName: 'redis',
};
