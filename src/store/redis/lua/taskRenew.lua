-- taskRenew: extends a runner's lease while the task is still its own; tells it of a cancel asked for.
-- KEYS[1] task hash, KEYS[2] leases; ARGV[1] id, ARGV[2] runner, ARGV[3] lease ms
-- Returns 'ok' | 'cancel' | 'lost' (ended, expired, or taken over by another replica). Safe to repeat.
--- @include "taskNow"
local task = redis.call('HMGET', KEYS[1], 'status', 'runner', 'cancel')
if task[1] ~= 'working' or task[2] ~= ARGV[2] then return 'lost' end
local lease = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'lease', lease)
redis.call('ZADD', KEYS[2], lease, ARGV[1])
if task[3] == '1' then return 'cancel' end
return 'ok'
