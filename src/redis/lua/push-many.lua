-- push: append jobs to a queue, one notify token each, which wakes a blocked worker. With one
-- payload this is Laravel's push; with several, the same effect as that many pushes in a row.
-- KEYS[1]  the queue's list (queues:NAME)
-- KEYS[2]  its notify list (queues:NAME:notify)
-- ARGV     the payloads, in order
-- Returns the queue's length after the push.
local length = 0
for first = 1, #ARGV, 100 do
  local last = math.min(first + 99, #ARGV)
  length = redis.call('RPUSH', KEYS[1], unpack(ARGV, first, last))
  local tokens = {}
  for i = first, last do
    tokens[#tokens + 1] = 1
  end
  redis.call('RPUSH', KEYS[2], unpack(tokens))
end
return length
