/**
 * Horizon's records, one Lua step per event (see `lua/`), registered on an ioredis client as
 * the queue's steps are: loaded once, then called by SHA.
 */
import { luaSource, type RedisClient } from '../redis/scripts.js';
import { whileBusy } from '../redis/busy.js';
import { HORIZON_LUA_FILES } from './lua.generated.js';
import { settlement, type Settlement } from '../internal/settlement.js';

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
  client.defineCommand('lqbHorizonPushedOnce', { numberOfKeys: 0, lua: pushedOnceSource() });
  registered.add(client);
}

function stepSource(file: string): string {
  const lua = HORIZON_LUA_FILES[file];
  if (lua === undefined) throw new Error(`the Lua step ${file} is not built into this package`);
  return lua;
}

/** The steps a batch calls as they are (its completions it writes together: see batchSource). */
const BATCHED = ['lqbHorizonReserved', 'lqbHorizonReleased', 'lqbHorizonFailed'] as const satisfies readonly HorizonStep[];

/**
 * One script that runs several events' steps in order: each step's file as a Lua function whose
 * parameters KEYS and ARGV stand in for the globals, then a loop that reads the events and calls
 * each step with the KEYS and ARGV its single form is given. The same files, not copies, so a
 * step cannot differ between its single and its batched form. Completions are the exception:
 * every job's completion touches the same lists and metrics hashes, which the batch writes once
 * for all of them (ten Redis calls a job become two, and a few a batch); HorizonRecorder's tests
 * hold that to what completed.lua writes a job at a time.
 *
 * The events come compact, as most of a call's cost on Node's side is its arguments (each one
 * encoded and written apart): ARGV[1] says the events, one token each (see HorizonEvents), ARGV[2]
 * holds every short string, packed (packFields): the prefix, the connection, then the events'
 * ids, names, times and tags, read in turn; the rest are the payloads (and a failure's
 * strings), an argument each, read in turn.
 * KEYS[1], when given, is a queue's reserved zset, KEYS[2] and KEYS[3] its list and notify list:
 * a queue's deletes come as this step, each job's delete (the queue's own delete step, delete.lua,
 * late deletes and all) and its completion together (see HorizonRecorder.queueRecords).
 * The keys are made here from the prefix, as the single steps' callers make them: Horizon's
 * records are never on a Redis Cluster (refused there, as Horizon refuses it), so no key need be
 * declared for its slot.
 */
