-- ledgerResolve: an admin settles an unknown outcome (or a lease of an `unknown` tool past its end):
-- 'ran' records the result given, so the next identical call replays it; 'not_ran' removes the entry,
-- so the next one runs. Nothing else is touched: a running lease or a record answers 0.
-- KEYS[1] entry hash; ARGV[1] ran | not_ran, ARGV[2] ToolEffect JSON, ARGV[3] ttl ms or '' = never
-- Returns {tool, scope} when settled, else an empty list
--- @include "nowMs"
local entry = redis.call('HMGET', KEYS[1], 'state', 'until', 'on_lost', 'tool', 'scope')
local lapsed = entry[1] == 'lease' and entry[3] == 'unknown' and tonumber(entry[2] or 0) <= nowMs()
if entry[1] ~= 'unknown' and not lapsed then
  return {}
end
if ARGV[1] == 'not_ran' then
  redis.call('DEL', KEYS[1])
  return {entry[4], entry[5]}
end
redis.call('HSET', KEYS[1], 'state', 'done', 'token', '', 'effect', ARGV[2])
if ARGV[3] == '' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return {entry[4], entry[5]}
