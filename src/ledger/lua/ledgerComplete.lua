-- ledgerComplete: record a success, only while the caller's token still holds the entry (fencing),
-- so a call whose lease lapsed and was taken over cannot overwrite the other call's record.
-- Safe to repeat: the same token writes the same record again.
-- KEYS[1] entry hash; ARGV[1] token, ARGV[2] ToolEffect JSON (built in Node), ARGV[3] ttl ms or '' = never
-- Returns 1 when recorded, 0 when the token no longer holds the entry
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'done', 'effect', ARGV[2])
if ARGV[3] == '' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1
