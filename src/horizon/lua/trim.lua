-- trim: what Horizon's master does as it loops (TrimRecentJobs, TrimFailedJobs,
-- TrimMonitoredJobs): each list loses the jobs older than its trim setting. The lists are
-- scored by minus the time, so "older than" is every score from minus the cut-off up.
-- KEYS[1]  recent_jobs      KEYS[2]  recent_failed_jobs     KEYS[3]  pending_jobs
-- KEYS[4]  completed_jobs   KEYS[5]  silenced_jobs          KEYS[6]  failed_jobs
-- KEYS[7]  monitored_jobs
-- ARGV[1]  now (UNIX seconds)
-- ARGV[2…8] the minutes each list keeps, in the order of KEYS (silenced: trim.completed)
-- Returns how many entries went.
local now = tonumber(ARGV[1])
local removed = 0
for i = 1, 7 do
  local cutoff = now - tonumber(ARGV[i + 1]) * 60
  removed = removed + redis.call('ZREMRANGEBYSCORE', KEYS[i], -cutoff, '+inf')
end
return removed
