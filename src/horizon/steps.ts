/**
 * Horizon's records, one Lua step per event (see `lua/`), registered on an ioredis client as
 * the queue's steps are: loaded once, then called by SHA.
 */
import type { RedisClient } from '../redis/scripts.js';
import { whileBusy } from '../redis/busy.js';
import { HORIZON_LUA_FILES } from './lua.generated.js';

/** Each step, with its number of keys (undefined: the caller says, as for `released`, one key per job). */
const STEPS = {
  lqbHorizonPushed: { file: 'pushed.lua', keys: 4 },
  lqbHorizonReserved: { file: 'reserved.lua', keys: 1 },
  lqbHorizonReleased: { file: 'released.lua', keys: undefined },
  lqbHorizonCompleted: { file: 'completed.lua', keys: 10 },
  lqbHorizonFailed: { file: 'failed.lua', keys: 6 },
  lqbHorizonRetried: { file: 'retried.lua', keys: 1 },
  lqbHorizonHeartbeat: { file: 'heartbeat.lua', keys: 6 },
  lqbHorizonForgetSupervisor: { file: 'forget-supervisor.lua', keys: 5 },
  lqbHorizonSnapshot: { file: 'snapshot.lua', keys: 4 },
  lqbHorizonTrim: { file: 'trim.lua', keys: 7 },
} as const satisfies Record<string, { file: string; keys: number | undefined }>;

export type HorizonStep = keyof typeof STEPS;

/** The file of each step (for the tests: every Lua file is a step, and built in as it is on disk). */
export const HORIZON_STEP_FILES: Readonly<Record<HorizonStep, string>> = Object.fromEntries(
  Object.entries(STEPS).map(([name, step]) => [name, step.file]),
) as Record<HorizonStep, string>;

const registered = new WeakSet<object>();

function register(client: RedisClient): void {
  if (registered.has(client)) return;
  for (const [name, step] of Object.entries(STEPS)) {
    const lua = HORIZON_LUA_FILES[step.file];
    if (lua === undefined) throw new Error(`the Lua step ${step.file} is not built into this package`);
    client.defineCommand(name, step.keys === undefined ? { lua } : { numberOfKeys: step.keys, lua });
  }
  registered.add(client);
}

/** Runs a step: its keys, then its arguments (a step of no fixed key count is told how many). */
export function runHorizonStep<T>(client: RedisClient, step: HorizonStep, keys: string[], args: (string | number)[]): Promise<T> {
  register(client);
  const command = (client as unknown as Record<string, (...a: (string | number)[]) => Promise<T>>)[step]!;
  const counted = STEPS[step].keys === undefined ? [keys.length, ...keys, ...args] : [...keys, ...args];
  return whileBusy(() => command.apply(client, counted));
}
