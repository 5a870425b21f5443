-- head-ends: the two ends of the job at the head of a queue's list (the next one a worker pops,
-- the one waiting longest), without sending the whole payload: a dashboard reads its push time
-- from them (Horizon's pushedAt leads the envelope, Laravel 12.11+'s createdAt follows data),
-- and a job of 50 MB costs it a few hundred bytes.
-- KEYS[1]  the queue's list (queues:NAME)
-- ARGV[1]  how many bytes of each end
-- Returns {head, tail}, or an empty reply when the list is empty.
local job = redis.call('LINDEX', KEYS[1], 0)
if not job then
  return {}
end
local size = tonumber(ARGV[1])
return { string.sub(job, 1, size), string.sub(job, -size) }
