/**
 * Redis clients for resolved settings: the queue connection and the cache connection, under the
 * app's key prefix, trusting a given CA beside the system's. Two kinds: one that must answer now
 * (a producer, a one-off command: a bounded connect and a bounded wait per command), and one a
 * worker keeps (it waits out an outage, saying why).
 */
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { RedisOptions } from 'ioredis';
import { connectRedis, isCertificateError, settleUnansweredOnClose, whenReady, type RedisClient } from '../redis/index.js';
import { redactUrl } from './redact.js';
import { ConnectionSettingsError, type ConnectionSettings } from './settings.js';

/** Redis would not connect: `reason` is the cause alone, the message the line to print. */
export class RedisUnavailable extends Error {
  override name = 'RedisUnavailable';
  constructor(
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`redis: ${reason}`, options);
  }
}

export interface BoundedClientOptions {
  /** How long to wait for the connection (and a TLS handshake); the ready check gets as long again. */
  connectTimeout: number;
  /** How long to wait for one reply once connected, so a stalled server ends the call too. */
  commandTimeout: number;
  /** How long to wait for the client to be ready at all (twice the connect timeout unless given). */
  readyTimeout?: number;
  /**
   * Reconnect for as long as it takes once it was ready (a service's client), each command still
   * bounded by the command timeout; by default a one-off command's client gives up after a few tries.
   */
  reconnect?: boolean;
  /** Connection errors after it was ready, one line each; unheard by default. */
  log?: (line: string) => void;
}

/**
 * A client that is ready, or an error naming why not within the connect timeout, never a wait
 * for a Redis that is not coming. Once it was ready, a dropped connection is retried a few times
 * and then fails the command (never a maxRetriesPerRequest of null); a command already sent when
 * it dropped is never sent again but fails with an UnconfirmedCommandError (its outcome is
 * unknown). Its errors are not logged: the one thrown says why.
 */
export async function openBoundedClient(settings: ConnectionSettings, url: string, timeouts: BoundedClientOptions): Promise<RedisClient> {
  const options: RedisOptions = {
    maxRetriesPerRequest: timeouts.reconnect ? 1 : 2,
    retryStrategy: timeouts.reconnect ? (times) => Math.min(times * 100, 2000) : (times) => (times > 3 ? null : times * 200),
    connectTimeout: timeouts.connectTimeout,
    commandTimeout: timeouts.commandTimeout,
    // A command sent again on a new connection may run twice (a push: the job queued twice);
    // one whose connection dropped fails instead, as phpredis throws, and the caller decides.
    autoResendUnfulfilledCommands: false,
  };
  const client = clientFor(settings, url, options, timeouts.log ?? (() => undefined));
  settleUnansweredOnClose(client);
  try {
    // Past the connect timeout, the ready check (INFO) is given as long again unless told otherwise.
    await whenReady(client, timeouts.readyTimeout ?? 2 * timeouts.connectTimeout);
    return client;
  } catch (error) {
    client.disconnect();
    const cause = (error as Error).cause as Error | undefined;
    const hint = cause && isCertificateError(cause) ? ' (trust its CA with --redis-ca=FILE or REDIS_CA)' : '';
    throw new RedisUnavailable(`${(error as Error).message}${hint}`, { cause: error });
  }
}

/** A client that waits out an outage (a worker's): each connection error goes to `log`, one line each. */
export function patientClient(
  settings: ConnectionSettings,
  url: string,
  log: (line: string) => void,
  options: RedisOptions = {},
): RedisClient {
  return clientFor(settings, url, options, log);
}

/** Where the settings' Redis is, its password hidden: for an error a person reads. */
export function whereRedisIs(settings: ConnectionSettings, url = settings.url): string {
  return settings.cluster?.join(',') ?? redactUrl(url);
}

function clientFor(settings: ConnectionSettings, url: string, options: RedisOptions, log: (line: string) => void): RedisClient {
  const redisOptions = { ...options, ...tlsOptions(settings, url) };
  return connectRedis({ url, prefix: settings.prefix, cluster: settings.cluster, redisOptions, log });
}

/**
 * With a CA file, a rediss:// connection trusts that CA beside the system's ones (the file is
 * read now, so a bad path is named before any connection). ioredis fills in the rest of `tls`
 * from the URL; a redis:// URL is left plain.
 */
function tlsOptions(settings: ConnectionSettings, url: string): RedisOptions {
  if (!settings.redisCa || !url.startsWith('rediss:')) return {};
  const { file, from } = settings.redisCa;
  try {
    // Node's `ca` replaces the CAs it trusts; the well-known ones are kept beside the file's.
    return { tls: { ca: [...rootCertificates, readFileSync(file, 'utf8')] } };
  } catch (error) {
    throw new ConnectionSettingsError(
      `${from}=${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}
