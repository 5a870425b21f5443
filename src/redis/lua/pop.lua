-- pop: reserve the job at the head of a queue.
-- KEYS[1]  the queue's list (queues:NAME)
-- KEYS[2]  its reserved zset (queues:NAME:reserved)
-- KEYS[3]  its notify list (queues:NAME:notify)
-- ARGV[1]  when the reservation runs out (UNIX seconds): now + retry_after
-- Returns {payload, reserved} where reserved is the payload as decoded and encoded again by
-- cjson with attempts + 1 (the string stored in the zset, so the one to delete or release),
-- or {false, false} when the queue is empty.
local payload = redis.call('LPOP', KEYS[1])
if not payload then
  return {false, false}
end
local reserved = payload
local decoded, job = pcall(cjson.decode, payload)
if decoded and type(job) == 'table' and type(job.attempts) == 'number' then
  job.attempts = job.attempts + 1
  local encoded, text = pcall(cjson.encode, job)
  if encoded then
    reserved = text
  end
end
-- A payload that is not a job (not JSON, no numeric attempts) is reserved as it is: the
-- worker then fails it with the reason, where an error here would lose it.
redis.call('ZADD', KEYS[2], ARGV[1], reserved)
redis.call('LPOP', KEYS[3])
return {payload, reserved}
