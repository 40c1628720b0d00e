-- credentialPut: writes one credential record over the version it was read at (compare-and-set),
-- so two replicas refreshing the same token cannot both win. The record is stored as
-- "<version>|<json>"; the JSON is built in Node and never read here. Answers the new version, or
-- -1 when the version did not match (nothing written). Safe to repeat: a repeat answers -1.
-- KEYS[1] owner's records hash
-- ARGV[1] credential name, ARGV[2] expected version ('' = any), ARGV[3] record JSON
local current = redis.call('HGET', KEYS[1], ARGV[1])
local version = 0
if current then version = tonumber(string.match(current, '^(%d+)|')) end
if ARGV[2] ~= '' and tonumber(ARGV[2]) ~= version then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], (version + 1) .. '|' .. ARGV[3])
return version + 1
