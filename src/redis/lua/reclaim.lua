-- reclaim: a worker's reserve, held up by a stalled Redis, gave back one of that very worker's
-- running jobs as expired and reserved it again. The new reservation goes and the running one
-- comes back, renewed, so the job runs once, with the attempts it had.
-- KEYS[1]  the queue's reserved zset (queues:NAME:reserved)
-- ARGV[1]  retry_after (seconds)
-- ARGV[2]  the new reservation, as the reserve step wrote it
-- ARGV[3]  the running job's reservation, as it was reserved
-- Returns 1.
-- Redis 3.2 and 4 allow writes after TIME only with effects replication (5+ always use it).
if redis.replicate_commands then
  redis.replicate_commands()
end
local time = redis.call('TIME')
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[1], tonumber(time[1]) + tonumber(time[2]) / 1000000 + tonumber(ARGV[1]), ARGV[3])
return 1
