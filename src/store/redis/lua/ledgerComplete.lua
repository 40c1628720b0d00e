-- ledgerComplete: record a success, only while the caller's token still holds the entry (fencing),
-- so a call whose lease lapsed and was taken over cannot overwrite the other call's record. A lease
-- that lapsed with nobody taking the key over (the entry is gone) is recorded all the same: the
-- effect happened, and recording it spares a retry from running it twice.
-- On a single Redis it also indexes the record by tool and scope (KEYS[2], KEYS[3]) in the same
-- step; on Cluster those keys are in other slots and ledgerIndex does it beside this script.
-- Safe to repeat: the same token writes the same record again.
-- KEYS[1] entry hash, KEYS[2] tool index and KEYS[3] scope index (optional)
-- ARGV[1] token, ARGV[2] ToolEffect JSON (built in Node), ARGV[3] ttl ms or '' = never, ARGV[4] idempotency key,
-- ARGV[5] params hash, ARGV[6] tool, ARGV[7] scope (to re-create an entry whose lease lapsed)
-- Returns 1 when recorded, 0 when another call holds or recorded the entry
--- @include "addToIndex"
local holder = redis.call('HGET', KEYS[1], 'token')
if holder and holder ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'done', 'token', ARGV[1], 'effect', ARGV[2], 'params', ARGV[5], 'tool', ARGV[6], 'scope', ARGV[7])
if ARGV[3] == '' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
if #KEYS == 3 then
  addToIndex(KEYS[2], ARGV[4], ARGV[3])
  addToIndex(KEYS[3], ARGV[4], ARGV[3])
end
return 1
