-- ledgerRenew: extend an in-progress lease while its handler runs, only for the token holding it.
-- Safe to repeat. KEYS[1] entry hash; ARGV[1] token, ARGV[2] lease ms. Returns 1 when extended, else 0
--- @include "nowMs"
local entry = redis.call('HMGET', KEYS[1], 'state', 'token', 'on_lost')
if entry[1] == 'lease' and entry[2] == ARGV[1] then
  redis.call('HSET', KEYS[1], 'until', nowMs() + tonumber(ARGV[2]))
  if entry[3] ~= 'unknown' then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  return 1
end
return 0
