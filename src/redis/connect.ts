/**
 * ioredis clients configured the way Laravel's `database.redis` config describes a connection:
 * a URL (or host/port/password/database) and a key prefix put in front of every key.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { describeConnectionError } from './ready.js';
import type { RedisClient } from './scripts.js';

export interface ConnectOptions {
  /** redis://[:password@]host:port[/db] (rediss:// for TLS). Default redis://127.0.0.1:6379. */
  url?: string;
  /** Put before every key, as Laravel's `options.prefix` (e.g. `laravel_database_`). */
  prefix?: string;
  /** Seed nodes of a Redis Cluster (host:port); when given, a Cluster client is made. */
  cluster?: string[];
  /** Passed on to ioredis. */
  redisOptions?: RedisOptions;
  /** Where connection errors are reported (one line each); standard error by default. */
  log?: (line: string) => void;
}

/**
 * What a client says when its connection drops: one line per kind of error, at most every few
 * seconds, while ioredis reconnects with backoff. Commands wait for the connection meanwhile.
 * Each line names the server and, for TLS, that the handshake failed (describeConnectionError):
 * ioredis's own message for a TLS client at a plain port is a bare "connect ETIMEDOUT".
 */
function logConnectionErrors(client: RedisClient, log: (line: string) => void): RedisClient {
  let last = '';
  let lastAt = 0;
  client.on('error', (error: Error) => {
    const line = `redis: ${describeConnectionError(client, error)}; reconnecting`;
    if (line === last && Date.now() - lastAt < 5000) return;
    last = line;
    lastAt = Date.now();
    log(line);
  });
  return client;
}

export function connectRedis(options: ConnectOptions = {}): RedisClient {
  return logConnectionErrors(createClient(options), options.log ?? ((line) => process.stderr.write(`${line}\n`)));
}

function createClient(options: ConnectOptions): RedisClient {
  const common: RedisOptions = {
    keyPrefix: options.prefix ?? '',
    // Reconnect with a growing pause, capped at 2 s; commands wait for the connection meanwhile.
    retryStrategy: (times) => Math.min(times * 100, 2000),
    maxRetriesPerRequest: null,
    ...options.redisOptions,
  };
  if (options.cluster?.length) {
    return new Cluster(
      options.cluster.map((node) => {
        const [host, port] = node.split(':');
        return { host: host!, port: Number(port ?? 6379) };
      }),
      {
        keyPrefix: common.keyPrefix,
        // The prefix is the cluster client's to apply, once; each node connection gets the rest.
        redisOptions: { ...common, keyPrefix: undefined },
        clusterRetryStrategy: (times) => Math.min(times * 100, 2000),
      },
    );
  }
  return new Redis(options.url ?? 'redis://127.0.0.1:6379', common);
}
