-- ledgerRenew: extend an in-progress lease while its handler runs, only for the token holding it.
-- Safe to repeat. KEYS[1] entry hash; ARGV[1] token, ARGV[2] lease ms. Returns 1 when extended, else 0
local entry = redis.call('HMGET', KEYS[1], 'state', 'token')
if entry[1] == 'lease' and entry[2] == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
