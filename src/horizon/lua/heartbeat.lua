-- heartbeat: a Node worker's records as one of Horizon's master supervisors with one supervisor,
-- as Horizon's master writes them every second (its MasterSupervisorRepository::update and
-- SupervisorRepository::update, then ExpireSupervisors), and the commands waiting for either.
-- The records expire unless renewed (15 s the master's, 30 s the supervisor's), so a worker
-- that stops leaves the dashboard within seconds; the dashboard shows those seen in the last 14 s.
-- KEYS[1]  master:MASTER        KEYS[2]  masters
-- KEYS[3]  supervisor:SUPERVISOR     KEYS[4]  supervisors
-- KEYS[5]  commands:master:MASTER    KEYS[6]  commands:SUPERVISOR
-- ARGV[1]  MASTER    ARGV[2]  SUPERVISOR (MASTER:NAME)    ARGV[3]  the process id
-- ARGV[4]  running or paused    ARGV[5]  the environment ('' to leave it out)
-- ARGV[6]  the master's supervisors, JSON    ARGV[7]  the supervisor's processes per queue, JSON
-- ARGV[8]  the supervisor's options, JSON    ARGV[9]  now (UNIX seconds)
-- Returns the commands waiting, JSON each ({"command":…,"options":…}), the master's first.
local now = tonumber(ARGV[9])
redis.call('HMSET', KEYS[1], 'name', ARGV[1], 'pid', ARGV[3], 'status', ARGV[4], 'supervisors', ARGV[6])
if ARGV[5] ~= '' then
  redis.call('HMSET', KEYS[1], 'environment', ARGV[5])
end
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('EXPIRE', KEYS[1], 15)
redis.call('HMSET', KEYS[3], 'name', ARGV[2], 'master', ARGV[1], 'pid', ARGV[3], 'status', ARGV[4],
  'processes', ARGV[7], 'options', ARGV[8])
redis.call('ZADD', KEYS[4], now, ARGV[2])
redis.call('EXPIRE', KEYS[3], 30)
-- Masters and supervisors not seen for 14 s leave the lists (a PHP master does this each loop;
-- a fleet of Node workers alone must do it itself).
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 14)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - 14)
local commands = {}
for i = 5, 6 do
  local waiting = redis.call('LRANGE', KEYS[i], 0, -1)
  if #waiting > 0 then
    redis.call('LTRIM', KEYS[i], #waiting, -1)
    for _, command in ipairs(waiting) do
      commands[#commands + 1] = command
    end
  end
end
return commands
