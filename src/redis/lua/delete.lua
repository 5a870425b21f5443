-- delete: take finished jobs out of the queue for good, by their reserved strings; Laravel's
-- delete (a ZREM from the reserved zset) for each, and more when it comes late. A delete held
-- up (a stalled Redis, a slow network) may find the reservation already run out and moved back
-- to the list by a migration, which appends the reserved string as it is, byte for byte, with
-- one notify entry. That copy is the same job, finished: it goes too, with one notify entry,
-- so that no worker (PHP's included) runs it again. A copy some worker took already is out of
-- reach here (see docs/redis-faults.md); the worker that finished it looks out for it.
-- KEYS[1]  the queue's reserved zset (queues:NAME:reserved)
-- KEYS[2]  its list (queues:NAME)
-- KEYS[3]  its notify list (queues:NAME:notify)
-- ARGV     the reserved payloads, byte for byte as the reserve step wrote them
-- Returns {late, gone}: how many were taken off the list (their reservation had run out), and
-- how many were found in neither place (a worker took them again since).
-- All of them leave the zset in one ZREM (in slices, inside Lua's limit on unpacked arguments):
-- a delete in time costs what Laravel's does. Only when some were not there is each looked for
-- on the list, from the tail, where a migration put it; the search stops at the first match,
-- and for one that left the zset (not on the list) it reads the whole list: that happens only
-- after a stall, for the deletes that came late and those sent with them.
local removed = 0
for first = 1, #ARGV, 100 do
  removed = removed + redis.call('ZREM', KEYS[1], unpack(ARGV, first, math.min(first + 99, #ARGV)))
end
if removed == #ARGV then
  return { 0, 0 }
end
local late = 0
for i = 1, #ARGV do
  if redis.call('LREM', KEYS[2], -1, ARGV[i]) == 1 then
    redis.call('LPOP', KEYS[3])
    late = late + 1
  end
end
return { late, math.max(0, #ARGV - removed - late) }
