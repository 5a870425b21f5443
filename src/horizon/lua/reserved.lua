-- reserved: a worker took the job (JobReserved: MarkJobAsReserved). The hash now holds the
-- reserved copy of the payload (cjson's re-encoding, attempts counted). Like Horizon, this
-- writes the fields whether or not the hash is still there, and leaves its expiry as it is.
-- KEYS[1]  the job's hash
-- ARGV[1]  the reserved payload     ARGV[2]  now, as PHP's microtime(true) prints it
-- Returns 1.
redis.call('HMSET', KEYS[1], 'status', 'reserved', 'payload', ARGV[1], 'updated_at', ARGV[2], 'reserved_at', ARGV[2])
return 1
