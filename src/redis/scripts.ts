/**
 * The atomic steps of the queue, one Lua file each (see `lua/`), registered on an ioredis
 * client (or Cluster) so ioredis loads each once and calls it by SHA from then on.
 */
import type { Cluster, Redis } from 'ioredis';
import { LUA_FILES } from './lua.generated.js';
import { whileBusy } from './busy.js';

export type RedisClient = Redis | Cluster;

/** The prefix ioredis puts before every key this client names ('' for none). */
export function keyPrefixOf(client: RedisClient): string {
  return (client as { options?: { keyPrefix?: string } }).options?.keyPrefix ?? '';
}

const STEPS = {
  lqbPushMany: { file: 'push-many.lua', keys: 2 },
  lqbPushOnce: { file: 'push-once.lua', keys: 4 },
  // Keys: the queue's three, then a marker per push; runStep gives their count.
  lqbPushOnceMany: { file: 'push-once-many.lua', keys: null },
  lqbReserve: { file: 'reserve.lua', keys: 4 },
  lqbRelease: { file: 'release.lua', keys: 2 },
  lqbDelete: { file: 'delete.lua', keys: 3 },
  lqbGiveBack: { file: 'give-back.lua', keys: 2 },
  lqbSize: { file: 'size.lua', keys: 3 },
  lqbClear: { file: 'clear.lua', keys: 4 },
  lqbReleaseLock: { file: 'release-lock.lua', keys: 1 },
  lqbFindList: { file: 'find-list.lua', keys: 1 },
  lqbRenew: { file: 'renew.lua', keys: 1 },
  // The renew step for servers before Redis 7, which know no shebang line: the same file without it.
  lqbRenewPlain: { file: 'renew.lua', keys: 1, withoutShebang: true },
  lqbReclaim: { file: 'reclaim.lua', keys: 1 },
  lqbFindZset: { file: 'find-zset.lua', keys: 1 },
} as const satisfies Record<string, { file: string; keys: number | null; withoutShebang?: boolean }>;

export type StepName = keyof typeof STEPS;

const sources = new Map<StepName, string>();

/**
 * The Lua source of a step. The files in src/redis/lua/ are built into the module (see
 * scripts/embed.mjs) rather than read beside it, so that a bundled service carries them.
 */
export function luaSource(step: StepName): string {
  let source = sources.get(step);
  if (source === undefined) {
    source = LUA_FILES[STEPS[step].file];
    if (source === undefined) throw new Error(`the Lua step ${STEPS[step].file} is not built into this package`);
    // The shebang line made a comment, so line numbers in Redis's errors stay the file's.
    if ('withoutShebang' in STEPS[step]) source = source.replace(/^#!.*/, (line) => `--${line}`);
    sources.set(step, source);
  }
  return source;
}

const registered = new WeakSet<object>();

/** Registers every step on the client (once per client); ioredis then calls them by EVALSHA. */
export function registerSteps(client: RedisClient): void {
  if (registered.has(client)) return;
  for (const [name, step] of Object.entries(STEPS) as [StepName, (typeof STEPS)[StepName]][]) {
    client.defineCommand(name, { numberOfKeys: step.keys ?? undefined, lua: luaSource(name) });
  }
  registered.add(client);
}

/**
 * Runs a registered step with its keys then its arguments. With `asBuffers`, strings in the
 * reply come as the Buffers Redis sent (ioredis's `…Buffer` form of the command).
 */
export function runStep<T>(
  client: RedisClient | ReturnType<RedisClient['pipeline']>,
  step: StepName,
  keys: string[],
  args: (string | number | Buffer)[],
  asBuffers = false,
): Promise<T> {
  const command = (client as unknown as Record<string, (...a: (string | number | Buffer)[]) => Promise<T>>)[
    asBuffers ? `${step}Buffer` : step
  ];
  if (typeof command !== 'function') throw new Error(`Redis step ${step} is not registered on this client`);
  // A step of as many keys as it is given (keys: null) is told their count first.
  return STEPS[step].keys === null ? command.call(client, keys.length, ...keys, ...args) : command.call(client, ...keys, ...args);
}

/**
 * The delete step's keys from a queue's reserved zset (`queues:NAME:reserved`): the zset, the
 * list a late delete finds a job's copy on, and its notify list.
 */
export function lateDeleteKeys(reservedKey: string): [reserved: string, list: string, notify: string] {
  const list = reservedKey.slice(0, -':reserved'.length);
  return [reservedKey, list, `${list}:notify`];
}

/** The release-lock step on any client (the cache's, for locks): 1 when the owner's lock went. */
export function releaseLockStep(client: RedisClient, key: string, owner: string): Promise<number> {
  registerSteps(client);
  return whileBusy(() => runStep<number>(client, 'lqbReleaseLock', [key], [owner]));
}
