-- find, ready jobs: one short step of a walk along a queue's list for the payloads holding a
-- needle, so that a long queue never holds Redis for long (the caller calls again until done).
-- The walk goes from the tail towards the head: pushes and migrations add at the tail and pops
-- take from the head, so counted from the tail a job that stays on the list only moves away
-- from where the walk started; a step may see a job twice, never jump over one.
-- One LRANGE per step: each one seeks its start from the nearer end of the list, which on a
-- list of millions costs as much as reading the jobs; the caller sizes COUNT by the bytes the
-- last step read.
-- KEYS[1]  the queue's list (queues:NAME)
-- ARGV[1]  how many jobs, counted from the tail, earlier steps looked at (0 to start)
-- ARGV[2], ARGV[3]  the needles: '"uuid":"…"' and '"id":"…"'
-- ARGV[4]  COUNT: how many jobs this step looks at
-- Returns {next, bytes, payload1, payload2, …}: next is ARGV[1] for the following step, -1 when
-- the head was reached; bytes is what the step read. The caller checks each payload against
-- the envelope itself: a needle may also occur inside a job's own data.
local looked = tonumber(ARGV[1])
local count = tonumber(ARGV[4])
local page = redis.call('LRANGE', KEYS[1], -(looked + count), -(looked + 1))
local reply = { looked + #page, 0 }
local bytes = 0
for _, payload in ipairs(page) do
  bytes = bytes + #payload
  if string.find(payload, ARGV[2], 1, true) or string.find(payload, ARGV[3], 1, true) then
    reply[#reply + 1] = payload
  end
end
reply[2] = bytes
-- A short page is the head of the list: the walk is over.
if #page < count then
  reply[1] = -1
end
return reply
