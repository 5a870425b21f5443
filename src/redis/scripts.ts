/**
 * The atomic steps of the queue, one Lua file each (see `lua/`), registered on an ioredis
 * client (or Cluster) so ioredis loads each once and calls it by SHA from then on.
 */
import type { Cluster, Redis } from 'ioredis';
import { LUA_FILES } from './lua.generated.js';
import { whileBusy } from './busy.js';

export type RedisClient = Redis | Cluster;

/**
 * Whether the client is a Cluster, by ioredis's own flag: the package's build carries its own
 * ioredis, so a client the app made with its ioredis is no instance of ours.
 */
export function isCluster(client: RedisClient): client is Cluster {
  return client.isCluster;
}

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
  lqbPageEnds: { file: 'page-ends.lua', keys: 1 },
  // A finished job's delete and the next reserve on the same queue, in one round trip: the two
  // files as they are, run one after the other.
  lqbDeleteReserve: { file: 'delete.lua+reserve.lua', keys: 4, composed: composedDeleteReserve },
} as const satisfies Record<string, { file: string; keys: number | null; withoutShebang?: boolean; composed?: () => string | undefined }>;

export type StepName = keyof typeof STEPS;

const sources = new Map<StepName, string>();

/**
 * The Lua source of a step. The files in src/redis/lua/ are built into the module (see
 * scripts/embed.mjs) rather than read beside it, so that a bundled service carries them.
 */
export function luaSource(step: StepName): string {
  let source = sources.get(step);
  if (source === undefined) {
    const spec = STEPS[step];
    source = 'composed' in spec ? spec.composed() : LUA_FILES[spec.file];
    if (source === undefined) throw new Error(`the Lua step ${STEPS[step].file} is not built into this package`);
    // The shebang line made a comment, so line numbers in Redis's errors stay the file's.
    if ('withoutShebang' in STEPS[step]) source = source.replace(/^#!.*/, (line) => `--${line}`);
    sources.set(step, source);
  }
  return source;
}

/**
 * delete.lua then reserve.lua in one script, since a script cannot call another: each file's
 * text becomes the body of a function taking its own KEYS and ARGV, called in turn.
 * KEYS     the reserve's four: the list, :delayed, :reserved, :notify (the delete's three among them)
 * ARGV[1]  how many reserved payloads to delete; they follow, then the reserve's arguments
 * Returns the delete's {late, gone}, then the reserve's reply.
 * Effects replication is asked for first, before the delete writes (Redis 3.2 and 4 refuse it after).
 */
function composedDeleteReserve(): string | undefined {
  const remove = LUA_FILES['delete.lua'];
  const reserve = LUA_FILES['reserve.lua'];
  if (remove === undefined || reserve === undefined) return undefined;
  return [
    'if redis.replicate_commands then redis.replicate_commands() end',
    `local function deleteStep(KEYS, ARGV)\n${remove}\nend`,
    `local function reserveStep(KEYS, ARGV)\n${reserve}\nend`,
    'local count = tonumber(ARGV[1])',
    'local members, rest = {}, {}',
    'for i = 2, count + 1 do members[#members + 1] = ARGV[i] end',
    'for i = count + 2, #ARGV do rest[#rest + 1] = ARGV[i] end',
    'local counts = deleteStep({ KEYS[3], KEYS[1], KEYS[4] }, members)',
    'local reply = reserveStep(KEYS, rest)',
    'table.insert(reply, 1, counts[2])',
    'table.insert(reply, 1, counts[1])',
    'return reply',
  ].join('\n');
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
