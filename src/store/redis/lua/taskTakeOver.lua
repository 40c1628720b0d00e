-- taskTakeOver: decides, in one step, what becomes of a task whose runner's lease lapsed, so two
-- replicas sweeping at once never both act on it: cancelled if a cancel was asked for; ended failed
-- with the worker_lost outcome when it is not rerunnable (its tool has no idempotency strategy), or
-- with the exhausted outcome when it was attempted ARGV[2] times; else back in the queue, where its
-- age puts it first, for any replica's free slot. A task that ended, was renewed or is queued is left.
-- KEYS[1] task hash, KEYS[2] leases, KEYS[3] queue, KEYS[4] signals; ARGV[1] id, ARGV[2] max attempts,
-- ARGV[3] ttl ms, ARGV[4] lost outcome JSON, ARGV[5] exhausted outcome JSON, ARGV[6] cancelled outcome
-- JSON. Returns 'queued' | 'alive' | 'ended'.
--- @include "taskNow"
--- @include "taskEnd"
local task = redis.call('HMGET', KEYS[1], 'status', 'rerun', 'cancel', 'lease', 'attempts', 'queued')
if task[1] ~= 'working' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 'ended'
end
if task[6] == '1' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 'alive'
end
if tonumber(task[4] or '0') > now then
  redis.call('ZADD', KEYS[2], task[4], ARGV[1])
  return 'alive'
end
if task[3] == '1' then
  endTask(ARGV[1], 'cancelled', ARGV[6], ARGV[3])
elseif task[2] ~= '1' then
  endTask(ARGV[1], 'failed', ARGV[4], ARGV[3])
elseif tonumber(task[5] or '0') >= tonumber(ARGV[2]) then
  endTask(ARGV[1], 'failed', ARGV[5], ARGV[3])
else
  redis.call('HSET', KEYS[1], 'runner', '', 'queued', '1', 'updated', now)
  redis.call('HDEL', KEYS[1], 'lease')
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('ZADD', KEYS[3], 0, ARGV[1])
  signal(KEYS[4], 'queued', ARGV[1])
  return 'queued'
end
return 'ended'
