-- release: take a reserved job back and schedule it to run again. Only a job still reserved
-- is put back: one whose reservation ran out before this came (a stalled Redis) was moved back
-- to the list by a migration already, and a second copy would run it once more than that
-- (Laravel's own release adds one all the same).
-- KEYS[1]  the queue's delayed zset (queues:NAME:delayed)
-- KEYS[2]  its reserved zset (queues:NAME:reserved)
-- ARGV[1]  the reserved payload, byte for byte as pop returned it
-- ARGV[2]  when it may run again (UNIX seconds)
-- ARGV[3]  the job's Horizon record (its prefix and id), to mark it pending here as JobReleased
--          does (src/horizon/lua/released.lua's fields), in order with the release; else '' or absent
-- ARGV[4]  now as PHP's microtime(true) prints it, for that record
-- Returns 1, or 0 when the reservation was gone and nothing was put back.
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
if ARGV[3] and ARGV[3] ~= '' then
  redis.call('HMSET', ARGV[3], 'status', 'pending', 'payload', ARGV[1], 'updated_at', ARGV[4])
end
return 1
