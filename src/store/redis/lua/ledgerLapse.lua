-- ledgerLapse: the shared sweep's look at one lease of an `unknown` tool. A lease past its end
-- without a record becomes an unknown outcome here or in ledgerBegin, whichever sees it first:
-- exactly one of them answers '1' for it. Safe to repeat.
-- KEYS[1] entry hash. Returns {'unknown', effect id, started ms, tool, scope} when this call turned it,
-- {'lease', until ms} while it is held, {'gone'} otherwise (recorded, already unknown, or no entry)
--- @include "nowMs"
local entry = redis.call('HMGET', KEYS[1], 'state', 'until', 'on_lost', 'effect_id', 'started', 'tool', 'scope')
if entry[1] ~= 'lease' then
  return {'gone'}
end
if tonumber(entry[2] or 0) > nowMs() then
  return {'lease', entry[2]}
end
if entry[3] ~= 'unknown' then
  return {'gone'}
end
redis.call('HSET', KEYS[1], 'state', 'unknown')
return {'unknown', entry[4], entry[5], entry[6], entry[7]}
