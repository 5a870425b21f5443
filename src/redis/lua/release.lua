-- release: take a reserved job back and schedule it to run again.
-- KEYS[1]  the queue's delayed zset (queues:NAME:delayed)
-- KEYS[2]  its reserved zset (queues:NAME:reserved)
-- ARGV[1]  the reserved payload, byte for byte as pop returned it
-- ARGV[2]  when it may run again (UNIX seconds)
-- ARGV[3]  the job's Horizon record (its prefix and id), to mark it pending here as JobReleased
--          does (src/horizon/lua/released.lua's fields), in order with the release; else '' or absent
-- ARGV[4]  now as PHP's microtime(true) prints it, for that record
-- Returns 1.
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
if ARGV[3] and ARGV[3] ~= '' then
  redis.call('HMSET', ARGV[3], 'status', 'pending', 'payload', ARGV[1], 'updated_at', ARGV[4])
end
return 1
