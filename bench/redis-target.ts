/**
 * The Redis a bench runs against: REDIS_URL, else 127.0.0.1:6379 (a redis-server of your own on a
 * free port keeps the bench's load off the one the tests use). `redisEnv` is how the processes it
 * starts find the same server: lqb reads REDIS_URL, php-fixture-gen REDIS_HOST and REDIS_PORT.
 *
 * A bench that assumes no server (bench/peers.ts) calls ownRedisUnlessGiven() first: with no
 * REDIS_URL it starts a redis-server of its own on a free port, and REDIS_URL and redisEnv (live
 * bindings: every module reads the new values) then name that one, as does the environment its
 * children inherit.
 */
import { startRedisServer } from '../src/testing/redis-server.js';

export let REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export let redisEnv = envFor(REDIS_URL);

function envFor(url: string): { REDIS_URL: string; REDIS_HOST: string; REDIS_PORT: string } {
  const where = new URL(url);
  return { REDIS_URL: url, REDIS_HOST: where.hostname, REDIS_PORT: where.port || '6379' };
}

/** REDIS_URL's server when one is given, else a redis-server of the bench's own on a free port; `stop` ends only the bench's own. */
export async function ownRedisUnlessGiven(): Promise<{ own: boolean; stop: () => void }> {
  if (process.env.REDIS_URL) return { own: false, stop: () => undefined };
  const server = await startRedisServer();
  REDIS_URL = `redis://127.0.0.1:${server.port}`;
  redisEnv = envFor(REDIS_URL);
  process.env.REDIS_URL = REDIS_URL;
  return { own: true, stop: server.stop };
}

/** Redis's own CPU seconds so far, user and system, from INFO cpu's text. */
export function cpuSecondsOfInfo(info: string): number {
  const field = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/** Redis's own CPU seconds so far (INFO cpu), asked of the server `client` is connected to. */
export async function redisCpuSeconds(client: { info(section: 'cpu'): Promise<string> }): Promise<number> {
  return cpuSecondsOfInfo(await client.info('cpu'));
}
