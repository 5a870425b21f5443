/**
 * Why a connection to Redis failed, said in one line, and a bounded wait for a client to be
 * ready. ioredis reports a refused TLS certificate, or a TLS client talking to a plain port, only
 * as an error event while it reconnects; a command waiting meanwhile ends with "Reached the max
 * retries per request limit", which names no cause. These name it.
 */
import type { Redis } from 'ioredis';
import type { RedisClient } from './scripts.js';

/** Where a client connects, as its errors name it. */
interface Target {
  where: string;
  tls: boolean;
}

type SocketError = Error & { code?: string };

/** Node's codes for a certificate it did not trust (OpenSSL's verify results, and its own host-name check). */
export function isCertificateError(error: SocketError): boolean {
  return /CERT|SELF_SIGNED|ISSUER|LEAF_SIGNATURE|^ERR_TLS_|^ERR_SSL_/.test(error.code ?? '');
}

function targetOf(client: RedisClient): Target | undefined {
  if (client.isCluster) return undefined;
  const { host, port, path, tls } = (client as Redis).options;
  return { where: path ?? `${host ?? '127.0.0.1'}:${port ?? 6379}`, tls: Boolean(tls) };
}

/**
 * One line: what failed and where. A certificate refused, and a TLS client given no answer at
 * all (ioredis's connect timeout, counted until the TLS handshake ends, so what a plain port
 * does with a TLS hello), are named as the TLS handshake's failure.
 */
export function describeConnectionError(client: RedisClient, error: SocketError): string {
  const target = targetOf(client);
  if (target === undefined) return error.message;
  if (target.tls && isCertificateError(error)) return `TLS handshake with ${target.where} failed: ${error.message}`;
  if (target.tls && error.code === 'ETIMEDOUT')
    return `TLS handshake with ${target.where} failed: the server did not answer TLS (is it a plain redis:// port?)`;
  return error.message.includes(target.where) ? error.message : `${target.where}: ${error.message}`;
}

/**
 * Before a client was ever ready, a reset connection on a plain client is most often a TLS
 * port refusing plain text; said so, since ioredis's "read ECONNRESET" does not.
 */
function describeFirstError(client: RedisClient, error: SocketError): string {
  const target = targetOf(client);
  if (target && !target.tls && (error.code === 'ECONNRESET' || error.code === 'EPIPE'))
    return `${target.where} closed the connection before answering (is it a TLS port? then use rediss://)`;
  return describeConnectionError(client, error);
}

/**
 * Resolves once the client is ready; rejects with its first error, described (the error itself
 * as the `cause`), or when `ms` pass without an answer. A one-off command calls it before its
 * first command, so a failed connection is reported at once rather than retried.
 */
export function whenReady(client: RedisClient, ms: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => settle();
    const onError = (error: SocketError) => settle(new Error(describeFirstError(client, error), { cause: error }));
    const timer = setTimeout(
      () => settle(new Error(`${targetOf(client)?.where ?? 'the Redis Cluster'} did not answer within ${ms / 1000} s`)),
      ms,
    );
    client.on('ready', onReady);
    client.on('error', onError);
  });
}

/**
 * Resolves true once the client is ready again, false when `ms` pass first. Unlike whenReady,
 * connection errors meanwhile are no answer: the client reconnects on its own, and a caller
 * waiting to send a command again waits out a short outage.
 */
export function readyAgain(client: RedisClient, ms: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const settle = (ready: boolean) => {
      clearTimeout(timer);
      stopWaiting();
      resolve(ready);
    };
    const timer = setTimeout(() => settle(false), ms);
    const stopWaiting = onNextReady(client, () => settle(true));
  });
}

/**
 * Who waits for each client's next 'ready', all told by one listener. Every dispatch whose reply
 * a dropped connection lost waits for the same reconnect: a listener each would pile up on the
 * client past EventEmitter's ten (a MaxListenersExceededWarning) as soon as ten were in flight.
 */
const readyWaiters = new WeakMap<RedisClient, Set<() => void>>();

/** Calls `waiter` at the client's next 'ready'; returns what takes it off the list (its wait ended otherwise). */
function onNextReady(client: RedisClient, waiter: () => void): () => void {
  let waiters = readyWaiters.get(client);
  if (!waiters) {
    const these = new Set<() => void>();
    waiters = these;
    readyWaiters.set(client, these);
    client.once('ready', () => {
      readyWaiters.delete(client);
      for (const waiting of these) waiting();
    });
  }
  waiters.add(waiter);
  return () => waiters.delete(waiter);
}
