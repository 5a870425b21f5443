-- pushed: Horizon's records for a job its queue just pushed (JobPushed: StoreJob, then
-- StoreMonitoredTags). The job becomes the newest of the recent and pending lists, its hash
-- holds what the dashboard shows, and every tag someone monitors gains it. Hashes are written
-- with HMSET in these steps, as Horizon writes them: it takes several fields before Redis 4 too.
-- KEYS[1]  recent_jobs          KEYS[2]  pending_jobs
-- KEYS[3]  the job's hash (PREFIX .. id)    KEYS[4]  monitoring (the set of monitored tags)
-- ARGV[1]  id      ARGV[2]  connection     ARGV[3]  queue     ARGV[4]  name (displayName)
-- ARGV[5]  the payload as Horizon's queue pushed it
-- ARGV[6]  now, as PHP's microtime(true) prints it     ARGV[7]  minus now, printed the same way
-- ARGV[8]  when the hash expires (UNIX seconds: now + trim.pending)
-- ARGV[9]  PREFIX, which a monitored tag's sorted set is named under
-- ARGV[10…] the job's tags
-- Returns how many monitored tags gained the job.
local id = ARGV[1]
redis.call('ZADD', KEYS[1], ARGV[7], id)
redis.call('ZADD', KEYS[2], ARGV[7], id)
redis.call('HMSET', KEYS[3],
  'id', id, 'connection', ARGV[2], 'queue', ARGV[3], 'name', ARGV[4],
  'status', 'pending', 'payload', ARGV[5], 'created_at', ARGV[6], 'updated_at', ARGV[6])
redis.call('EXPIREAT', KEYS[3], ARGV[8])
local monitored = 0
for i = 10, #ARGV do
  if redis.call('SISMEMBER', KEYS[4], ARGV[i]) == 1 then
    redis.call('ZADD', ARGV[9] .. ARGV[i], ARGV[6], id)
    monitored = monitored + 1
  end
end
return monitored
