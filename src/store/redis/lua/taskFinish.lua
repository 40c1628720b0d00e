-- taskFinish: a runner ends its task; a runner that lost it (taken over, already ended) changes nothing.
-- KEYS[1] task hash, KEYS[2] leases, KEYS[3] queue, KEYS[4] signals; ARGV[1] id, ARGV[2] runner,
-- ARGV[3] status, ARGV[4] outcome JSON, ARGV[5] ttl ms. Returns 1 when ended here. Safe to repeat
-- (the repeat is a no-op).
--- @include "taskNow"
--- @include "taskEnd"
local task = redis.call('HMGET', KEYS[1], 'status', 'runner')
if task[1] ~= 'working' or task[2] ~= ARGV[2] then return 0 end
endTask(ARGV[1], ARGV[3], ARGV[4], ARGV[5])
return 1
