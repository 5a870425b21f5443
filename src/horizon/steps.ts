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
    client.defineCommand(
      name,
      step.keys === undefined ? { lua: stepSource(step.file) } : { numberOfKeys: step.keys, lua: stepSource(step.file) },
    );
  }
  client.defineCommand('lqbHorizonBatch', { lua: batchSource() });
  registered.add(client);
}

function stepSource(file: string): string {
  const lua = HORIZON_LUA_FILES[file];
  if (lua === undefined) throw new Error(`the Lua step ${file} is not built into this package`);
  return lua;
}

/** The steps a worker writes for every job, which a batch may hold. */
const BATCHED = [
  'lqbHorizonReserved',
  'lqbHorizonReleased',
  'lqbHorizonCompleted',
  'lqbHorizonFailed',
] as const satisfies readonly HorizonStep[];
type BatchedStep = (typeof BATCHED)[number];

/**
 * One script that runs several events' steps in order: each step's file as a Lua function whose
 * parameters KEYS and ARGV stand in for the globals, then a loop over the events. ARGV holds,
 * per event, the step's name, its key count, its argument count and its arguments; KEYS holds
 * the events' keys one after the other. The same files, not copies, so a step cannot differ
 * between its single and its batched form.
 */
function batchSource(): string {
  const functions = BATCHED.map((name) => `steps['${name}'] = function(KEYS, ARGV)\n${stepSource(STEPS[name].file)}\nend`);
  return [
    "-- batch: several events' steps in one round trip (see steps.ts, which builds this script).",
    'local steps = {}',
    ...functions,
    `local k = 0
local i = 1
while i <= #ARGV do
  local step = steps[ARGV[i]]
  local keyCount = tonumber(ARGV[i + 1])
  local argCount = tonumber(ARGV[i + 2])
  local keys = {}
  for j = 1, keyCount do
    keys[j] = KEYS[k + j]
  end
  local args = {}
  for j = 1, argCount do
    args[j] = ARGV[i + 2 + j]
  end
  step(keys, args)
  k = k + keyCount
  i = i + 3 + argCount
end
return 1`,
  ].join('\n');
}

/** Runs a step: its keys, then its arguments (a step of no fixed key count is told how many). */
export function runHorizonStep<T>(client: RedisClient, step: HorizonStep, keys: string[], args: (string | number | Buffer)[]): Promise<T> {
  register(client);
  const command = (client as unknown as Record<string, (...a: (string | number | Buffer)[]) => Promise<T>>)[step]!;
  const counted = STEPS[step].keys === undefined ? [keys.length, ...keys, ...args] : [...keys, ...args];
  return whileBusy(() => command.apply(client, counted));
}

/**
 * The events of one turn of the event loop, sent as one batch step: a worker running many jobs at
 * once ends many of them together, and one call for all of them costs far less than one each
 * (each command's encoding, write and reply). Each event's promise settles with its batch.
 */
export class HorizonBatch {
  private events: { step: BatchedStep; keys: string[]; args: (string | number | Buffer)[] }[] = [];
  private settle: { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } | undefined;

  constructor(private readonly client: RedisClient) {}

  run(step: BatchedStep, keys: string[], args: (string | number | Buffer)[]): Promise<void> {
    if (!this.settle) {
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<void>((yes, no) => ((resolve = yes), (reject = no)));
      this.settle = { promise, resolve, reject };
      setImmediate(() => void this.flush());
    }
    this.events.push({ step, keys, args });
    return this.settle.promise;
  }

  private async flush(): Promise<void> {
    const events = this.events;
    const settle = this.settle!;
    this.events = [];
    this.settle = undefined;
    const keys: string[] = [];
    const args: (string | number | Buffer)[] = [];
    for (const event of events) {
      keys.push(...event.keys);
      args.push(event.step, event.keys.length, event.args.length, ...event.args);
    }
    try {
      register(this.client);
      const command = (this.client as unknown as Record<string, (...a: (string | number | Buffer)[]) => Promise<unknown>>).lqbHorizonBatch!;
      await whileBusy(() => command.call(this.client, keys.length, ...keys, ...args));
      settle.resolve();
    } catch (error) {
      settle.reject(error);
    }
  }
}
