-- addToIndex(index, member, ttl ms or ''): note a recorded effect in a per-tool or per-scope
-- index, a sorted set scored by the record's expiry on the server clock, and drop the members
-- whose records have expired, so an index stays as large as the live records it names.
local function addToIndex(index, member, ttl)
  local now = redis.call('TIME')
  local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  local score = '+inf'
  if ttl ~= '' then
    score = nowMs + tonumber(ttl)
  end
  redis.call('ZADD', index, score, member)
  redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. nowMs)
end