function batchSource(): string {
  const functions = BATCHED.map((name) => `steps['${name}'] = function(KEYS, ARGV)\n${stepSource(STEPS[name].file)}\nend`);
  return [
    "-- batch: several events' steps in one round trip (see steps.ts, which builds this script).",
    'local steps = {}',
    ...functions,
    `steps['lqbDelete'] = function(KEYS, ARGV)\n${luaSource('lqbDelete')}\nend`,
    UNPACK_FIELDS_LUA,
    `local fields = unpackFields(ARGV[2])
local p, connection = fields[1], fields[2]
local f, a = 2, 2
local function nextField()
  f = f + 1
  return fields[f]
end
local function nextArg()
  a = a + 1
  return ARGV[a]
end
local now, score, completedAt, monitoredAt, queue, name
-- The keys every completion names, made once a call (and a queue's or a job's metrics once
-- each time the events name a new one), not once a job.
local completedList, silencedList = p .. 'completed_jobs', p .. 'silenced_jobs'
local pendingList, monitoring, monitoredList = p .. 'pending_jobs', p .. 'monitoring', p .. 'monitored_jobs'
local measuredQueues, measuredJobs = p .. 'measured_queues', p .. 'measured_jobs'
local queueMetric, jobMetric
-- Completions (JobDeleted) write what completed.lua writes for each, but the lists and the
-- metrics, which every completion of a batch touches alike, are written once for all of them:
-- completed_jobs (or silenced_jobs) gains them in one ZADD, pending_jobs loses them in one
-- ZREM, and each metrics hash is read once, counted through the batch's runtimes in order and
-- written once (the same numbers as a step per job: Redis prints a Lua number so that it reads
-- back exactly). Only a failure, which moves a job out of those lists, needs them written first.
local listed, listedOrder, unpended, measured, measuredOrder = {}, {}, {}, {}, {}
local function measureLater(key, set, runtime)
  local metric = measured[key]
  if not metric then
    metric = { set = set, runtimes = {} }
    measured[key] = metric
    measuredOrder[#measuredOrder + 1] = key
  end
  local runtimes = metric.runtimes
  runtimes[#runtimes + 1] = runtime
end
-- In slices, to stay well inside Lua's limit on unpacked arguments.
local function inSlices(command, key, members, width)
  for first = 1, #members, width do
    redis.call(command, key, unpack(members, first, math.min(first + width - 1, #members)))
  end
end
local function settle()
  for _, list in ipairs(listedOrder) do
    inSlices('ZADD', list, listed[list], 200)
  end
  if #unpended > 0 then
    inSlices('ZREM', pendingList, unpended, 100)
  end
  for _, key in ipairs(measuredOrder) do
    local metric = measured[key]
    local current = redis.call('HMGET', key, 'throughput', 'runtime')
    local count = tonumber(current[1]) or 0
    local mean = tonumber(current[2])
    for _, runtime in ipairs(metric.runtimes) do
      if mean then
        mean = (count * mean + runtime) / (count + 1)
      else
        mean = runtime
      end
      count = count + 1
    end
    redis.call('HMSET', key, 'throughput', count, 'runtime', mean)
    redis.call('SADD', metric.set, key)
  end
  listed, listedOrder, unpended, measured, measuredOrder = {}, {}, {}, {}, {}
end
local function complete(id, failing, silenced, retryOf, runtime, payload, tags)
  local hash = p .. id
  -- A retry reports to the job it retries, as completed.lua does.
  if retryOf then
    local parent = p .. retryOf
    local retries = redis.call('HGET', parent, 'retried_by')
    if retries then
      local outcome = failing and 'failed' or 'completed'
      local literal = ('"id":"' .. id .. '","status":"'):gsub('%W', '%%%0')
      local updated = retries:gsub('(' .. literal .. ')[^"]*"', '%1' .. outcome .. '"')
      redis.call('HMSET', parent, 'retried_by', updated)
    end
  end
  local list = silenced and silencedList or completedList
  local members = listed[list]
  if not members then
    members = {}
    listed[list] = members
    listedOrder[#listedOrder + 1] = list
  end
  members[#members + 1] = score
  members[#members + 1] = id
  unpended[#unpended + 1] = id
  redis.call('HMSET', hash, 'status', 'completed', 'completed_at', now)
  redis.call('EXPIREAT', hash, completedAt)
  if failing then
    return
  end
  for i = 1, #tags do
    if redis.call('SISMEMBER', monitoring, tags[i]) == 1 then
      redis.call('ZADD', monitoredList, score, id)
      redis.call('HMSET', hash, 'id', id, 'connection', connection, 'queue', queue, 'name', name,
        'status', 'completed', 'payload', payload, 'completed_at', now)
      redis.call('EXPIREAT', hash, monitoredAt)
      break
    end
  end
  runtime = tonumber(runtime)
  measureLater(queueMetric, measuredQueues, runtime)
  measureLater(jobMetric, measuredJobs, runtime)
end
local function hasFlag(flags, flag)
  return string.find(flags, flag, 1, true) ~= nil
end
-- A completion's flags, read once for each spelling the call has (most calls have one).
local flagSets = {}
local function flagsOf(flags)
  local set = flagSets[flags]
  if not set then
    set = {
      removing = hasFlag(flags, 'd'),
      failing = hasFlag(flags, 'f'),
      silenced = hasFlag(flags, 's'),
      retry = hasFlag(flags, 'y'),
      runtimeArg = hasFlag(flags, 'r'),
    }
    flagSets[flags] = set
  end
  return set
end
local noTags = {}
-- A delete by the queue's own step, one member at a time: true when the job was still the
-- queue's (reserved, or put back on the list by a migration after its reservation ran out).
local deleteKeys, oneMember = { KEYS[1], KEYS[2], KEYS[3] }, {}
local function deleted(member)
  oneMember[1] = member
  return steps['lqbDelete'](deleteKeys, oneMember)[2] == 0
end
for op, flags, field in string.gmatch(ARGV[1], '(%u)(%l*)([^%u]*)') do
  if op == 'T' then
    if flags == 'a' then
      now = nextField()
      score = nextField()
      completedAt = nextField()
      monitoredAt = nextField()
    else
      local first = string.find(field, ':', 1, true)
      local second = string.find(field, ':', first + 1, true)
      now = string.sub(field, 1, first - 1)
      score = '-' .. now
      completedAt = string.sub(field, first + 1, second - 1)
      monitoredAt = string.sub(field, second + 1)
    end
  elseif op == 'Q' then
    queue = nextField()
    queueMetric = p .. 'queue:' .. queue
  elseif op == 'N' then
    name = nextField()
    jobMetric = p .. 'job:' .. name
  elseif op == 'R' then
    local id = nextField()
    local payload = nextArg()
    steps['lqbHorizonReserved']({ p .. id }, { payload, now })
  elseif op == 'L' then
    local id = nextField()
    local payload = nextArg()
    steps['lqbHorizonReleased']({ p .. id }, { now, payload })
  elseif op == 'C' then
    -- A delete's completion ('d'): the job leaves the queue first, by its reserved payload,
    -- and is complete only if it was still there: reserved, or moved back to the list by a
    -- migration (a late delete takes that copy). One a worker took again is that run's.
    local set = flagsOf(flags)
    local member = nil
    if set.removing then
      member = nextArg()
    end
    local id = nextField()
    local retryOf = nil
    if set.retry then
      retryOf = nextField()
    end
    local runtime, tagCount = field, 0
    local colon = string.find(field, ':', 1, true)
    if colon then
      runtime = string.sub(field, 1, colon - 1)
      tagCount = tonumber(string.sub(field, colon + 1)) or 0
    end
    if set.runtimeArg then
      runtime = nextField()
    end
    local payload, tags = '', noTags
    if tagCount > 0 then
      payload = member or nextArg()
      tags = {}
      for i = 1, tagCount do
        tags[i] = nextField()
      end
    end
    if member == nil or deleted(member) then
      complete(id, set.failing, set.silenced, retryOf, runtime, payload, tags)
    end
  elseif op == 'Z' then
    deleted(nextArg())
  elseif op == 'F' then
    -- A failure moves the job out of the lists its completion put it on: those go first.
    settle()
    local args = {}
    for i = 1, 12 + tonumber(field) do
      args[i] = nextArg()
    end
    local id = args[1]
    steps['lqbHorizonFailed']({ p .. id, p .. 'failed_jobs', p .. 'recent_failed_jobs', p .. 'pending_jobs', p .. 'completed_jobs',
      p .. 'silenced_jobs' }, args)
  else
    return redis.error_reply('lqbHorizonBatch: unknown event ' .. op)
  end
end
settle()
return 1`,
  ].join('\n');
}

