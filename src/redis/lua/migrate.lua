-- migrate: move the jobs whose time has come from a zset to the end of the queue.
-- KEYS[1]  the zset to move from (queues:NAME:delayed or queues:NAME:reserved)
-- KEYS[2]  the queue's list (queues:NAME)
-- KEYS[3]  its notify list (queues:NAME:notify)
-- ARGV[1]  now (UNIX seconds): members scored at or before it are due
-- ARGV[2]  the most to move in one call; all of them when absent or not positive
-- Returns the moved payloads, earliest first.
local limit = tonumber(ARGV[2])
local due
if limit and limit > 0 then
  due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, limit)
else
  due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
end
if #due == 0 then
  return due
end
-- The due members are the lowest ranks, so they go by rank in one step.
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #due - 1)
-- In slices, to stay well inside Lua's limit on unpacked arguments.
for first = 1, #due, 100 do
  local last = math.min(first + 99, #due)
  redis.call('RPUSH', KEYS[2], unpack(due, first, last))
  local tokens = {}
  for i = first, last do
    tokens[#tokens + 1] = 1
  end
  redis.call('RPUSH', KEYS[3], unpack(tokens))
end
return due
