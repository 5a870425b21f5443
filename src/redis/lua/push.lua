-- push: append a job to a queue and wake one blocked worker.
-- KEYS[1]  the queue's list (queues:NAME)
-- KEYS[2]  its notify list (queues:NAME:notify), one token per ready job
-- ARGV[1]  the payload
-- Returns the queue's length after the push.
local length = redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[2], 1)
return length
