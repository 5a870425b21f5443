/**
 * What a watchdog thread needs to renew a Redis queue's reservations while a handler blocks the
 * event loop (worker/watchdog.ts): a client of its own, made from the worker's client's settings,
 * and the queue's own renew step, scored by Redis's clock as reserve and the worker's renewals are.
 */
import { requireBeside } from '../internal/module-url.js';
import { luaSource, type RedisClient } from './scripts.js';
import type { ThreadRenewal } from '../queue/contract.js';

/** The connection settings a thread can be given: ioredis's own, less its functions and sockets. */
const CONNECTION_SETTINGS = ['host', 'port', 'path', 'username', 'password', 'db', 'keyPrefix', 'tls', 'family', 'connectTimeout'] as const;

/**
 * None when reservations never run out (retry_after null) or the client is a Cluster (its nodes
 * and slots are the client's own state, which a thread cannot be given).
 */
export function threadRenewalFor(client: RedisClient, retryAfter: number | null): ThreadRenewal | undefined {
  const settings = client as unknown as { isCluster?: boolean; options?: Record<string, unknown> };
  if (retryAfter === null || retryAfter <= 0 || settings.isCluster === true || !settings.options) return undefined;
  const connection: Record<string, unknown> = {};
  for (const name of CONNECTION_SETTINGS) if (settings.options[name] !== undefined) connection[name] = settings.options[name];
  // The thread loads ioredis by path. A service bundled without node_modules has none to give:
  // the watchdog then still holds the timeout, without renewals while the loop is blocked.
  let ioredis: string;
  try {
    ioredis = requireBeside(import.meta.url).resolve('ioredis');
  } catch {
    return undefined;
  }
  return { retryAfter, connection, ioredis, renewLua: { flagged: luaSource('lqbRenew'), plain: luaSource('lqbRenewPlain') } };
}
