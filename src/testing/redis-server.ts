/**
 * Redis servers on this machine: a free loopback port, a wait until a server answers there,
 * and a `redis-server` of our own when none is running (for `lqb demo` and the tests).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

/** True when a Redis answers PING on the port. */
export async function redisAnswers(port: number): Promise<boolean> {
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** Waits (up to `ms`) for a Redis to answer on the port. */
export async function waitForRedis(port: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await redisAnswers(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no Redis answered on 127.0.0.1:${port}`);
}

/** Starts `redis-server` on a free loopback port, keeping nothing on disk. */
export async function startRedisServer(extraArgs: string[] = []): Promise<{ port: number; stop: () => void }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs], {
    stdio: 'ignore',
  });
  await waitForRedis(port);
  return { port, stop: () => child.kill() };
}