/**
 * A push and its JobPushed records in one step, on Horizon's client: the queue's push-once file
 * and pushed.lua as functions (the same files, as the batch has them), so the payload is sent
 * once and the push and its pending record take one round trip.
 *
 * Its strings come in four arguments, as a call's cost on Node's side is mostly per argument
 * (each one converted, measured and written apart: some 2,000 instructions, so that 19 of them
 * cost a call 27k more than 7):
 * ARGV[1] the payload; ARGV[2] the job's own strings (PushedOnceJob), ARGV[3] those of its
 * queue and name (PushedOnceContext), which a producer packs once and sends as they are for
 * every push of that queue and class, ARGV[4] those of now (PushedOnceNow), packed once a
 * tick; each packed by packFields. Horizon's client has no key prefix, so the queue's keys come
 * spelled in full, the app's prefix included; none is declared, as Horizon's records are never
 * on a Redis Cluster (see batchSource). When an earlier send of this push went through, it had
 * written the records too. Returns 1 when it pushed now, else 0.
 */
function pushedOnceSource(): string {
  return [
    '-- pushed once: a push and its Horizon records in one round trip (see steps.ts, which builds this script).',
    `local function push(KEYS, ARGV)\n${luaSource('lqbPushOnce')}\nend`,
    `local function pushed(KEYS, ARGV)\n${stepSource(STEPS.lqbHorizonPushed.file)}\nend`,
    UNPACK_FIELDS_LUA,
    `local job, context, now = unpackFields(ARGV[2]), unpackFields(ARGV[3]), unpackFields(ARGV[4])
local marker, id, due = job[1], job[2], job[3]
local list, notify, delayed, markerMs, connection, queue, name, prefix = unpack(context)
if push({ list, notify, delayed, marker }, { ARGV[1], due, markerMs }) == 0 then
  return 0
end
pushed({ prefix .. 'recent_jobs', prefix .. 'pending_jobs', prefix .. id, prefix .. 'monitoring' },
  { id, connection, queue, name, ARGV[1], now[1], now[2], now[3], prefix, unpack(job, 4) })
return 1`,
  ].join('\n');
}

