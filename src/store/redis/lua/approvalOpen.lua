-- approvalOpen: identical calls join one approval. KEYS[1] binding, KEYS[2] index, KEYS[3] record the
-- binding pointed to when read (or the fresh one), KEYS[4] fresh record. ARGV[1] id read ('' none),
-- ARGV[2] fresh id, ARGV[3] fresh JSON, ARGV[4] expires ms, ARGV[5] keep ms. KEYS[5] deadlines (by expiry,
-- for the shared sweep).
-- Returns {0, json} joined, {1, json} created, {-1} the binding changed since it was read (read again).
--- @include "taskNow"
local bound = redis.call('GET', KEYS[1])
if (bound or '') ~= ARGV[1] then return {-1} end
if bound then
  local json = redis.call('HGET', KEYS[3], 'json')
  if json then return {0, json} end
end
redis.call('HSET', KEYS[4], 'json', ARGV[3], 'status', 'pending', 'expires', ARGV[4])
redis.call('PEXPIRE', KEYS[4], ARGV[5])
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[5])
redis.call('ZADD', KEYS[2], now, ARGV[2])
redis.call('ZADD', KEYS[5], ARGV[4], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 31 * 86400000 * 2)
return {1, ARGV[3]}
