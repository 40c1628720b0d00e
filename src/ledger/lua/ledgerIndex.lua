-- ledgerIndex: note a recorded effect in a per-tool or per-scope index (a sorted set scored by the
-- record's expiry on the server clock), and drop members whose records have expired, so the index
-- stays as large as the live records it names. Safe to repeat.
-- KEYS[1] index; ARGV[1] entry key, ARGV[2] ttl ms or '' = never
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local score = '+inf'
if ARGV[2] ~= '' then
  score = nowMs + tonumber(ARGV[2])
end
redis.call('ZADD', KEYS[1], score, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. nowMs)
return 1
