-- commitSession: a handler's staged writes and its ToolInvoked event land together or not at all,
-- and the session's TTL is refreshed in the same step. JSON is built in Node, never edited here.
-- KEYS[1] state hash, KEYS[2] event list (one hash tag)
-- ARGV[1] ttl ms, ARGV[2] events kept, ARGV[3] event JSON, ARGV[4..] field, value pairs
if #ARGV > 3 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 4))
end
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1