/** ARGV[2] of the pushed-once step: the push's marker key (the app's prefix included), the job's id, when it is due ('' for now), its tags. */
export type PushedOnceJob = [marker: string, id: string, due: string, ...tags: string[]];
/** ARGV[3]: the queue's list, notify list and delayed zset (the app's prefix included), the marker's ms, then the connection, queue, name and Horizon's prefix of pushed.lua. */
export type PushedOnceContext = [
  list: string,
  notify: string,
  delayed: string,
  markerMs: string,
  connection: string,
  queue: string,
  name: string,
  prefix: string,
];
/** ARGV[4]: now, minus now, and when the job's hash expires (pushed.lua's ARGV[6] to ARGV[8]). */
export type PushedOnceNow = [now: string, score: string, expiresAt: string];

/** The push and its records (see pushedOnceSource), each packed argument made by packFields: 1 when this send pushed the job, 0 when an earlier one had. */
export function runPushedOnce(client: RedisClient, payload: string, job: string, context: string, now: string): Promise<number> {
  return callCommand(client, 'lqbHorizonPushedOnce', [payload, job, context, now]);
}

/**
 * Strings sent as one argument: each as its length in bytes, ':' and itself, which
 * UNPACK_FIELDS_LUA reads back exactly, whatever the strings hold.
 */
export function packFields(fields: readonly string[]): string {
  let packed = '';
  for (const field of fields) packed += `${Buffer.byteLength(field)}:${field}`;
  return packed;
}

/** packFields read back, in Lua: the list of the strings. */
const UNPACK_FIELDS_LUA = `local function unpackFields(packed)
  local fields, at = {}, 1
  while at <= #packed do
    local colon = string.find(packed, ':', at, true)
    local last = colon + tonumber(string.sub(packed, at, colon - 1))
    fields[#fields + 1] = string.sub(packed, colon + 1, last)
    at = last + 1
  end
  return fields
end`;

/** Runs a step: its keys, then its arguments (a step of no fixed key count is told how many). */
export function runHorizonStep<T>(client: RedisClient, step: HorizonStep, keys: string[], args: (string | number | Buffer)[]): Promise<T> {
  return callCommand(client, step, STEPS[step].keys === undefined ? [keys.length, ...keys, ...args] : [...keys, ...args]);
}

