-- taskClaim: the oldest queued task becomes ARGV[1]'s under a new lease, its attempts counted and its
-- life renewed; ids of tasks that expired or ended meanwhile are dropped from the queue on the way.
-- KEYS[1] queue, KEYS[2] leases; ARGV[1] runner, ARGV[2] lease ms, ARGV[3] the task hashes' key prefix
-- (same hash tag as the queue). Returns {id, job} or false when nothing waits.
--- @include "taskNow"
while true do
  local first = redis.call('ZRANGEBYLEX', KEYS[1], '-', '+', 'LIMIT', 0, 1)[1]
  if not first then return false end
  redis.call('ZREM', KEYS[1], first)
  local key = ARGV[3] .. first
  local task = redis.call('HMGET', key, 'status', 'queued', 'job', 'keep')
  if task[1] == 'working' and task[2] == '1' then
    local lease = now + tonumber(ARGV[2])
    redis.call('HSET', key, 'runner', ARGV[1], 'lease', lease, 'queued', '0', 'updated', now)
    redis.call('HINCRBY', key, 'attempts', 1)
    redis.call('PEXPIRE', key, task[4])
    redis.call('ZADD', KEYS[2], lease, first)
    return {first, task[3]}
  end
end
