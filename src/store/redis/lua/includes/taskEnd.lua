-- Tells every replica of a task event through the signals stream (a stream, not pub/sub: a replica
-- whose connection dropped reads on from the last entry it saw). Kept to about 10,000 entries.
local function signal(stream, kind, id)
  redis.call('XADD', stream, 'MAXLEN', '~', 10000, '*', 's', kind .. ':' .. id)
end

-- Ends a working task: its outcome (JSON made in Node, never edited here), no lease, out of the queue,
-- kept ttl ms more, and an 'ended' signal. KEYS[1] task hash, KEYS[2] leases, KEYS[3] queue, KEYS[4] signals.
local function endTask(id, status, outcome, ttlMs)
  redis.call('HSET', KEYS[1], 'status', status, 'outcome', outcome, 'updated', now, 'queued', '0')
  redis.call('HDEL', KEYS[1], 'job', 'lease', 'input')
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
  redis.call('PEXPIRE', KEYS[1], ttlMs)
  signal(KEYS[4], 'ended', id)
end
