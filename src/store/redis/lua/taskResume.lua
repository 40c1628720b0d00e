-- taskResume: a task waiting for input goes back to the queue (working, input cleared), with a new job
-- when ARGV[2] is not empty, its life renewed from the keep ms it was created with; 'queued' is signalled.
-- KEYS[1] task hash, KEYS[2] queue, KEYS[3] signals; ARGV[1] id, ARGV[2] job JSON or ''.
-- Returns 1 when resumed; 0 when it was not waiting for input (so a second resume does nothing).
--- @include "taskNow"
if redis.call('HGET', KEYS[1], 'status') ~= 'input_required' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'working', 'queued', '1', 'updated', now)
redis.call('HDEL', KEYS[1], 'input')
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'job', ARGV[2]) end
redis.call('PEXPIRE', KEYS[1], redis.call('HGET', KEYS[1], 'keep'))
redis.call('ZADD', KEYS[2], 0, ARGV[1])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', 10000, '*', 's', 'queued:' .. ARGV[1])
return 1
