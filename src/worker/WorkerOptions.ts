/**
 * The worker's settings, named and defaulted as `php artisan queue:work` (8.x) names them.
 */
import { isWholePercent } from '../queue/take.js';

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
   * Stop (exit 12) once the JS heaps and Buffers live after a full collection hold this many MB,
   * the process's sandbox threads included (`--memory`; 0: no limit; see memory.ts): what
   * Laravel's memory_get_usage() measures in PHP, the script's live values,
   * not the process's RSS. `lqb work` defaults to 128, as queue:work does; a worker made in code
   * has no limit unless given one, since the heap it would measure is the whole service's.
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
   * The queues are shared with PHP workers (the default; `--no-share` / `share: false` to turn it
   * off): on Redis the reserve takes only jobs of the classes Node has handlers for, and leaves
   * every other where it is, untouched (docs/sharing.md); a job taken that Node then cannot run
   * (one it cannot read, a listener's other method, a lock or batch only PHP can answer) is given
   * back, unchanged and without spending an attempt, for a PHP worker to run. Off, every job is
   * taken and one with no handler is failed with the reason.
   */
  share: boolean;
  /** Seconds before a job given back may be taken again (`--share-delay`, 1). */
  shareDelay: number;
  /**
   * A canary share, with `share` (`--take 'CLASS=P%'`): `{ CLASS: 0.1 }` takes a tenth of the
   * class's jobs and leaves the rest on the queue for PHP, each job decided by its uuid
   * (docs/sharing.md). A share is a whole percent, 0 to 1 (0.07, not 0.075); each class must have
   * a handler. Empty: all of every class handled.
   */
  take: Readonly<Record<string, number>>;
  /** The connection name failed-job records carry (Laravel's `redis`). */
  connectionName: string;
  /**
   * SIGTERM and SIGINT stop the worker as `lqb work` does, while run() runs: the jobs in hand
   * finish, then run() resolves with reason `signal` (false: the process's signals are the caller's).
   */
  handleSignals: boolean;
  /**
   * A thread that holds the timeout when a handler blocks the event loop (true; see
   * watchdog.ts): it reports such a job (`blocked`), or with `exitOnBlock` ends the process.
   */
  watchdog: boolean;
  /**
   * End the process, as Laravel's timeout does (SIGKILL), when a handler blocks the event loop
   * past its timeout (false; `lqb work` turns it on). The job comes back after retry_after.
   */
  exitOnBlock: boolean;
}

export const defaultWorkerOptions: WorkerOptions = {
  queues: ['default'],
  tries: 1,
  backoff: [0],
  timeout: 60,
  sleep: 3,
  maxJobs: 0,
  maxTime: 0,
  memory: 0,
  rest: 0,
  once: false,
  stopWhenEmpty: false,
  concurrency: 1,
  share: true,
  shareDelay: 1,
  take: {},
  connectionName: 'redis',
  handleSignals: false,
  watchdog: true,
  exitOnBlock: false,
};

const NUMBER_OPTIONS = ['tries', 'timeout', 'sleep', 'maxJobs', 'maxTime', 'memory', 'rest', 'shareDelay'] as const;
const BOOLEAN_OPTIONS = ['once', 'stopWhenEmpty', 'share', 'watchdog', 'exitOnBlock', 'handleSignals'] as const;

/**
 * What is wrong with worker options given in code (the CLI's flags are checked where they are
 * parsed), as one line, or undefined. An unknown name is refused rather than ignored: a
 * `queue: ['mail']` or `stopWhenEmty` read as nothing would run the wrong queues, or forever.
 * `also` names the options the caller takes besides these.
 */
export function workerOptionsProblem(options: Record<string, unknown>, also: readonly string[] = []): string | undefined {
  const known = [...Object.keys(defaultWorkerOptions), ...also];
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue;
    const near = known.find(
      (k) => k.toLowerCase() === name.toLowerCase() || k === `${name}s` || editDistance(k.toLowerCase(), name.toLowerCase()) <= 2,
    );
    return `unknown worker option ${JSON.stringify(name)}${near ? ` (did you mean ${near}?)` : ''}; the options are ${known.join(', ')}`;
  }
  const { queues, backoff, concurrency } = options;
  if (queues !== undefined && !(Array.isArray(queues) && queues.every((q) => typeof q === 'string' && q !== ''))) {
    return `queues must be a list of queue names, e.g. ['high', 'default'], not ${JSON.stringify(queues)}`;
  }
  if (backoff !== undefined && !(Array.isArray(backoff) && backoff.length > 0 && backoff.every(isSeconds)))
    return `backoff must be a list of seconds (0 or more), e.g. [10, 60], not ${JSON.stringify(backoff)}`;
  for (const name of NUMBER_OPTIONS)
    if (options[name] !== undefined && !isSeconds(options[name]))
      return `${name} must be a number, 0 or more, not ${JSON.stringify(options[name])}`;
  for (const name of BOOLEAN_OPTIONS)
    if (options[name] !== undefined && typeof options[name] !== 'boolean')
      return `${name} must be true or false, not ${JSON.stringify(options[name])}`;
  const takeProblem = options.take === undefined ? undefined : sharesProblem(options.take);
  if (takeProblem) return takeProblem;
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && (concurrency as number) >= 1))
    return `concurrency must be a whole number, 1 or more, not ${JSON.stringify(concurrency)}`;
  return undefined;
}

/** What is wrong with `take`: an object of class names to shares, each a whole percent from 0 to 1. */
function sharesProblem(take: unknown): string | undefined {
  if (typeof take !== 'object' || take === null || Array.isArray(take))
    return `take must be an object of class names to shares, e.g. { 'App\\Jobs\\SendInvoice': 0.1 } for 10%, not ${JSON.stringify(take)}`;
  for (const [className, share] of Object.entries(take))
    if (!isWholePercent(share))
      return `take[${JSON.stringify(className)}] must be a share from 0 to 1 in whole percents (0.1 for 10%; a job's bucket is one of a hundred), not ${JSON.stringify(share)}`;
  return undefined;
}

function isSeconds(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** Levenshtein distance, for "did you mean": names are short, so the plain table will do. */
export function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}
