-- recordDefinitions: keeps tool definitions by hash for provenance, all in one step. A hash already
-- kept is left alone (its first-served time stays); a new one is also added to its name's versions.
-- Safe to repeat. Nothing expires. JSON is built in Node, never read here.
-- KEYS[1] hash -> record JSON, KEYS[2..n] one versions sorted set per record (one hash tag)
-- ARGV[1] first-served time (ms), then per record: hash, record JSON
for i = 2, #KEYS do
  local hash = ARGV[2 * i - 2]
  if redis.call('HSETNX', KEYS[1], hash, ARGV[2 * i - 1]) == 1 then
    redis.call('ZADD', KEYS[i], 'NX', ARGV[1], hash)
  end
end
return 1
