-- clear: delete a queue with everything it holds.
-- KEYS[1]  the queue's list    KEYS[2]  its delayed zset    KEYS[3]  its reserved zset
-- KEYS[4]  its notify list
-- Returns how many jobs were deleted (as size counts them).
local count = redis.call('LLEN', KEYS[1]) + redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return count
