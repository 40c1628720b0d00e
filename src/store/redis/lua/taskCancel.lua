-- taskCancel: a queued task, or one waiting for input, ends cancelled at once; a running one is marked to be cancelled and every
-- replica is told, so the one running it aborts the handler (its lease renewal also reads the mark).
-- KEYS[1] task hash, KEYS[2] leases, KEYS[3] queue, KEYS[4] signals; ARGV[1] id, ARGV[2] cancelled
-- outcome JSON, ARGV[3] ttl ms. Returns 1 when marked or ended. Safe to repeat.
--- @include "taskNow"
--- @include "taskEnd"
local task = redis.call('HMGET', KEYS[1], 'status', 'queued')
if task[1] ~= 'working' and task[1] ~= 'input_required' then return 0 end
if task[2] == '1' or task[1] == 'input_required' then
  endTask(ARGV[1], 'cancelled', ARGV[2], ARGV[3])
  return 1
end
redis.call('HSET', KEYS[1], 'cancel', '1')
signal(KEYS[4], 'cancel', ARGV[1])
return 1
