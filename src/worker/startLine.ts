/**
 * The one line a worker says when it starts: where it reads (Redis, its password masked, and
 * the key prefix), what (the queues, the handler classes), for which Laravel layout, and what
 * becomes of a job Node has no handler for. A worker reading the wrong prefix or queue, or
 * failing PHP's jobs, is then seen at start rather than from an empty failed_jobs table or a
 * queue that never drains.
 */
/** Where the worker's connection is, as the caller resolved it (connect(), or lqb's flags). */
export interface StartConnection {
  /** The Redis URL, its password already masked by the caller, or a cluster's seed nodes. */
  redis: string;
  prefix: string;
  /** The database connection's jobs table and database (password masked): said instead of Redis and the prefix. */
  database?: string;
  /** Where unique locks are freed (the cache store's lock connection and prefix, or its lock table). */
  locks?: string;
  /** The Laravel version or profile whose layout the worker follows, and where that came from. */
  laravel?: string;
}

export interface StartFacts {
  queues: readonly string[];
  handlers: readonly string[];
  share: boolean;
  /** Canary shares (--take): the percent of each class taken. */
  take?: Readonly<Record<string, number>>;
  connection?: StartConnection;
}

/** At most this many handler keys are named; the rest are counted. */
const NAMED_HANDLERS = 8;

export function startLine(facts: StartFacts): string {
  const parts: string[] = [];
  const connection = facts.connection;
  if (connection) {
    if (connection.database !== undefined) parts.push(`database ${connection.database}`);
    else parts.push(`redis ${connection.redis}`, `prefix ${JSON.stringify(connection.prefix)}`);
    if (connection.locks) parts.push(`unique locks ${connection.locks}`);
    if (connection.laravel) parts.push(`Laravel ${connection.laravel}`);
  }
  parts.push(`queues ${facts.queues.join(',')}`);
  const named = facts.handlers.slice(0, NAMED_HANDLERS);
  const more = facts.handlers.length - named.length;
  parts.push(`handlers ${named.length === 0 ? '(none)' : named.join(' ')}${more > 0 ? ` and ${more} more` : ''}`);
  const unknown = facts.share
    ? 'a job with no Node handler is left on the queue for a PHP worker (share; share: false / --no-share fails it instead)'
    : 'a job with no Node handler is failed into failed_jobs (share off)';
  const shares = Object.entries(facts.take ?? {});
  const canary =
    shares.length === 0
      ? ''
      : `; of ${shares.map(([className, percent]) => `${className} ${percent}%`).join(', ')} taken, the rest left for PHP (--take)`;
  return `worker starting: ${parts.join(', ')}; ${unknown}${canary}`;
}
