-- taskHold: a runner's working task waits for input: status input_required with the input (JSON made
-- in Node), no runner, no lease (no replica sweeps it), kept ARGV[4] ms at most while it waits, and an
-- 'input' signal. A runner that lost the task changes nothing.
-- KEYS[1] task hash, KEYS[2] leases, KEYS[3] signals; ARGV[1] id, ARGV[2] runner, ARGV[3] input JSON,
-- ARGV[4] keep ms. Returns 1 when held. Safe to repeat (the repeat is a no-op).
--- @include "taskNow"
local task = redis.call('HMGET', KEYS[1], 'status', 'runner')
if task[1] ~= 'working' or task[2] ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'input_required', 'input', ARGV[3], 'runner', '', 'queued', '0', 'updated', now)
redis.call('HDEL', KEYS[1], 'lease', 'cancel')
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', 10000, '*', 's', 'input:' .. ARGV[1])
return 1
