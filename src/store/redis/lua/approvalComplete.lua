-- approvalComplete: the runner that holds an approved call records its result. Safe to repeat.
-- KEYS[1] record. ARGV[1] runner, ARGV[2] new JSON. Returns 1 when recorded here.
local record = redis.call('HMGET', KEYS[1], 'status', 'runner')
if record[1] ~= 'approved' or record[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'executed', 'json', ARGV[2])
redis.call('HDEL', KEYS[1], 'runner', 'lease')
return 1
