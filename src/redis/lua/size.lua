-- size: every job a queue holds, ready, delayed or reserved.
-- KEYS[1]  the queue's list    KEYS[2]  its delayed zset    KEYS[3]  its reserved zset
-- Returns the sum.
return redis.call('LLEN', KEYS[1]) + redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3])
