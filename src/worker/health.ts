/**
 * Whether the worker can reach Redis (or the database queue's server, see database/reach.ts),
 * for a service's health check and for the log. ioredis
 * reconnects on its own and holds commands meanwhile, so without this a worker whose Redis is
 * gone (or was never there: a wrong URL) waits in silence, and its counters look healthy.
 *
 * An outage is said once when it starts (with the first cause), again every `reminderMs` while
 * it lasts, and once when Redis is back: never one line per retry.
 */
import { describeConnectionError, type RedisClient } from '../redis/index.js';
import type { WatchedClient } from '../queue/contract.js';

/** What `worker.health()` returns: enough for a liveness or readiness probe. */
export interface WorkerHealth {
  /** Every Redis connection the worker uses is ready now. */
  connected: boolean;
  /** When a reserve last got Redis's answer (jobs or none); null before the first. */
  lastPoll: Date | null;
  /** Jobs reserved and not yet finished. */
  jobsInHand: number;
  running: boolean;
  /** Error events so far (the stats' `errors`), each outage one of them. */
  errors: number;
  /** Connection errors Redis clients reported, every retry counted. */
  connectionErrors: number;
  /** Since when Redis has been unreachable, while it is. */
  downSince: Date | null;
}

/** Redis does not answer: the message says where and why, the `cause` is the client's own error. */
export class RedisUnreachableError extends Error {
  override name = 'RedisUnreachableError';
}

/** The queue's database server does not answer: the message says which and why, the `cause` is the driver's error. */
export class DatabaseUnreachableError extends Error {
  override name = 'DatabaseUnreachableError';
}

export interface ConnectionEvents {
  /** Redis (or the database) became unreachable (or is still, after a reminder's interval): the line, and the client's error as its cause. */
  down(error: RedisUnreachableError | DatabaseUnreachableError): void;
  /** Redis (or the database, `what`) answers again after `downMs`. */
  up(downMs: number, what: string): void;
}

/** How often an outage that lasts is said again. */
const REMINDER_MS = 60_000;

export class ConnectionWatch {
  lastPoll: number | undefined;
  connectionErrors = 0;
  downSince: number | undefined;
  #saidAt = 0;
  /** What the outage's first line named: the up line names the same. */
  #what = 'Redis';
  #detach: (() => void)[] = [];

  constructor(
    private readonly clients: readonly WatchedClient[],
    private readonly events: ConnectionEvents,
    private readonly reminderMs = REMINDER_MS,
  ) {}

  /** Every client is ready. A client still making its first connection is not yet connected. */
  get connected(): boolean {
    return this.clients.every((client) => client.status === 'ready');
  }

  /** A reserve got its answer: Redis is there, whatever its clients' events said last. */
  polled(): void {
    this.lastPoll = Date.now();
  }

  start(): void {
    if (this.#detach.length > 0) return;
    for (const client of this.clients) {
      const onError = (error?: Error) => this.trouble(client, error);
      const onClose = () => this.trouble(client, undefined);
      const onReady = () => this.ready();
      client.on('error', onError);
      client.on('close', onClose);
      client.on('ready', onReady);
      this.#detach.push(() => {
        client.off('error', onError);
        client.off('close', onClose);
        client.off('ready', onReady);
      });
    }
  }

  stop(): void {
    for (const detach of this.#detach.splice(0)) detach();
  }

  private trouble(client: WatchedClient, error: Error | undefined): void {
    if (error) this.connectionErrors++;
    // Closed for good: the worker's own disconnect, no outage.
    if (!error && client.status === 'end') return;
    const now = Date.now();
    this.downSince ??= now;
    // A close says nothing of why: ioredis retries at once, and that error names the cause.
    if (!error) return;
    if (this.#saidAt !== 0 && now - this.#saidAt < this.reminderMs) return;
    this.#saidAt = now;
    const lasting = now - this.downSince >= 1000 ? ` (for ${Math.round((now - this.downSince) / 1000)} s)` : '';
    if (client.describeError) {
      // A database server: its statements say it is gone, and the worker tries again each second.
      this.#what = client.name ?? 'the database';
      const line = `the queue's database is unreachable${lasting}: ${client.describeError(error)}; retrying, and no job is taken until it answers`;
      this.events.down(new DatabaseUnreachableError(line, { cause: error }));
      return;
    }
    // Redis's clients (the queue's and the cache's): their host and TLS name the cause.
    this.#what = 'Redis';
    const cause = describeConnectionError(client as RedisClient, error);
    this.events.down(
      new RedisUnreachableError(`Redis is unreachable${lasting}: ${cause}; retrying, and no job is taken until it answers`, {
        cause: error,
      }),
    );
  }

  private ready(): void {
    if (this.downSince === undefined || !this.connected) return;
    const downMs = Date.now() - this.downSince;
    const said = this.#saidAt !== 0;
    this.downSince = undefined;
    this.#saidAt = 0;
    if (said) this.events.up(downMs, this.#what);
  }
}
