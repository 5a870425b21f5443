/**
 * Real Redis for tests: a unique key prefix per test, a dump of everything under it, and
 * cleanup. REDIS_URL picks the server (default 127.0.0.1:6379, which .ci/run starts).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { connectRedis, type RedisClient } from '../../src/redis/index.js';
import { freePort } from '../../src/testing/index.js';
import { root } from './php.js';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function uniquePrefix(label = 'test'): string {
  return `lqb-${label}-${randomBytes(4).toString('hex')}:`;
}

/** A client whose keys all live under `prefix`, as Laravel's connection prefix puts them. */
export function prefixedClient(prefix: string): RedisClient {
  return connectRedis({ url: REDIS_URL, prefix });
}

/** A client without a prefix, to look at and clean up raw keys (in database `db`, 0 by default). */
export function rawClient(db = 0): Redis {
  return new Redis(REDIS_URL, { db });
}

export type Dump = Record<string, string[] | [string, number][] | [string, string][] | string>;

/** Every key under a prefix (the prefix cut off) with its contents: lists in order, zsets with scores, hashes' fields in order. */
export async function dump(raw: Redis, prefix: string): Promise<Dump> {
  const keys = (await raw.keys(`${prefix}*`)).sort();
  const out: Dump = {};
  for (const key of keys) {
    const type = await raw.type(key);
    const name = key.slice(prefix.length);
    if (type === 'list') out[name] = await raw.lrange(key, 0, -1);
    else if (type === 'zset') {
      const flat = await raw.zrange(key, 0, -1, 'WITHSCORES');
      const pairs: [string, number][] = [];
      for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i]!, Number(flat[i + 1])]);
      out[name] = pairs;
    } else if (type === 'hash') out[name] = Object.entries(await raw.hgetall(key)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    else out[name] = (await raw.get(key)) ?? '';
  }
  return out;
}

export async function removePrefix(raw: Redis, prefix: string): Promise<void> {
  const keys = await raw.keys(`${prefix}*`);
  if (keys.length) await raw.del(...keys);
}

/** After a test file: its connect() queue closed, its keys under `prefix` gone, its scratch folder removed. */
export async function dropQueue(queue: { close(): Promise<void> } | undefined, prefix: string, dir?: { remove(): void }): Promise<void> {
  await queue?.close();
  const raw = rawClient();
  try {
    await removePrefix(raw, prefix);
  } finally {
    raw.disconnect();
  }
  dir?.remove();
}

/** A redis-server of a test's own, for what the shared one must not be given (a password, ACL users, TLS). */
export interface OwnRedis {
  port: number;
  stop(): void;
}

/**
 * Starts `redis-server` on a free loopback port with the given arguments (use `{port}` where the
 * port goes, e.g. for --tls-port), keeping nothing on disk, and waits for its "Ready to accept
 * connections": a server with a password or on TLS does not answer a plain PING. `onPort`
 * starts it on that port (where a stopped one was) instead of a free one.
 */
export async function startOwnRedis(args: string[], onPort?: number, env: NodeJS.ProcessEnv = process.env): Promise<OwnRedis> {
  // A given port starts a server again where one was stopped (an outage that ends).
  const port = onPort ?? (await freePort());
  const withPort = args.map((arg) => arg.replace('{port}', String(port)));
  const portArgs = withPort.includes('--tls-port') ? ['--port', '0'] : ['--port', String(port)];
  const child = spawn('redis-server', [...portArgs, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...withPort], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`redis-server ${withPort.join(' ')} was not ready within 10 s: ${log.trim().split('\n').pop()}`)),
      10_000,
    );
    child.stdout.on('data', (chunk) => {
      log += chunk;
      if (log.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`redis-server ${withPort.join(' ')} exited (${code}): ${log.trim().split('\n').pop()}`)));
  });
  child.stdout.resume();
  return { port, stop: () => child.kill() };
}

/** A self-signed certificate for 127.0.0.1 (its own CA) and its key, made by openssl in `dir`. */
export function selfSignedCertificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'redis.crt');
  const key = join(dir, 'redis.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

/**
 * A redis-server whose clock (TIME, and its expiries) runs `seconds` ahead of this host's (behind
 * when negative), through a small LD_PRELOAD library built here with the system's C compiler.
 */
export async function startShiftedRedis(seconds: number): Promise<OwnRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-clock-'));
  const library = join(dir, 'clock-shift.so');
  execFileSync('cc', ['-shared', '-fPIC', '-O2', '-o', library, join(root, 'test/helpers/clock-shift.c'), '-ldl']);
  return startOwnRedis([], undefined, { ...process.env, LD_PRELOAD: library, CLOCK_SHIFT_SECONDS: String(seconds) });
}

/**
 * A redis-server of the test's own and an admin client on it (its errors ignored: the test may
 * kill or pause the server), both let go by a cleanup pushed onto `cleanups`.
 */
export async function ownRedisWithAdmin(cleanups: (() => unknown)[]): Promise<{ url: string; port: number; admin: Redis }> {
  const server = await startOwnRedis([]);
  const admin = new Redis(server.port, '127.0.0.1');
  admin.on('error', () => undefined);
  cleanups.push(() => {
    admin.disconnect();
    server.stop();
  });
  return { url: `redis://127.0.0.1:${server.port}`, port: server.port, admin };
}
