-- reserve: what a worker does before and during a pop, in one round trip. First due delayed
-- jobs, then (unless told not to) expired reservations, move onto the queue, as Laravel does
-- before every pop; then up to COUNT jobs are reserved, each exactly as pop.lua reserves one.
-- KEYS[1]  the queue's list (queues:NAME)
-- KEYS[2]  its delayed zset (queues:NAME:delayed)
-- KEYS[3]  its reserved zset (queues:NAME:reserved)
-- KEYS[4]  its notify list (queues:NAME:notify)
-- ARGV[1]  now (UNIX seconds)
-- ARGV[2]  when the reservations run out (now + retry_after)
-- ARGV[3]  COUNT: the most jobs to reserve
-- ARGV[4]  1 to give back expired reservations, 0 when retry_after is null
-- ARGV[5]  the most jobs to migrate from each zset; all when not positive
-- Returns {payload1, reserved1, payload2, reserved2, …}, empty when the queue is.
local function migrate(from)
  local limit = tonumber(ARGV[5])
  local due
  if limit and limit > 0 then
    due = redis.call('ZRANGEBYSCORE', from, '-inf', ARGV[1], 'LIMIT', 0, limit)
  else
    due = redis.call('ZRANGEBYSCORE', from, '-inf', ARGV[1])
  end
  if #due == 0 then
    return
  end
  redis.call('ZREMRANGEBYRANK', from, 0, #due - 1)
  for first = 1, #due, 100 do
    local last = math.min(first + 99, #due)
    redis.call('RPUSH', KEYS[1], unpack(due, first, last))
    local tokens = {}
    for i = first, last do
      tokens[#tokens + 1] = 1
    end
    redis.call('RPUSH', KEYS[4], unpack(tokens))
  end
end

migrate(KEYS[2])
if ARGV[4] == '1' then
  migrate(KEYS[3])
end

local taken = {}
for _ = 1, tonumber(ARGV[3]) do
  local payload = redis.call('LPOP', KEYS[1])
  if not payload then
    break
  end
  local reserved = payload
  local decoded, job = pcall(cjson.decode, payload)
  if decoded and type(job) == 'table' and type(job.attempts) == 'number' then
    job.attempts = job.attempts + 1
    local encoded, text = pcall(cjson.encode, job)
    if encoded then
      reserved = text
    end
  end
  redis.call('ZADD', KEYS[3], ARGV[2], reserved)
  redis.call('LPOP', KEYS[4])
  taken[#taken + 1] = payload
  taken[#taken + 1] = reserved
end
return taken
