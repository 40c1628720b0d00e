-- leaseRelease: ends a lease only if its holder still has it (one that lapsed may be another's now).
-- KEYS[1] lease key; ARGV[1] holder
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
