-- taskLapsed: ids of tasks whose runner's lease ended before now (the store's clock). Read-only.
-- KEYS[1] leases; ARGV[1] at most this many
--- @include "taskNow"
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
