-- give back: undo a reservation without counting it as an attempt, for a job this worker
-- cannot run (a PHP worker sharing the queue can). As release, only a job still reserved: one
-- whose reservation ran out is on the list again already (its attempt counted, as Laravel counts it).
-- KEYS[1]  the queue's delayed zset (queues:NAME:delayed)
-- KEYS[2]  its reserved zset (queues:NAME:reserved)
-- ARGV[1]  the reserved payload, byte for byte as pop returned it
-- ARGV[2]  the payload as pushed (its attempts not yet counted up)
-- ARGV[3]  when it may be taken again (UNIX seconds)
-- ARGV[4]  the job's Horizon record (its prefix and id), to mark it pending here with the payload
--          as pushed (JobReleased's fields), in order with the give-back; else '' or absent
-- ARGV[5]  now as PHP's microtime(true) prints it, for that record
-- Returns 1, or 0 when the reservation was gone and nothing was put back.
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
if ARGV[4] and ARGV[4] ~= '' then
  redis.call('HMSET', ARGV[4], 'status', 'pending', 'payload', ARGV[2], 'updated_at', ARGV[5])
end
return 1
