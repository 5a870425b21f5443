-- find: the jobs of a queue whose payload holds a needle (a job's id or uuid as its JSON
-- spells them), looked for in Redis so that a long queue is not sent over the wire.
-- KEYS[1]  the queue's list    KEYS[2]  its delayed zset    KEYS[3]  its reserved zset
-- ARGV[1], ARGV[2]  the needles: '"uuid":"…"' and '"id":"…"'
-- Returns a flat list of matches: where ('ready', 'delayed' or 'reserved'), the payload, and
-- its score ('' for a ready job). The caller checks each against the envelope itself: a needle
-- may also occur inside a job's own data.
local found = {}
local chunk = 500

local function holds(payload)
  return string.find(payload, ARGV[1], 1, true) ~= nil or string.find(payload, ARGV[2], 1, true) ~= nil
end

local ready = redis.call('LLEN', KEYS[1])
for first = 0, ready - 1, chunk do
  for _, payload in ipairs(redis.call('LRANGE', KEYS[1], first, first + chunk - 1)) do
    if holds(payload) then
      table.insert(found, 'ready')
      table.insert(found, payload)
      table.insert(found, '')
    end
  end
end

for _, set in ipairs({ { 'delayed', KEYS[2] }, { 'reserved', KEYS[3] } }) do
  local size = redis.call('ZCARD', set[2])
  for first = 0, size - 1, chunk do
    local page = redis.call('ZRANGE', set[2], first, first + chunk - 1, 'WITHSCORES')
    for i = 1, #page, 2 do
      if holds(page[i]) then
        table.insert(found, set[1])
        table.insert(found, page[i])
        table.insert(found, page[i + 1])
      end
    end
  end
end

return found
