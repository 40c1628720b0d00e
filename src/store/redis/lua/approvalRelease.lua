-- approvalRelease: the binding forgets its approval, unless it already points to a newer one.
-- KEYS[1] binding. ARGV[1] id.
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
