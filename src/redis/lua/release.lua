-- release: take a reserved job back and schedule it to run again.
-- KEYS[1]  the queue's delayed zset (queues:NAME:delayed)
-- KEYS[2]  its reserved zset (queues:NAME:reserved)
-- ARGV[1]  the reserved payload, byte for byte as pop returned it
-- ARGV[2]  when it may run again (UNIX seconds)
-- Returns 1.
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
