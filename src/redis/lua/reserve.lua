-- reserve: what a worker does before and during a pop, in one round trip. First due delayed
-- jobs, then (when asked) expired reservations, move onto the queue, as Laravel does before
-- every pop; then up to COUNT jobs are reserved, each as Laravel's pop reserves one: its
-- payload decoded and encoded again by cjson with attempts + 1 is what goes into the zset.
-- With COUNT 0 this is Laravel's migrate; with COUNT 1 and both migrations, its pop.
-- "Now" is Redis's own clock, read when the step runs: a reply held up by a stalled server
-- (DEBUG SLEEP, CLIENT PAUSE) cannot leave a reservation that ran out before it began.
-- KEYS[1]  the queue's list (queues:NAME)
-- KEYS[2]  its delayed zset (queues:NAME:delayed)
-- KEYS[3]  its reserved zset (queues:NAME:reserved)
-- KEYS[4]  its notify list (queues:NAME:notify)
-- ARGV[1]  now (UNIX seconds), or '' for Redis's clock (TIME, whole seconds as Laravel's time())
-- ARGV[2]  retry_after: the reservations run out this many seconds after now
-- ARGV[3]  COUNT: the most jobs to reserve
-- ARGV[4]  1 to move due delayed jobs first, else 0
-- ARGV[5]  1 to give back expired reservations first (not when retry_after is null), else 0
-- ARGV[6]  the most jobs to move from each zset; all when not positive
-- ARGV[7]  the most payload bytes to reserve (the first job is taken whatever its size); none when not positive
-- ARGV[8]  1 to say which payloads the migrations moved (for Horizon's records), else 0 or absent
-- ARGV[9]  Horizon's prefix, to write here its records of what this step did, else '' or absent:
--          each job moved is pending again (JobsMigrated), each job taken reserved (JobReserved),
--          the fields src/horizon/lua/released.lua and reserved.lua write, in this round trip
--          and so in order with the moves themselves
-- ARGV[10] now as PHP's microtime(true) prints it, those records' time
-- Returns {payload1, reserved1, payload2, reserved2, …}, empty when the queue is; with ARGV[8]
-- 1, led by how many payloads were moved and those payloads: {n, moved1, …, movedn, payload1, …}.
-- Redis 3.2 and 4 allow writes after TIME only with effects replication (5+ always use it).
if redis.replicate_commands then
  redis.replicate_commands()
end
local now = tonumber(ARGV[1])
if not now then
  now = tonumber(redis.call('TIME')[1])
end
local reservedUntil = now + tonumber(ARGV[2])
local byteCap = tonumber(ARGV[7]) or 0
-- Only a worker that records for Horizon is sent what moved: the others pay nothing for it.
local moved = nil
if ARGV[8] == '1' then
  moved = {}
end

-- Horizon's records, written under its prefix (Horizon's keys carry no app prefix; Horizon runs
-- on no Redis Cluster, so no key need be declared). A job's record is keyed as Horizon's
-- JobPayload::id() reads it, uuid ?? id, made a string as PHP makes it; a payload that is not a
-- JSON object is left without one.
local horizon = ARGV[9]
if horizon == '' then
  horizon = nil
end
local function horizonKey(job)
  local id = job.uuid
  if id == nil or id == cjson.null then
    id = job.id
  end
  if type(id) == 'number' then
    if id == math.floor(id) and math.abs(id) < 2 ^ 63 then
      id = string.format('%d', id)
    else
      id = string.format('%.17g', id)
    end
  elseif id == true then
    id = '1'
  elseif type(id) ~= 'string' then
    id = ''
  end
  return horizon .. id
end
local function recordMigrated(payload)
  local decoded, job = pcall(cjson.decode, payload)
  if decoded and type(job) == 'table' then
    redis.call('HMSET', horizonKey(job), 'status', 'pending', 'payload', payload, 'updated_at', ARGV[10])
  end
end

local function migrate(from)
  local limit = tonumber(ARGV[6])
  local due
  if limit and limit > 0 then
    due = redis.call('ZRANGEBYSCORE', from, '-inf', now, 'LIMIT', 0, limit)
  else
    due = redis.call('ZRANGEBYSCORE', from, '-inf', now)
  end
  if #due == 0 then
    return
  end
  -- The due members are the lowest ranks, so they go by rank in one step.
  redis.call('ZREMRANGEBYRANK', from, 0, #due - 1)
  -- In slices, to stay well inside Lua's limit on unpacked arguments.
  for first = 1, #due, 100 do
    local last = math.min(first + 99, #due)
    redis.call('RPUSH', KEYS[1], unpack(due, first, last))
    local tokens = {}
    for i = first, last do
      tokens[#tokens + 1] = 1
    end
    redis.call('RPUSH', KEYS[4], unpack(tokens))
  end
  for i = 1, #due do
    if moved then
      moved[#moved + 1] = due[i]
    end
    if horizon then
      recordMigrated(due[i])
    end
  end
end

if ARGV[4] == '1' then
  migrate(KEYS[2])
end
if ARGV[5] == '1' then
  migrate(KEYS[3])
end

local taken = {}
local bytes = 0
for _ = 1, tonumber(ARGV[3]) do
  -- Past the byte cap no further job is taken: re-encoding a few huge payloads in one call
  -- would hold Redis (and the worker's memory) for as long as all of them together.
  if byteCap > 0 and bytes >= byteCap then
    break
  end
  local payload = redis.call('LPOP', KEYS[1])
  if not payload then
    break
  end
  bytes = bytes + #payload
  -- A payload that is not a job (not JSON, no numeric attempts) is reserved as it is: the
  -- worker then fails it with the reason, where an error here would lose it.
  local reserved = payload
  local decoded, job = pcall(cjson.decode, payload)
  if decoded and type(job) == 'table' and type(job.attempts) == 'number' then
    job.attempts = job.attempts + 1
    local encoded, text = pcall(cjson.encode, job)
    if encoded then
      reserved = text
    end
  end
  redis.call('ZADD', KEYS[3], reservedUntil, reserved)
  if horizon and decoded and type(job) == 'table' then
    redis.call('HMSET', horizonKey(job), 'status', 'reserved', 'payload', reserved, 'updated_at', ARGV[10], 'reserved_at', ARGV[10])
  end
  redis.call('LPOP', KEYS[4])
  taken[#taken + 1] = payload
  taken[#taken + 1] = reserved
end
if moved then
  local reply = { #moved }
  for i = 1, #moved do
    reply[#reply + 1] = moved[i]
  end
  for i = 1, #taken do
    reply[#reply + 1] = taken[i]
  end
  return reply
end
return taken
