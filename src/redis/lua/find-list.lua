-- find, ready jobs: one short step of a walk along a queue's list for the payloads holding a
-- needle, so that a long queue never holds Redis for long (the caller calls again until done).
-- The walk goes from the tail towards the head: pushes and migrations add at the tail and pops
-- take from the head, so counted from the tail a job that stays on the list only moves away
-- from where the walk started; a step may see a job twice, never jump over one.
-- Jobs that reach the tail after the walk passed it (an expired reservation given back) are
-- found by a second, short walk from the tail to the job that was the tail when the first began:
-- the first step names that job (the SHA-1 of its payload), a step given the name stops there.
-- One LRANGE per step: each one seeks its start from the nearer end of the list, which on a
-- list of millions costs as much as reading the jobs; the caller sizes COUNT by the bytes the
-- last step read.
-- KEYS[1]  the queue's list (queues:NAME)
-- ARGV[1]  how many jobs, counted from the tail, earlier steps looked at (0 to start)
-- ARGV[2], ARGV[3]  the needles: '"uuid":"…"' and '"id":"…"'
-- ARGV[4]  COUNT: how many jobs this step looks at
-- ARGV[5]  '' (or absent) for a walk to the head; else the name of the job to stop at
-- Returns {next, bytes, tail, payload1, payload2, …}: next is ARGV[1] for the following step,
-- -1 when the head (or the job to stop at) was reached; bytes is what the step read; tail is
-- the name of the tail job on a first step ('' on the others, and on an empty list). The caller
-- checks each payload against the envelope itself: a needle may also occur inside a job's own data.
local looked = tonumber(ARGV[1])
local count = tonumber(ARGV[4])
local stopAt = ARGV[5] or ''
local page = redis.call('LRANGE', KEYS[1], -(looked + count), -(looked + 1))
local reply = { looked + #page, 0, '' }
if looked == 0 and #page > 0 then
  reply[3] = redis.sha1hex(page[#page])
end
-- With a job to stop at, the page is read from its tail end, up to that job.
local first = 1
if stopAt ~= '' then
  for i = #page, 1, -1 do
    if redis.sha1hex(page[i]) == stopAt then
      first = i + 1
      reply[1] = -1
      break
    end
  end
end
local bytes = 0
for i = first, #page do
  local payload = page[i]
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
