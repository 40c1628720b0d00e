-- ledgerForget: remove one entry (record or lease) and say which tool and scope indexed it.
-- KEYS[1] entry hash. Returns {tool, scope}, or an empty list when there was no entry
local entry = redis.call('HMGET', KEYS[1], 'tool', 'scope')
if redis.call('DEL', KEYS[1]) == 0 then
  return {}
end
return {entry[1], entry[2]}
