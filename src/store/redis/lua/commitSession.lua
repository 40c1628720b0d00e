-- commitSession: a handler's staged writes and its ToolInvoked event land together or not at all.
-- The writes apply only if every key the handler read still has the version it saw (compare-and-set);
-- on a conflict nothing changes and 0 is returned. The TTL of every session key is refreshed.
-- JSON is built in Node, never edited here. Safe to repeat: a repeat of applied writes conflicts.
-- KEYS[1] state hash, KEYS[2] versions hash, KEYS[3] event list, KEYS[4] event counter (one hash tag)
-- ARGV[1] ttl ms, ARGV[2] events kept, ARGV[3] event JSON, ARGV[4] number of reads n,
-- ARGV[5 .. 4+2n] (field, version) read pairs, then (op 's'|'d', field, value) write triples
local reads = tonumber(ARGV[4])
local i = 5
for _ = 1, reads do
  local seen = redis.call('HGET', KEYS[2], ARGV[i]) or '0'
  if seen ~= ARGV[i + 1] then return 0 end
  i = i + 2
end
while i <= #ARGV do
  if ARGV[i] == 's' then
    redis.call('HSET', KEYS[1], ARGV[i + 1], ARGV[i + 2])
  else
    redis.call('HDEL', KEYS[1], ARGV[i + 1])
  end
  redis.call('HINCRBY', KEYS[2], ARGV[i + 1], 1)
  i = i + 3
end
redis.call('INCR', KEYS[4])
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[2]), -1)
for k = 1, 4 do
  redis.call('PEXPIRE', KEYS[k], ARGV[1])
end
return 1
