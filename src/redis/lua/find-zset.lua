-- find, delayed or reserved jobs: one short step of a walk along a zset (lowest score first)
-- for the members holding a needle, so that a large set never holds Redis for long.
-- A step resumes after the last member the previous one saw, by its score and its bytes (the
-- order Redis keeps members in), not by rank: a rank shifts when members before it go (a
-- migration, a finished job), where that place in the order does not.
-- KEYS[1]  the zset (queues:NAME:delayed or queues:NAME:reserved)
-- ARGV[1]  the score of the last member an earlier step looked at, as Redis wrote it ('' to start)
-- ARGV[2]  that member
-- ARGV[3], ARGV[4]  the needles: '"uuid":"…"' and '"id":"…"'
-- ARGV[5]  the most members this step looks at
-- ARGV[6]  the most member bytes this step looks at (it looks at one slice at least)
-- Returns {nextScore, nextMember, score1, member1, score2, member2, …} for the matches;
-- nextScore is '' when the end of the set was reached.
local key = KEYS[1]
local slice = 32

-- Byte order, as Redis orders members of equal score (Lua's own < follows the locale).
local function bytesBefore(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x < y
    end
  end
  return #a < #b
end

-- The rank of the first member after (score, member) in the set's order.
local function rankAfter(score, member)
  local now = redis.call('ZSCORE', key, member)
  if now == score then
    return redis.call('ZRANK', key, member) + 1
  end
  -- Gone, or moved: among the members of that very score, find its place by a binary search.
  local low = redis.call('ZCOUNT', key, '-inf', '(' .. score)
  local high = low + redis.call('ZCOUNT', key, score, score)
  while low < high do
    local middle = math.floor((low + high) / 2)
    local at = redis.call('ZRANGE', key, middle, middle)[1]
    if at ~= nil and bytesBefore(member, at) then
      high = middle
    else
      low = middle + 1
    end
  end
  return low
end

local rank = 0
if ARGV[1] ~= '' then
  rank = rankAfter(ARGV[1], ARGV[2])
end
local last = rank + tonumber(ARGV[5])
local budget = tonumber(ARGV[6])
local bytes = 0
local reply = { '', '' }
local lastScore, lastMember

while rank < last and bytes < budget do
  local count = math.min(slice, last - rank)
  local page = redis.call('ZRANGE', key, rank, rank + count - 1, 'WITHSCORES')
  for i = 1, #page, 2 do
    local member = page[i]
    bytes = bytes + #member
    if string.find(member, ARGV[3], 1, true) or string.find(member, ARGV[4], 1, true) then
      reply[#reply + 1] = page[i + 1]
      reply[#reply + 1] = member
    end
    lastMember, lastScore = member, page[i + 1]
  end
  rank = rank + #page / 2
  -- A short page is the end of the set: the walk is over.
  if #page / 2 < count then
    return reply
  end
end
reply[1] = lastScore or ''
reply[2] = lastMember or ''
return reply
