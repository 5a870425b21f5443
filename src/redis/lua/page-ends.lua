-- page-ends: a page of a queue's jobs for a dashboard, where a job too large to show whole
-- travels as its two ends only: its size, its first and its last bytes. A list of 25 jobs with
-- one of 50 MB among them then sends a few kilobytes for that one, not 50 MB.
-- KEYS[1]  the queue's list (queues:NAME), or one of its zsets (:delayed, :reserved)
-- ARGV[1]  'list' or 'zset'      ARGV[2], ARGV[3]  the first and last index (LRANGE/ZRANGE's)
-- ARGV[4]  the largest job sent whole, in bytes
-- ARGV[5]  how many bytes of a larger job's head      ARGV[6]  how many of its tail
-- Returns, per job, four values: its size in bytes, its score ('' on a list), the job whole or
-- its head, and its tail ('' for a job sent whole).
local jobs
if ARGV[1] == 'zset' then
  jobs = redis.call('ZRANGE', KEYS[1], ARGV[2], ARGV[3], 'WITHSCORES')
else
  jobs = redis.call('LRANGE', KEYS[1], ARGV[2], ARGV[3])
end
local whole = tonumber(ARGV[4])
local head = tonumber(ARGV[5])
local tail = tonumber(ARGV[6])
local step = ARGV[1] == 'zset' and 2 or 1
local reply = {}
for i = 1, #jobs, step do
  local job = jobs[i]
  local score = step == 2 and jobs[i + 1] or ''
  if #job <= whole then
    reply[#reply + 1] = #job
    reply[#reply + 1] = score
    reply[#reply + 1] = job
    reply[#reply + 1] = ''
  else
    reply[#reply + 1] = #job
    reply[#reply + 1] = score
    reply[#reply + 1] = string.sub(job, 1, head)
    reply[#reply + 1] = string.sub(job, -tail)
  end
end
return reply
