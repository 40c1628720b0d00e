-- approvalClaim: an approved call is run by one runner at a time; a dead runner's lease lapses.
-- KEYS[1] record. ARGV[1] runner, ARGV[2] lease ms. Returns 1 when the runner holds it now.
--- @include "taskNow"
local record = redis.call('HMGET', KEYS[1], 'status', 'runner', 'lease')
if record[1] ~= 'approved' then return 0 end
if record[2] and record[2] ~= ARGV[1] and tonumber(record[3]) > now then return 0 end
redis.call('HSET', KEYS[1], 'runner', ARGV[1], 'lease', now + tonumber(ARGV[2]))
return 1
