-- push once: push a job (ready, or delayed until a moment) unless this very push ran already.
-- A push whose reply was lost with its connection is sent again with the same uuid; the marker
-- the first one left says it ran, so the job is queued once. The queue's own keys hold exactly
-- what Laravel's push (or later) writes; the marker is a key of its own that expires.
-- KEYS[1]  the queue's list (queues:NAME)
-- KEYS[2]  its notify list (queues:NAME:notify)
-- KEYS[3]  its delayed zset (queues:NAME:delayed)
-- KEYS[4]  the marker of this push (lqb-pushed:NAME:UUID)
-- ARGV[1]  the payload
-- ARGV[2]  '' to push it ready, else when it is due (UNIX seconds) for the delayed zset
-- ARGV[3]  how long the marker lives (milliseconds): longer than the pusher retries
-- Returns 1 when it pushed now, 0 when an earlier send of this push had.
if not redis.call('SET', KEYS[4], 1, 'NX', 'PX', ARGV[3]) then
  return 0
end
if ARGV[2] == '' then
  redis.call('RPUSH', KEYS[1], ARGV[1])
  redis.call('RPUSH', KEYS[2], 1)
else
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
end
return 1
