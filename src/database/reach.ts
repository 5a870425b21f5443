/**
 * Whether a database server answers, as the worker's health() and outage lines read it. A
 * database driver has no connection that stays up to watch (a pool opens and drops them), so
 * the statements themselves say: one that fails because the server is gone (refused, reset,
 * shut down, crashed) makes the server unreachable; any answer, a result or an SQL error,
 * makes it reachable again. It reads as a Redis client does to the worker: a `status`, and
 * `error` and `ready` events.
 */
import { EventEmitter } from 'node:events';
import type { WatchedClient } from '../queue/contract.js';

/**
 * Error codes that mean the connection, not the statement, failed: the socket's (refused, reset,
 * timed out, no route, no such host), mysql2's lost connection and MariaDB's shutdown, and
 * PostgreSQL's SQLSTATE class 08 (connection exception) and 57P01–57P03 (shut down by the
 * administrator, crashed, not yet accepting connections).
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  '57P01',
  '57P02',
  '57P03',
]);

/** node-postgres says a lost connection in words only (no code). */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error',
  'Client was closed and is not queryable',
  'timeout expired',
];

/** Whether a statement failed because the server could not be reached (it may be tried again once it answers). */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, fatal } = error as Error & { code?: unknown; fatal?: unknown };
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  // mysql2 marks an error that ended the connection `fatal`.
  if (fatal === true) return true;
  if (PG_CONNECTION_MESSAGES.some((words) => error.message.includes(words))) return true;
  // An AggregateError (a name resolving to several addresses, each refused).
  const inner = (error as Error & { errors?: unknown }).errors;
  return Array.isArray(inner) && inner.length > 0 && inner.every(isConnectionError);
}

export class DatabaseReach extends EventEmitter implements WatchedClient {
  /** `connecting` until the first answer, `ready` while the server answers, `reconnecting` while it does not. */
  status: 'connecting' | 'ready' | 'reconnecting' = 'connecting';

  constructor(
    /** What the lines call the server: its engine and address, never its credentials. */
    readonly name: string,
  ) {
    super();
    // The worker listens while it runs; an outage met before or after that says nothing.
    this.on('error', () => undefined);
  }

  /** The server answered a statement (its rows, or an SQL error). */
  answered(): void {
    if (this.status === 'ready') return;
    this.status = 'ready';
    this.emit('ready');
  }

  /** A statement met a connection error: the server is unreachable until it answers again. */
  unreachable(error: Error): void {
    this.status = 'reconnecting';
    this.emit('error', error);
  }

  /** The line's cause: where, and why in one line. */
  describeError(error: Error): string {
    const code = (error as Error & { code?: unknown }).code;
    const reason = error.message.split('\n')[0] || String(code ?? 'connection failed');
    return `${this.name}: ${reason}${typeof code === 'string' && !reason.includes(code) ? ` (${code})` : ''}`;
  }

  /** Runs a statement, noting whether the server answered it. */
  async watch<T>(statement: Promise<T>): Promise<T> {
    try {
      const result = await statement;
      this.answered();
      return result;
    } catch (error) {
      if (isConnectionError(error)) this.unreachable(error as Error);
      else this.answered();
      throw error;
    }
  }
}

/** "PostgreSQL at host:port/db": a server URL without its user or password. */
export function serverName(engine: string, url: string): string {
  try {
    const parsed = new URL(url);
    const path = parsed.pathname.length > 1 ? parsed.pathname : '';
    return `${engine} at ${parsed.host || 'localhost'}${path}`;
  } catch {
    return engine;
  }
}

/** Pauses between tries of a step waiting out an outage: growing from the first to the last, in ms. */
export const OUTAGE_PAUSE_MS = { first: 250, last: 5000 } as const;

/** The pause before try `attempt + 1` of a step waiting out an outage. */
export function outagePause(attempt: number): number {
  return Math.min(OUTAGE_PAUSE_MS.last, OUTAGE_PAUSE_MS.first * 2 ** attempt);
}

/**
 * Runs a step that may run twice with the effect of once (a delete by key), again while the
 * server is unreachable, until it answers: what the worker must still do after a job ran (free
 * its lock) is then done late rather than lost. Any other error is thrown at once; so is the
 * outage's once `gaveUp()` says so (the store was closed).
 */
export async function throughOutage<T>(step: () => Promise<T>, gaveUp: () => boolean): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (!isConnectionError(error) || gaveUp()) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, outagePause(attempt)));
  }
}
