-- taskCreate: a new working task, run at once by its runner (under a lease) or queued for any
-- replica's free slot, and its place in the listings, in one step.
-- KEYS[1] task hash, KEYS[2] leases (zset: id → lease end), KEYS[3] the owner's index, KEYS[4] all
-- tasks' index (zsets scored 0: ids are time-ordered, so they sort by lex), KEYS[5] queue (likewise),
-- KEYS[6] signals stream.
-- ARGV[1] id, ARGV[2] owner ('' = none), ARGV[3] head JSON, ARGV[4] job JSON, ARGV[5] '1' = rerunnable,
-- ARGV[6] runner ('' = queued), ARGV[7] lease ms, ARGV[8] keep ms (the record's life while working),
-- ARGV[9] index life ms
--- @include "taskNow"
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'head', ARGV[3], 'job', ARGV[4], 'rerun', ARGV[5], 'runner', ARGV[6],
  'status', 'working', 'updated', now, 'keep', ARGV[8])
redis.call('PEXPIRE', KEYS[1], ARGV[8])
if ARGV[6] == '' then
  redis.call('HSET', KEYS[1], 'queued', '1', 'attempts', 0)
  redis.call('ZADD', KEYS[5], 0, ARGV[1])
  redis.call('XADD', KEYS[6], 'MAXLEN', '~', 10000, '*', 's', 'queued:' .. ARGV[1])
else
  local lease = now + tonumber(ARGV[7])
  redis.call('HSET', KEYS[1], 'queued', '0', 'attempts', 1, 'lease', lease)
  redis.call('ZADD', KEYS[2], lease, ARGV[1])
end
for i = 3, 4 do
  redis.call('ZADD', KEYS[i], 0, ARGV[1])
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[9]) then redis.call('PEXPIRE', KEYS[i], ARGV[9]) end
end
return now
