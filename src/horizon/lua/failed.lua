-- failed: Laravel failed the job (its JobFailed, which Horizon turns into its own: MarkJobAsFailed,
-- StoreTagsForFailedJob). It leaves the pending, completed and silenced lists for the failed
-- ones; its hash keeps the reserved payload and the exception; each tag's failed:TAG set gains it.
-- KEYS[1]  the job's hash        KEYS[2]  failed_jobs       KEYS[3]  recent_failed_jobs
-- KEYS[4]  pending_jobs          KEYS[5]  completed_jobs    KEYS[6]  silenced_jobs
-- ARGV[1]  id      ARGV[2]  connection     ARGV[3]  queue     ARGV[4]  name
-- ARGV[5]  the reserved payload  ARGV[6]  the exception, as text     ARGV[7]  its context, JSON ('' for none)
-- ARGV[8]  now, as PHP's microtime(true) prints it     ARGV[9]  minus now, printed the same way
-- ARGV[10] when the hash expires (now + trim.failed)
-- ARGV[11] seconds a failed:TAG set lives after its latest job (trim.failed)
-- ARGV[12] PREFIX, which the failed:TAG sets are named under
-- ARGV[13…] the job's tags
-- Returns 1.
local id = ARGV[1]
redis.call('ZADD', KEYS[2], ARGV[9], id)
redis.call('ZADD', KEYS[3], ARGV[9], id)
redis.call('ZREM', KEYS[4], id)
redis.call('ZREM', KEYS[5], id)
redis.call('ZREM', KEYS[6], id)
redis.call('HMSET', KEYS[1],
  'id', id, 'connection', ARGV[2], 'queue', ARGV[3], 'name', ARGV[4], 'status', 'failed',
  'payload', ARGV[5], 'exception', ARGV[6], 'context', ARGV[7], 'failed_at', ARGV[8])
redis.call('EXPIREAT', KEYS[1], ARGV[10])
for i = 13, #ARGV do
  local key = ARGV[12] .. 'failed:' .. ARGV[i]
  redis.call('ZADD', key, ARGV[8], id)
  redis.call('EXPIRE', key, ARGV[11])
end
return 1
