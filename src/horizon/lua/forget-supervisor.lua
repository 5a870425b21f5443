-- forget supervisor: a Node worker that stops takes its records off the dashboard at once, as
-- Horizon's master does when it terminates (MasterSupervisorRepository::forget).
-- KEYS[1]  master:MASTER     KEYS[2]  masters     KEYS[3]  supervisor:SUPERVISOR     KEYS[4]  supervisors
-- KEYS[5]  commands:master:MASTER
-- ARGV[1]  MASTER     ARGV[2]  SUPERVISOR
-- Returns 1.
redis.call('DEL', KEYS[1], KEYS[3], KEYS[5])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[2])
return 1
