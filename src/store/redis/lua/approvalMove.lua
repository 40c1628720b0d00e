-- approvalMove: compare-and-set of an approval's status; one decision wins across replicas.
-- KEYS[1] record. ARGV[1] from, ARGV[2] to, ARGV[3] new JSON, ARGV[4] live | lapsed | any.
-- Returns 'ok', the current status, 'expired' (a live move after the expiry) or 'missing'.
--- @include "taskNow"
local record = redis.call('HMGET', KEYS[1], 'status', 'expires')
if not record[1] then return 'missing' end
if record[1] ~= ARGV[1] then return record[1] end
local lapsed = tonumber(record[2]) <= now
if ARGV[4] == 'live' and lapsed then return 'expired' end
if ARGV[4] == 'lapsed' and not lapsed then return record[1] end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'json', ARGV[3])
return 'ok'