/** Calls a command register() defined on the client, sent again while Redis is busy with a script. */
function callCommand<T>(client: RedisClient, name: string, args: (string | number | Buffer)[]): Promise<T> {
  register(client);
  const command = (client as unknown as Record<string, (...a: (string | number | Buffer)[]) => Promise<T>>)[name]!;
  return whileBusy(() => command.apply(client, args));
}

/** Now as Horizon stamps a record, and the expiries made from it (see HorizonRecorder's stamp). */
export interface HorizonStamp {
  /** microtime(true) as PHP prints it. */
  readonly now: string;
  /** Minus now, printed the same way: the lists' score. */
  readonly score: string;
  /** The whole second. */
  readonly at: number;
  /** When a completed job's hash expires (at + trim.completed), and a monitored one's (at + trim.monitored). */
  readonly completedAt: string;
  readonly monitoredAt: string;
  /** The batch's token for it, `T<now>:<completedAt>:<monitoredAt>`, when each is digits and dots and score is minus now; else undefined (sent as arguments). */
  readonly token: string | undefined;
}

/** A completed job (JobDeleted) as the batch sends it: what the completed step is given, in short. */
export interface BatchedCompletion {
  id: string;
  queue: string;
  name: string;
  /** The runtime in ms as PHP prints round($ms, 2). */
  runtime: string;
  failing: boolean;
  silenced: boolean;
  retryOf: string | undefined;
  /** The reserved payload: sent only with tags (only a job with tags can be monitored). */
  payload: string | Buffer;
  tags: readonly string[];
}

/** A time or a runtime may ride in a token when it is digits and dots (always, short of 10^15). */
export const PLAIN_NUMBER = /^[0-9.]+$/;

/**
 * Events as the batch step reads them: each a token in one string (`R` reserved, `L` released,
 * `C` completed, `F` failed, `Z` a delete alone; `T` a new stamp, `Q` and `N` a new queue and job
 * name for the completions after them), the short strings that cannot ride in it (ids, names,
 * tags) packed together in one more, and only the payloads (and a failure's strings) as
 * arguments of their own: a completed job's delete sends its payload alone, as a ZREM would.
 */
export class HorizonEvents {
  ops = '';
  /** The short strings, in the order the events read them (packed for the step by runHorizonEvents). */
  fields: string[] = [];
  /** The payloads, and a failure's strings, in the order the events read them. */
  args: (string | Buffer)[] = [];
  private stamp: HorizonStamp | undefined;
  private queue: string | undefined;
  private name: string | undefined;

  /** The stamp of the events that follow, said only when it is new to these events. */
  at(stamp: HorizonStamp): void {
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    if (stamp.token !== undefined) this.ops += stamp.token;
    else {
      this.ops += 'Ta';
      this.fields.push(stamp.now, stamp.score, stamp.completedAt, stamp.monitoredAt);
    }
  }

  /** JobReserved of the job whose hash is PREFIX + id. */
  reserved(id: string, payload: string | Buffer): void {
    this.ops += 'R';
    this.fields.push(id);
    this.args.push(payload);
  }

  /** JobReleased (and each job of a migration). */
  released(id: string, payload: string | Buffer): void {
    this.ops += 'L';
    this.fields.push(id);
    this.args.push(payload);
  }

