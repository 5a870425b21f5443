-- push once, many: push-once.lua for the pushes a producer sent in one turn (dispatches in flight),
-- in one step: each pushed (ready, or delayed until a moment) unless that very push ran already,
-- as its own marker says. The ready ones are appended in the order given, one notify token each,
-- as that many pushes in a row would leave them.
-- KEYS[1]    the queue's list (queues:NAME)
-- KEYS[2]    its notify list (queues:NAME:notify)
-- KEYS[3]    its delayed zset (queues:NAME:delayed)
-- KEYS[3+i]  the marker of push i (lqb-pushed:NAME:UUID)
-- ARGV[1]    how long the markers live (milliseconds): longer than the pusher retries
-- ARGV[2i]   '' to push job i ready, else when it is due (UNIX seconds) for the delayed zset
-- ARGV[2i+1] the payload of push i
-- Returns a list: 1 for each push made now, 0 for each an earlier send had made.
local pushed = {}
local ready = {}
for i = 1, #KEYS - 3 do
  if redis.call('SET', KEYS[3 + i], 1, 'NX', 'PX', ARGV[1]) then
    pushed[i] = 1
    local due, payload = ARGV[2 * i], ARGV[2 * i + 1]
    if due == '' then
      ready[#ready + 1] = payload
    else
      redis.call('ZADD', KEYS[3], due, payload)
    end
  else
    pushed[i] = 0
  end
end
-- A hundred at a time: unpack's stack has its limits.
for first = 1, #ready, 100 do
  local last = math.min(first + 99, #ready)
  redis.call('RPUSH', KEYS[1], unpack(ready, first, last))
  local tokens = {}
  for i = first, last do
    tokens[#tokens + 1] = 1
  end
  redis.call('RPUSH', KEYS[2], unpack(tokens))
end
return pushed
