-- release-lock: give up a cache lock only while it is still this owner's, as Laravel's RedisLock
-- releases one (a lock that expired and was taken by another stays theirs).
-- KEYS[1]  the lock's key (cache prefix and name)
-- ARGV[1]  the owner that took it
-- Returns 1 when the lock was this owner's and is gone, else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
