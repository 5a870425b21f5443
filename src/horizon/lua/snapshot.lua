-- snapshot: Horizon's metrics snapshot (horizon:snapshot, which a PHP app schedules every five
-- minutes): under a lock, each measured job's and queue's throughput and runtime since the last
-- snapshot become a point of its snapshot:… sorted set (the oldest points beyond the kept number
-- dropped), and the counters start again.
-- KEYS[1]  metrics:snapshot (the lock)     KEYS[2]  measured_jobs     KEYS[3]  measured_queues
-- KEYS[4]  last_snapshot_at
-- ARGV[1]  now (UNIX seconds)     ARGV[2]  seconds the lock is held (metrics.snapshot_lock − 30)
-- ARGV[3]  points kept per job    ARGV[4]  points kept per queue     ARGV[5]  PREFIX
-- Returns 0 when another snapshot holds the lock, else 1 + how many points were stored.
if redis.call('SETNX', KEYS[1], 1) == 0 then
  return 0
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
local now = ARGV[1]
local prefix = ARGV[5]

-- A counter as PHP's json_encode writes what phpredis read: a string, or false when it was not there.
local function json(value)
  if not value then
    return 'false'
  end
  local escaped = value:gsub('[%c"\\/]', function(c)
    if c == '"' or c == '\\' or c == '/' then
      return '\\' .. c
    end
    return string.format('\\u%04x', c:byte())
  end)
  return '"' .. escaped .. '"'
end

local stored = 0
local function snapshot(set, kind, keep, wait)
  for _, member in ipairs(redis.call('SMEMBERS', set)) do
    -- Horizon reads the name back from the member as /kind:(.*)$/ does.
    local name = member:match(kind .. ':(.*)$') or member
    local key = prefix .. kind .. ':' .. name
    local counters = redis.call('HMGET', key, 'throughput', 'runtime')
    redis.call('DEL', key)
    local point = '{"throughput":' .. json(counters[1]) .. ',"runtime":' .. json(counters[2]) .. wait .. ',"time":' .. now .. '}'
    local series = prefix .. 'snapshot:' .. kind .. ':' .. name
    redis.call('ZADD', series, now, point)
    redis.call('ZREMRANGEBYRANK', series, 0, -math.abs(1 + tonumber(keep)))
    stored = stored + 1
  end
end
snapshot(KEYS[2], 'job', ARGV[3], '')
-- Horizon 5's queue points carry a wait that its own calculation leaves at 0 (it looks the
-- queue up among the supervisors' "connection:queue" names by its bare name).
snapshot(KEYS[3], 'queue', ARGV[4], ',"wait":0')
redis.call('SET', KEYS[4], now)
return 1 + stored
