-- taskProgress: keeps a runner's last progress report (JSON made in Node) while the task is its own.
-- KEYS[1] task hash; ARGV[1] runner, ARGV[2] progress JSON. Returns 1 when kept. Safe to repeat.
--- @include "taskNow"
local task = redis.call('HMGET', KEYS[1], 'status', 'runner')
if task[1] ~= 'working' or task[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'progress', ARGV[2], 'updated', now)
return 1
