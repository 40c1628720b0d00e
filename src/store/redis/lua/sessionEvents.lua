-- sessionEvents: a page of a session's event log by sequence number, stable while older events are
-- trimmed away (the counter numbers every event ever appended; the list keeps the newest).
-- KEYS[1] event list, KEYS[2] event counter; ARGV[1] after (seq), ARGV[2] limit, ARGV[3] '1' for
-- the newest `limit` events instead (ARGV[1] ignored): one snapshot, one round trip. Read-only.
local total = tonumber(redis.call('GET', KEYS[2]) or '0')
local len = redis.call('LLEN', KEYS[1])
local first = total - len + 1
local after = tonumber(ARGV[1])
if ARGV[3] == '1' then after = math.max(0, total - tonumber(ARGV[2])) end
local start = math.max(after + 1, first)
local index = start - first
if index >= len then return { total, start, {} } end
return { total, start, redis.call('LRANGE', KEYS[1], index, index + tonumber(ARGV[2]) - 1) }
