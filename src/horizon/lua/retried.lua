-- retried: a failed job was pushed again as a new one (Horizon's RetryFailedJob, the Failed
-- tab's Retry): the failed job's retried_by, a JSON list, gains the new job as pending.
-- KEYS[1]  the failed job's hash
-- ARGV[1]  the entry to append, JSON: {"id":…,"status":"pending","retried_at":…}
-- Returns 1.
local retries = redis.call('HGET', KEYS[1], 'retried_by')
-- Horizon reads the list back as PHP values and writes it again; an empty or missing one is [].
if not retries or retries == '' or retries == '[]' or retries == '{}' then
  retries = '[' .. ARGV[1] .. ']'
else
  retries = retries:sub(1, -2) .. ',' .. ARGV[1] .. ']'
end
redis.call('HMSET', KEYS[1], 'retried_by', retries)
return 1
