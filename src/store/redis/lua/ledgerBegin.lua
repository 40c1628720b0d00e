-- ledgerBegin: take the in-progress lease of an effect, or report what holds the key, in one step.
-- Safe to repeat: a begin re-sent with the same token finds its own lease and answers "run" again.
-- KEYS[1] entry hash (fields state, token, params, tool, scope, effect)
-- ARGV[1] token, ARGV[2] params hash, ARGV[3] lease ms, ARGV[4] '1' = the payload must match,
-- ARGV[5] tool, ARGV[6] scope
-- Returns {'run'} | {'replay', effect JSON} | {'in_progress', lease ms left} | {'mismatch'}
local entry = redis.call('HMGET', KEYS[1], 'state', 'token', 'params', 'effect')
if not entry[1] then
  redis.call('HSET', KEYS[1], 'state', 'lease', 'token', ARGV[1], 'params', ARGV[2], 'tool', ARGV[5], 'scope', ARGV[6])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'run'}
end
if ARGV[4] == '1' and entry[3] ~= ARGV[2] then
  return {'mismatch'}
end
if entry[1] == 'done' then
  return {'replay', entry[4]}
end
if entry[2] == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'run'}
end
return {'in_progress', redis.call('PTTL', KEYS[1])}
