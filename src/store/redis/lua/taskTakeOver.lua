-- taskTakeOver: decides, in one step, what becomes of a task whose runner's lease lapsed, so two
-- replicas sweeping at once never both run it: cancelled if a cancel was asked for; else run again by
-- ARGV[2] when rerunnable (its tool has an idempotency strategy: the ledger keeps one effect); else
-- ended failed with the worker_lost outcome. A task that ended or whose lease was renewed is left alone.
-- KEYS[1] task hash, KEYS[2] leases; ARGV[1] id, ARGV[2] runner, ARGV[3] lease ms, ARGV[4] ttl ms,
-- ARGV[5] signal channel, ARGV[6] lost outcome JSON, ARGV[7] cancelled outcome JSON
-- Returns {'run', job} | {'alive'} | {'ended'}
local task = redis.call('HMGET', KEYS[1], 'status', 'rerun', 'cancel', 'lease', 'job')
if task[1] ~= 'working' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {'ended'}
end
if tonumber(task[4]) > now then
  redis.call('ZADD', KEYS[2], task[4], ARGV[1])
  return {'alive'}
end
if task[3] == '1' then
  endTask(ARGV[1], 'cancelled', ARGV[7], ARGV[4], ARGV[5])
  return {'ended'}
end
if task[2] == '1' then
  local lease = now + tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'runner', ARGV[2], 'lease', lease, 'updated', now)
  redis.call('HINCRBY', KEYS[1], 'attempts', 1)
  redis.call('ZADD', KEYS[2], lease, ARGV[1])
  return {'run', task[5]}
end
endTask(ARGV[1], 'failed', ARGV[6], ARGV[4], ARGV[5])
return {'ended'}
