-- auditAppend: appends a batch of audit entries to the one chain every replica shares, in one
-- round trip. Atomic, so concurrent replicas still make one chain: each entry gets the next seq and
-- hash = sha1(prev .. "\n" .. body), chained from the head kept in KEYS[2]. Then entries older than
-- the retention are dropped from the oldest end.
-- KEYS[1] the chain (sorted set: score seq, member "<seq> <ms> <prev> <hash> <body>"), KEYS[2] the
-- head ("<seq> <hash>"); ARGV[1] retention in ms, ARGV[2] the bodies, one a line (JSON text holds no
-- raw newline). Answers the seq and prev of the first entry, and the hash of each.
-- Not safe to repeat (a repeat appends the batch twice, still chained): the client never re-sends.
local head = redis.call('GET', KEYS[2])
local seq, prev = 0, ''
if head then
  local space = string.find(head, ' ', 1, true)
  seq = tonumber(string.sub(head, 1, space - 1))
  prev = string.sub(head, space + 1)
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local first, first_prev = seq + 1, prev
local hashes = {}
local batch = ARGV[2]
local from = 1
while from <= #batch do
  local stop = string.find(batch, '\n', from, true) or (#batch + 1)
  local body = string.sub(batch, from, stop - 1)
  from = stop + 1
  seq = seq + 1
  local hash = redis.sha1hex(prev .. '\n' .. body)
  redis.call('ZADD', KEYS[1], seq, seq .. ' ' .. now .. ' ' .. prev .. ' ' .. hash .. ' ' .. body)
  hashes[#hashes + 1] = hash
  prev = hash
end
redis.call('SET', KEYS[2], seq .. ' ' .. prev)
-- Retention: look at the oldest few (twice the batch keeps up with any rate of appends).
local cutoff = now - tonumber(ARGV[1])
local oldest = redis.call('ZRANGE', KEYS[1], 0, #hashes * 2)
local expired = 0
for _, member in ipairs(oldest) do
  local at = tonumber(string.match(member, '^%d+ (%d+) '))
  if at == nil or at > cutoff then break end
  expired = expired + 1
end
if expired > 0 then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, expired - 1) end
return { first, first_prev, hashes }
