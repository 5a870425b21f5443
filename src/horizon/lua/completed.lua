-- completed: Laravel deleted the reserved job (JobDeleted: MarkJobAsComplete, UpdateJobMetrics).
-- A job that is being failed is deleted first too: it is marked completed the same way (its
-- failure comes next and moves it), but it is neither remembered as monitored nor measured.
-- KEYS[1]  the job's hash             KEYS[2]  completed_jobs, or silenced_jobs for a silenced job
-- KEYS[3]  pending_jobs                KEYS[4]  monitoring       KEYS[5]  monitored_jobs
-- KEYS[6]  queue:QUEUE                 KEYS[7]  measured_queues
-- KEYS[8]  job:NAME                    KEYS[9]  measured_jobs
-- KEYS[10] the hash of the job this one retries (any key when it retries none)
-- ARGV[1]  id      ARGV[2]  1 when the job is being failed, else 0
-- ARGV[3]  1 when the job retries another (its payload's retry_of), else 0
-- ARGV[4]  now, as PHP's microtime(true) prints it     ARGV[5]  minus now, printed the same way
-- ARGV[6]  when the hash expires (now + trim.completed)
-- ARGV[7]  when a monitored job's hash expires (now + trim.monitored)
-- ARGV[8]  the runtime in milliseconds (two decimals)
-- ARGV[9]  connection     ARGV[10]  queue     ARGV[11]  name
-- ARGV[12] the reserved payload (may be '' for a job without tags: it cannot be monitored)
-- ARGV[13…] the job's tags
-- Returns 1 when the job was remembered as monitored, else 0.
local id = ARGV[1]
local failing = ARGV[2] == '1'

-- A retry reports to the job it retries: its entry in retried_by takes this outcome. The
-- entries are JSON objects Horizon writes as {"id":…,"status":…,"retried_at":…}; only the
-- status of this job's entries changes, every other byte stays.
if ARGV[3] == '1' then
  local retries = redis.call('HGET', KEYS[10], 'retried_by')
  if retries then
    local outcome = failing and 'failed' or 'completed'
    local literal = ('"id":"' .. id .. '","status":"'):gsub('%W', '%%%0')
    local updated = retries:gsub('(' .. literal .. ')[^"]*"', '%1' .. outcome .. '"')
    redis.call('HMSET', KEYS[10], 'retried_by', updated)
  end
end

redis.call('ZADD', KEYS[2], ARGV[5], id)
redis.call('ZREM', KEYS[3], id)
redis.call('HMSET', KEYS[1], 'status', 'completed', 'completed_at', ARGV[4])
redis.call('EXPIREAT', KEYS[1], ARGV[6])
if failing then
  return 0
end

-- A job carrying a monitored tag is kept for as long as monitored jobs are.
local remembered = 0
for i = 13, #ARGV do
  if redis.call('SISMEMBER', KEYS[4], ARGV[i]) == 1 then
    remembered = 1
    break
  end
end
if remembered == 1 then
  redis.call('ZADD', KEYS[5], ARGV[5], id)
  redis.call('HMSET', KEYS[1], 'id', id, 'connection', ARGV[9], 'queue', ARGV[10], 'name', ARGV[11],
    'status', 'completed', 'payload', ARGV[12], 'completed_at', ARGV[4])
  redis.call('EXPIREAT', KEYS[1], ARGV[7])
end

-- The metrics: throughput counts up, runtime is the mean over every job counted. The mean is
-- handed to Redis as a Lua number, which Redis prints as Horizon's own step has it printed.
local function measure(key, set)
  local current = redis.call('HMGET', key, 'throughput', 'runtime')
  local count = tonumber(current[1]) or 0
  local mean = tonumber(current[2])
  local runtime = tonumber(ARGV[8])
  if mean then
    runtime = (count * mean + runtime) / (count + 1)
  end
  redis.call('HMSET', key, 'throughput', count + 1, 'runtime', runtime)
  redis.call('SADD', set, key)
end
measure(KEYS[6], KEYS[7])
measure(KEYS[8], KEYS[9])
return remembered
