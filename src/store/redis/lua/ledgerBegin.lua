-- ledgerBegin: take the in-progress lease of an effect, or report what holds the key, in one step.
-- Safe to repeat: a begin re-sent with the same token finds its own lease and answers "run" again.
-- A lease ends at `until` (server clock). A `rerun` lease is a key that lapses with it; an `unknown`
-- lease stays after it, so that a lapse is seen: the first begin (or sweep) to see it turns the entry
-- into an unknown outcome, which every identical call then answers until an admin resolves it.
-- KEYS[1] entry hash (fields state, token, params, tool, scope, effect, until, on_lost, effect_id, started)
-- ARGV[1] token, ARGV[2] params hash, ARGV[3] lease ms, ARGV[4] '1' = the payload must match,
-- ARGV[5] tool, ARGV[6] scope, ARGV[7] on_lost (rerun | unknown), ARGV[8] effect id,
-- ARGV[9] how long an unknown lease's entry is kept, in ms ('' = until resolved), ARGV[10] the ledger key;
-- KEYS[2] (optional, single Redis only) the index of unknown leases for the shared sweep: an unknown
-- lease taken here is added to it in the same step (on Cluster it is another slot, written beside)
-- Returns {'run'} | {'replay', effect JSON} | {'in_progress', lease ms left} | {'mismatch'}
--   | {'unknown', effect id, started ms, tool, scope, '1' when this begin found the lapse}
--- @include "nowMs"
local now = nowMs()
local entry = redis.call('HMGET', KEYS[1], 'state', 'token', 'params', 'effect', 'until', 'on_lost', 'effect_id', 'started', 'tool', 'scope')
local function hold(fresh)
  if fresh then
    redis.call('HSET', KEYS[1], 'state', 'lease', 'token', ARGV[1], 'params', ARGV[2], 'tool', ARGV[5], 'scope', ARGV[6],
      'on_lost', ARGV[7], 'effect_id', ARGV[8], 'started', now)
  end
  redis.call('HSET', KEYS[1], 'until', now + tonumber(ARGV[3]))
  if fresh and ARGV[7] == 'unknown' and #KEYS == 2 then
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[10])
  end
  if ARGV[7] ~= 'unknown' then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
  elseif ARGV[9] == '' then
    redis.call('PERSIST', KEYS[1])
  else
    redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[9]), tonumber(ARGV[3])))
  end
  return {'run'}
end
if not entry[1] then
  return hold(true)
end
if ARGV[4] == '1' and entry[3] ~= ARGV[2] then
  return {'mismatch'}
end
if entry[1] == 'done' then
  return {'replay', entry[4]}
end
if entry[1] == 'unknown' then
  return {'unknown', entry[7], entry[8], entry[9], entry[10], '0'}
end
if entry[2] == ARGV[1] then
  return hold(false)
end
local left = tonumber(entry[5] or 0) - now
if left > 0 then
  return {'in_progress', left}
end
if entry[6] == 'unknown' then
  redis.call('HSET', KEYS[1], 'state', 'unknown')
  return {'unknown', entry[7], entry[8], entry[9], entry[10], '1'}
end
redis.call('DEL', KEYS[1])
return hold(true)