  /**
   * JobDeleted: completed (or, failing, about to be failed). `removing`: the job is first taken
   * out of the step's reserved zset (KEYS[1]) by its payload (the reserved one, sent once for
   * both), and is complete only if it was there.
   */
  completed(job: BatchedCompletion, { removing = false }: { removing?: boolean } = {}): void {
    const fields = this.fields;
    if (job.queue !== this.queue) {
      this.queue = job.queue;
      this.ops += 'Q';
      fields.push(job.queue);
    }
    if (job.name !== this.name) {
      this.name = job.name;
      this.ops += 'N';
      fields.push(job.name);
    }
    const inline = PLAIN_NUMBER.test(job.runtime);
    let token = 'C';
    if (removing) token += 'd';
    if (job.failing) token += 'f';
    if (job.silenced) token += 's';
    if (job.retryOf !== undefined) token += 'y';
    token += inline ? job.runtime : 'r';
    if (job.tags.length > 0) token += `:${job.tags.length}`;
    this.ops += token;
    if (removing || job.tags.length > 0) this.args.push(job.payload);
    fields.push(job.id);
    if (job.retryOf !== undefined) fields.push(job.retryOf);
    if (!inline) fields.push(job.runtime);
    if (job.tags.length > 0) fields.push(...job.tags);
  }

  /** JobFailed: the failed step's own arguments (its keys are made from the first, the id). */
  failed(args: readonly (string | Buffer)[], tagCount: number): void {
    this.ops += `F${tagCount}`;
    this.args.push(...args);
  }

  /** A job out of the step's reserved zset (KEYS[1]), or its list (a late delete), with no record: one deleted to be failed. */
  deletedOnly(member: string | Buffer): void {
    this.ops += 'Z';
    this.args.push(member);
  }
}

/** The batch step on `client` with these events; `keys`: the reserved zset its deletes name, if any. */
export function runHorizonEvents(
  client: RedisClient,
  keys: readonly string[],
  prefix: string,
  connection: string,
  events: HorizonEvents,
): Promise<unknown> {
  return callCommand(client, 'lqbHorizonBatch', [
    keys.length,
    ...keys,
    events.ops,
    // Two packs joined are the pack of both lists: the events' strings are not copied behind the two.
    packFields([prefix, connection]) + packFields(events.fields),
    ...events.args,
  ]);
}

/**
 * The worker's events of one turn of the event loop, sent as one batch step: a worker running
 * many jobs at once ends many of them together, and one call for all of them costs far less than
 * one each (each command's encoding, write and reply). Every event of a batch settles with the
 * batch's one promise.
 */
export class HorizonBatch {
  private events = new HorizonEvents();
  private settle: Settlement<void> | undefined;
  /** A batch is on its way: the next one waits for its reply, gathering what comes meanwhile. */
  private sending = false;

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
    private readonly connection: string,
  ) {}

  reserved(stamp: HorizonStamp, id: string, payload: string | Buffer): Promise<void> {
    const settled = this.open(stamp);
    this.events.reserved(id, payload);
    return settled;
  }

  released(stamp: HorizonStamp, id: string, payload: string | Buffer): Promise<void> {
    const settled = this.open(stamp);
    this.events.released(id, payload);
    return settled;
  }

  completed(stamp: HorizonStamp, job: BatchedCompletion): Promise<void> {
    const settled = this.open(stamp);
    this.events.completed(job);
    return settled;
  }

  failed(stamp: HorizonStamp, args: readonly (string | Buffer)[], tagCount: number): Promise<void> {
    const settled = this.open(stamp);
    this.events.failed(args, tagCount);
    return settled;
  }

  /** The batch's promise, a flush on the next turn for a new one, and the stamp of what follows. */
  private open(stamp: HorizonStamp): Promise<void> {
    if (!this.settle) {
      this.settle = settlement();
      if (!this.sending) setImmediate(() => void this.flush());
    }
    this.events.at(stamp);
    return this.settle.promise;
  }

  private async flush(): Promise<void> {
    const settle = this.settle!;
    const events = this.events;
    this.sending = true;
    this.settle = undefined;
    this.events = new HorizonEvents();
    try {
      await runHorizonEvents(this.client, [], this.prefix, this.connection, events);
      settle.resolve();
    } catch (error) {
      settle.reject(error);
    } finally {
      this.sending = false;
      // What came while this batch was on its way goes next, in one call.
      if (this.settle) setImmediate(() => void this.flush());
    }
  }
}
