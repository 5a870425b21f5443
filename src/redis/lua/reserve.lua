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
-- ARGV[11] '1' with share on: take only jobs this worker handles (below), looking along the list
--          past the others; else '' or absent to take the head whatever it holds, as Laravel's pop
-- ARGV[12] the anchor's index when the last step left it, or -1 for none (look from the head)
-- ARGV[13] the anchor: the last entry the last step looked at and left, its exact bytes, or ''
-- ARGV[14] the most entries one step looks at
-- ARGV[15] the most bytes of entries one step looks at (it may read one window's worth past it)
-- ARGV[16] the most entries read from the list at once (the window; the first read is COUNT, doubling)
-- ARGV[17…] the names this worker takes, as JSON spells them inside a string (App\\Jobs\\X), a
--          name taken in part followed by a tab and its percent (a canary share, src/queue/take.ts)
-- Returns {payload1, reserved1, payload2, reserved2, …}, empty when the queue is; with ARGV[8]
-- 1, led by how many payloads were moved and those payloads: {n, moved1, …, movedn, payload1, …};
-- with ARGV[11] '1', led (before all that) by the next step's anchor and whether this one looked
-- to the list's tail: {anchorIndex, anchor, 1 or 0}.
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
local count = tonumber(ARGV[3])

-- Reserves one payload the list no longer holds, as Laravel's pop reserves the head: attempts + 1
-- in cjson's copy, that copy in :reserved until reservedUntil, one notify token spent, and
-- Horizon's reserved record when asked.
local function reserveTaken(payload)
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

-- Whether a byte cap (when there is one) leaves room to take another job: re-encoding a few huge
-- payloads in one call would hold Redis (and the worker's memory) as long as all of them together.
local function roomForAnother()
  return byteCap <= 0 or bytes < byteCap
end

-- Laravel's pop, COUNT times: the head of the list, whatever it holds.
local function takeHeads()
  for _ = 1, count do
    if not roomForAnother() then
      break
    end
    local payload = redis.call('LPOP', KEYS[1])
    if not payload then
      break
    end
    reserveTaken(payload)
  end
end

-- With share on: the value of a string field of the envelope ("displayName":"…"), as JSON
-- spells it, or nil. Read from the text, not decoded: a job's head holds it, and a payload this
-- worker leaves alone is never decoded at all. A quote inside the value is escaped (\"), so the
-- value ends at the first quote with an even number of backslashes before it.
local function fieldText(payload, field)
  local open = string.find(payload, field, 1, true)
  if not open then
    return nil
  end
  local from = open + #field
  local at = from
  while true do
    local quote = string.find(payload, '"', at, true)
    if not quote then
      return nil
    end
    local slashes = 0
    while quote - slashes - 1 >= from and string.byte(payload, quote - slashes - 1) == 92 do
      slashes = slashes + 1
    end
    if slashes % 2 == 0 then
      return string.sub(payload, from, quote - 1)
    end
    at = quote + 1
  end
end

-- handled[name] is true for a class taken whole, or the percent of its jobs taken (a canary
-- share, given as NAME<tab>PERCENT).
local handled = {}
for i = 17, #ARGV do
  local name, percent = string.match(ARGV[i], '^(.-)\t(%d+)$')
  if name then
    handled[name] = tonumber(percent)
  else
    handled[ARGV[i]] = true
  end
end

-- A job's bucket, 0 to 99, as src/queue/take.ts reckons it: its uuid's last four hex digits mod
-- 100; without a uuid, its id's last two characters as base-62 digits (Str::random's) mod 100.
local BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
local function bucket(payload)
  local uuid = fieldText(payload, '"uuid":"')
  if uuid and string.find(string.sub(uuid, -4), '^%x%x%x%x$') then
    return tonumber(string.sub(uuid, -4), 16) % 100
  end
  local id = fieldText(payload, '"id":"')
  if not id or #id < 2 then
    return nil
  end
  local high = string.find(BASE62, string.sub(id, -2, -2), 1, true)
  local low = string.find(BASE62, string.sub(id, -1), 1, true)
  if not high or not low then
    return nil
  end
  return ((high - 1) * 62 + (low - 1)) % 100
end

-- Whether a class found in a payload is taken: whole, or the job's bucket below its share.
local function takes(name, payload)
  local rule = name and handled[name]
  if rule == true then
    return true
  end
  if type(rule) ~= 'number' then
    return false
  end
  local b = bucket(payload)
  return b ~= nil and b < rule
end

-- Whether this worker takes the job: its displayName is a class it handles (a job's, a
-- listener's, a notification's or a mailable's class, a string job's), or else its commandName
-- is (a job whose displayName() is its own, a handler keyed by Laravel's wrapper class).
local function handles(payload)
  local name = fieldText(payload, '"displayName":"')
  if name and handled[name] ~= nil then
    return takes(name, payload)
  end
  name = fieldText(payload, '"commandName":"')
  return takes(name, payload)
end

-- Takes the entry at a 0-based index out of the list, that entry and no other even where the
-- list holds copies of the same bytes: at either end it is popped (the head is Laravel's own pop,
-- and the common case where Node has the queue to itself); elsewhere it is overwritten with a
-- marker no job can be (it is not JSON), and the one marker removed, counted from the nearer end.
local MARKER = '\0lqb:taking\0'
local function takeAt(index, length)
  if index == 0 then
    redis.call('LPOP', KEYS[1])
    return
  end
  if index == length - 1 then
    redis.call('RPOP', KEYS[1])
    return
  end
  redis.call('LSET', KEYS[1], index, MARKER)
  if index < length / 2 then
    redis.call('LREM', KEYS[1], 1, MARKER)
  else
    redis.call('LREM', KEYS[1], -1, MARKER)
  end
end

-- Where this step begins: just past the anchor, the last entry the last step looked at and left.
-- The list only grows at its tail (pushes and migrations append) and shrinks at its head (every
-- worker's pop) or where a Node worker took a job out, so the anchor is at its old index or
-- before it, and everything before it was looked at. Not found (popped, or taken), the look
-- begins at the head: it may look again at what it looked at, never skip what it did not.
local function startIndex()
  local anchorAt = tonumber(ARGV[12]) or -1
  local anchor = ARGV[13] or ''
  if anchorAt < 0 or anchor == '' then
    return 0
  end
  if redis.call('LINDEX', KEYS[1], anchorAt) == anchor then
    return anchorAt + 1
  end
  -- LPOS is Redis 6.0.6+: before it, every step looks from the head.
  local found = redis.pcall('LPOS', KEYS[1], anchor, 'MAXLEN', anchorAt + 1)
  if type(found) == 'number' then
    return found + 1
  end
  return 0
end

-- With share on: looks along the list from where the last step stopped for jobs this worker
-- takes, at most ARGV[14] entries and about ARGV[15] bytes of them, ARGV[16] entries read at a
-- time, and takes and reserves up to COUNT of them. Every other entry stays where it is,
-- untouched. Returns the next step's anchor (the last entry looked at and left, and its index),
-- and 1 when the look reached the list's tail (nothing more to look at now), else 0.
local ANCHOR_BYTES = 65536
local function takeHandled(anchorAt, anchor)
  local length = redis.call('LLEN', KEYS[1])
  local at = startIndex()
  local maxLooked = math.max(1, tonumber(ARGV[14]) or 1000)
  local maxBytes = math.max(1, tonumber(ARGV[15]) or 1048576)
  local window = math.max(1, tonumber(ARGV[16]) or 100)
  local looked, lookedBytes = 0, 0
  -- The anchor stays where it was until this step leaves another entry (at its new index).
  if at > 0 then
    anchorAt, anchor = at - 1, ARGV[13]
  end
  local full = false
  -- The first read is as many entries as jobs are wanted, each next one twice the last, up to
  -- the window: where the head is this worker's (a queue Node has to itself) a step reads what
  -- it takes and no more.
  local grow = math.max(1, count)
  while not full and at < length and looked < maxLooked and lookedBytes < maxBytes and roomForAnother() do
    -- The window: no more entries than are left to look at, nor than the bytes left would
    -- hold at the entries' size so far, so a step reads little past its byte bound.
    local size = math.min(grow, window, maxLooked - looked)
    grow = grow * 2
    if lookedBytes > 0 then
      size = math.min(size, math.max(1, math.floor((maxBytes - lookedBytes) * looked / lookedBytes)))
    end
    local entries = redis.call('LRANGE', KEYS[1], at, at + size - 1)
    if #entries == 0 then
      break
    end
    local base, removed = at, 0
    for i = 1, #entries do
      local entry = entries[i]
      local index = base + i - 1 - removed
      looked = looked + 1
      lookedBytes = lookedBytes + #entry
      if handles(entry) then
        takeAt(index, length)
        length = length - 1
        removed = removed + 1
        reserveTaken(entry)
        -- The entry after it now stands where it stood.
        at = index
        full = #taken >= count * 2 or not roomForAnother()
      else
        -- A huge entry makes a poor anchor (it goes to the worker and back every step): the
        -- last small one stands in, and the next step looks again at the few after it.
        if #entry <= ANCHOR_BYTES then
          anchorAt, anchor = index, entry
        end
        at = index + 1
      end
      if full or looked >= maxLooked or lookedBytes >= maxBytes then
        break
      end
    end
  end
  local atEnd = 0
  if at >= length then
    atEnd = 1
  end
  return anchorAt, anchor, atEnd
end

local lead = nil
if ARGV[11] == '1' then
  local anchorAt, anchor, atEnd = takeHandled(-1, '')
  lead = { anchorAt, anchor, atEnd }
else
  takeHeads()
end

local reply = {}
if lead then
  reply = lead
end
if moved then
  reply[#reply + 1] = #moved
  for i = 1, #moved do
    reply[#reply + 1] = moved[i]
  end
end
for i = 1, #taken do
  reply[#reply + 1] = taken[i]
end
return reply
