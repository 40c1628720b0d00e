-- Ends a working task: its outcome (JSON made in Node, never edited here), no lease, kept ttl ms more,
-- and an 'ended' signal to every replica. KEYS[1] task hash, KEYS[2] leases.
local function endTask(id, status, outcome, ttlMs, channel)
  redis.call('HSET', KEYS[1], 'status', status, 'outcome', outcome, 'updated', now)
  redis.call('HDEL', KEYS[1], 'job', 'lease')
  redis.call('ZREM', KEYS[2], id)
  redis.call('PEXPIRE', KEYS[1], ttlMs)
  redis.call('PUBLISH', channel, 'ended:' .. id)
end
