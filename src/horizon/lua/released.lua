-- released, migrated: the job is waiting again (JobReleased: MarkJobAsReleased; JobsMigrated:
-- MarkJobsAsMigrated, which does the same for every job a migration moved). Each hash gets
-- status pending, the payload as it now sits in the queue, and the time.
-- KEYS     the jobs' hashes, one per job
-- ARGV[1]  now, as PHP's microtime(true) prints it
-- ARGV[2…] the payloads, in the order of KEYS
-- Returns how many hashes were written.
for i = 1, #KEYS do
  redis.call('HMSET', KEYS[i], 'status', 'pending', 'payload', ARGV[i + 1], 'updated_at', ARGV[1])
end
return #KEYS
