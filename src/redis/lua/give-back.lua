-- give back: undo a reservation without counting it as an attempt, for a job this worker
-- cannot run (a PHP worker sharing the queue can).
-- KEYS[1]  the queue's delayed zset (queues:NAME:delayed)
-- KEYS[2]  its reserved zset (queues:NAME:reserved)
-- ARGV[1]  the reserved payload, byte for byte as pop returned it
-- ARGV[2]  the payload as pushed (its attempts not yet counted up)
-- ARGV[3]  when it may be taken again (UNIX seconds)
-- Returns 1.
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
return 1
