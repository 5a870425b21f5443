#!lua flags=allow-oom
-- renew: extend the reservations of jobs still running to retry_after from now, by Redis's
-- clock, so no worker (PHP or Node) takes a job while it runs. ZADD XX only moves a member that
-- is still there, so a renewal never adds one and never grows memory: allow-oom lets it run
-- when a full Redis (maxmemory, noeviction) refuses writes, which is when losing the
-- reservations would run every job again. Servers before Redis 7 run the same step without
-- the shebang line (see scripts.ts).
-- KEYS[1]  the queue's reserved zset (queues:NAME:reserved)
-- ARGV[1]  retry_after (seconds)
-- ARGV[2…] the reserved payloads, byte for byte as the reserve step wrote them
-- Returns the positions (1-based, among ARGV[2…]) of the members that were no longer there.
-- Redis 3.2 and 4 allow writes after TIME only with effects replication (5+ always use it).
if redis.replicate_commands then
  redis.replicate_commands()
end
local time = redis.call('TIME')
-- The fraction of a second is kept: a reservation never runs out sooner than retry_after after
-- its last renewal (Laravel compares whole seconds against it).
local reservedUntil = tonumber(time[1]) + tonumber(time[2]) / 1000000 + tonumber(ARGV[1])
local gone = {}
for i = 2, #ARGV do
  if redis.call('ZADD', KEYS[1], 'XX', 'CH', reservedUntil, ARGV[i]) == 0 and not redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    gone[#gone + 1] = i - 1
  end
end
return gone
