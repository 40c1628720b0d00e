-- ledgerAbort: drop an in-progress lease held by the caller's token, so the next call runs.
-- Never touches a record, nor a lease another call has taken since. Safe to repeat.
-- KEYS[1] entry hash; ARGV[1] token. Returns 1 when dropped, else 0
local entry = redis.call('HMGET', KEYS[1], 'state', 'token')
if entry[1] == 'lease' and entry[2] == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
